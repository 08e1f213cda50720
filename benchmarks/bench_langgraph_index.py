"""LangGraph semantic search: ``MnemosyneStore(index=...)`` against LangGraph's own stores.

    uv run python benchmarks/bench_langgraph_index.py [--smoke]    # -> results/langgraph_index.json

One deterministic embedder (hashed words, ``DIMS`` dimensions, no model), so the stores
differ only in what they do around it:

* ``libraries``: brute-force search candidates for the sidecar over random vectors (numpy,
  sqlite-vec's ``vec_distance_cosine`` scan and ``vec0`` KNN table), and loading the
  vectors from SQLite into numpy;
* ``search``: ``search(prefix, query=...)``, also with a filter, at each size on
  ``MnemosyneStore``, ``InMemoryStore`` and a file-backed ``SqliteStore``, interleaved;
  medians and ratios;
* ``rebuild``: at the largest size, the first search after the sidecar is deleted, the
  first search of a new store object with the sidecar intact, and the embedder's own time
  for the same texts; sidecar bytes per item.

``SqliteStore(index=...)`` loads the sqlite-vec extension, which this Python's ``sqlite3``
may not allow (pyenv builds); ``SqliteStore`` then gets a ``pysqlite3`` connection.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import platform
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from harness import clock_sync, git, interleave, parser, progress, sync_step, versions, write_json
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from mnem_langgraph import MnemosyneStore
from mnem_langgraph.sidecar import FILE, FOLDER

DIMS = 384
VOCABULARY = """tea coffee water juice morning night green black sweet bitter porto lisbon london
paris chess music piano guitar books films running swimming cycling hiking dog cat bird fish
python rust go java work home school family friend meeting travel holiday summer winter apple
pear bread cheese rice pasta soup salad early late quiet loud red blue small large"""
WORDS = VOCABULARY.split()
QUERIES = (
    "what does the user drink in the morning",
    "where does the user live",
    "hobbies with music",
    "programming languages at work",
    "favourite food for dinner",
)
PACKAGES = (
    "mnem-agents",
    "mnem-langgraph",
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "numpy",
    "sqlite-vec",
)


class HashedWords(Embeddings):
    """Deterministic and cheap: each word adds a fixed pseudo-random vector."""

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        if word not in self._cache:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            self._cache[word] = np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)
        return self._cache[word]

    def embed_query(self, text: str) -> list[float]:
        total = np.zeros(DIMS, dtype=np.float32)
        for word in text.lower().split():
            total += self._word(word)
        return total.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]


def items(n: int) -> list[PutOp]:
    rng = random.Random(7)
    ops = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(8))
        value = {"text": f"the user {text}", "kind": ("fact", "preference")[i % 2], "n": i}
        ops.append(PutOp(("users", f"u{i % 10}", "memories"), f"m{i}", value))
    return ops


def sqlite_connection(path: Path) -> Any:
    """A connection that may load extensions: this Python's sqlite3, else pysqlite3's."""
    conn: Any = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    if hasattr(conn, "enable_load_extension"):
        return conn
    conn.close()
    import pysqlite3.dbapi2 as pysqlite3  # type: ignore[import-not-found]

    return pysqlite3.connect(str(path), check_same_thread=False, isolation_level=None)


def rounds(subjects: dict[str, Callable[[int], Any]], reps: int) -> dict[str, dict[str, float]]:
    """Each subject's median, p90 and mean ms over ``reps`` interleaved rounds, the garbage
    collected between rounds."""
    steps = {name: sync_step(call) for name, call in subjects.items()}
    stats = {}
    for name, samples in asyncio.run(interleave(steps, reps, collect=True)).items():
        ms = sorted(ns / 1e6 for ns in samples)
        stats[name] = {
            "median_ms": round(statistics.median(ms), 4),
            "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 4),
            "mean_ms": round(statistics.fmean(ms), 4),
        }
    return stats


def medians(timing: dict[str, dict[str, float]]) -> str:
    return ", ".join(f"{k} {v['median_ms']} ms" for k, v in timing.items())


def libraries(n: int, reps: int, work: Path) -> dict[str, Any]:
    import sqlite_vec  # type: ignore[import-untyped]

    rng = np.random.default_rng(n)
    matrix = rng.standard_normal((n, DIMS)).astype(np.float32)
    normalised = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    queries = rng.standard_normal((reps + 2, DIMS)).astype(np.float32)
    conn = sqlite_connection(work / f"vectors-{n}.sqlite3")
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.execute("CREATE TABLE v (hash BLOB PRIMARY KEY, vector BLOB) WITHOUT ROWID")
    conn.execute(f"CREATE VIRTUAL TABLE v0 USING vec0(e float[{DIMS}] distance_metric=cosine)")
    conn.execute("BEGIN")
    rows = [(i.to_bytes(16, "big"), matrix[i].tobytes()) for i in range(n)]
    conn.executemany("INSERT INTO v VALUES (?, ?)", rows)
    conn.executemany(
        "INSERT INTO v0 (rowid, e) VALUES (?, ?)", ((i, matrix[i].tobytes()) for i in range(n))
    )
    conn.execute("COMMIT")

    def numpy_top(rep: int) -> Any:
        scores = normalised @ (queries[rep] / np.linalg.norm(queries[rep]))
        top = np.argpartition(-scores, 10)[:10]
        return top[np.argsort(-scores[top])]

    def scan_top(rep: int) -> Any:
        sql = "SELECT hash, vec_distance_cosine(vector, ?) AS d FROM v ORDER BY d LIMIT 10"
        return conn.execute(sql, (queries[rep].tobytes(),)).fetchall()

    def vec0_top(rep: int) -> Any:
        sql = "SELECT rowid, distance FROM v0 WHERE e MATCH ? AND k = 10"
        return conn.execute(sql, (queries[rep].tobytes(),)).fetchall()

    def load(rep: int) -> Any:
        rows = conn.execute("SELECT hash, vector FROM v").fetchall()
        loaded = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, DIMS)
        return loaded / np.linalg.norm(loaded, axis=1, keepdims=True)

    timing = rounds(
        {
            "numpy brute force": numpy_top,
            "sqlite-vec vec_distance_cosine scan": scan_top,
            "sqlite-vec vec0 KNN": vec0_top,
        },
        reps,
    )
    timing["load SQLite blobs into numpy"] = rounds({"load": load}, max(3, reps // 5))["load"]
    conn.close()
    progress(f"libraries n={n}: {medians(timing)}")
    return {"n": n, "dims": DIMS, "top_k": 10, "subjects": timing}


def search(n: int, reps: int, work: Path, embedder: HashedWords) -> list[dict[str, Any]]:
    index: Any = {"dims": DIMS, "embed": embedder, "fields": ["text"]}
    ops = items(n)
    mnemosyne = MnemosyneStore(work / f"mnemosyne-{n}", index=index)
    memory = InMemoryStore(index=index)
    sqlite_store = SqliteStore(
        sqlite_connection(work / f"sqlite-{n}.db"), index={**index, "text_fields": ["text"]}
    )
    sqlite_store.setup()
    stores: dict[str, BaseStore] = {
        "MnemosyneStore": mnemosyne,
        "InMemoryStore": memory,
        "SqliteStore": sqlite_store,
    }
    for name, store in stores.items():
        started = time.perf_counter()
        for start in range(0, n, 1000):
            store.batch(ops[start : start + 1000])
        progress(f"filled {name} with {n} items in {time.perf_counter() - started:.1f} s")
    found = []
    for label, kwargs in (("query", {}), ("query + filter", {"filter": {"kind": "preference"}})):

        def subject(store: BaseStore, kwargs: dict[str, Any] = kwargs) -> Callable[[int], Any]:
            def call(rep: int) -> Any:
                query = QUERIES[rep % len(QUERIES)]
                return store.search(("users",), query=query, limit=10, **kwargs)

            return call

        for store in stores.values():  # every store answers
            assert store.search(("users",), query=QUERIES[0], limit=1, **kwargs)
        timing = rounds({name: subject(store) for name, store in stores.items()}, reps)
        median = {name: found["median_ms"] for name, found in timing.items()}
        found.append(
            {
                "n": n,
                "search": label,
                "subjects": timing,
                "mnemosyne_vs_sqlite": round(median["MnemosyneStore"] / median["SqliteStore"], 3),
                "mnemosyne_vs_inmemory": round(
                    median["MnemosyneStore"] / median["InMemoryStore"], 3
                ),
            }
        )
        progress(f"search n={n} {label}: {medians(timing)}")
    mnemosyne.close()
    sqlite_store.conn.close()
    return found


def rebuild(n: int, work: Path) -> dict[str, Any]:
    embedder = HashedWords()
    index: Any = {"dims": DIMS, "embed": embedder, "fields": ["text"]}
    path = work / f"mnemosyne-{n}"
    texts = [op.value["text"] for op in items(n) if op.value is not None]
    started = time.perf_counter()
    embedder.embed_documents(texts)
    embed_s = time.perf_counter() - started

    def first_search(indexed: bool) -> float:
        """Seconds of the first search of a new store object."""
        if not indexed:
            with MnemosyneStore(path) as plain:
                return clock_sync(lambda: plain.search(("users",), limit=10)) / 1e9
        with MnemosyneStore(path, index=index) as store:
            return clock_sync(lambda: store.search(("users",), query=QUERIES[0])) / 1e9

    first_search(indexed=True)
    conn = sqlite3.connect(path / FOLDER / FILE)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = sum(p.stat().st_size for p in (path / FOLDER).iterdir())
    shutil.rmtree(path / FOLDER)
    rebuild_s, load_s, plain_s = first_search(True), first_search(True), first_search(False)
    result = {
        "n": n,
        "dims": DIMS,
        "first_search_after_sidecar_deleted_s": round(rebuild_s, 3),
        "first_search_new_store_object_sidecar_intact_s": round(load_s, 3),
        "first_plain_search_new_store_object_s": round(plain_s, 3),
        "index_rebuild_s": round(rebuild_s - plain_s, 3),
        "index_load_s": round(load_s - plain_s, 3),
        "embedder_alone_for_the_same_texts_s": round(embed_s, 3),
        "index_rebuild_beyond_embedding_s": round(rebuild_s - plain_s - embed_s, 3),
        "sidecar_bytes": size,
        "sidecar_bytes_per_item": round(size / n),
        "raw_vector_bytes_per_item": DIMS * 4,
        "note": (
            "a new store object's first search reads and decodes every item from the engine "
            "(first_plain_search); index_rebuild and index_load are what the index adds to it"
        ),
    }
    progress(f"rebuild n={n}: {result}")
    return result


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    sizes, reps = ((50, 200), 3) if args.smoke else ((1_000, 10_000), 40)
    args.workdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="langgraph-index-", dir=args.workdir))
    embedder = HashedWords()  # one for every size, as its word cache fills
    machine = {
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions(PACKAGES),
        "commit": git("rev-parse", "HEAD"),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        result = {
            "smoke": args.smoke,
            "embedder": f"hashed words, {DIMS} dims (deterministic, no model)",
            "machine": machine,
            "workloads": {
                "libraries": [libraries(n, reps, work) for n in sizes],
                "search": [row for n in sizes for row in search(n, reps, work, embedder)],
                "rebuild": rebuild(sizes[-1], work),
            },
        }
        machine["load_average_after"] = list(os.getloadavg())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    progress(f"wrote {write_json(args.out / 'langgraph_index.json', result, indent=2)}")


if __name__ == "__main__":
    main()
