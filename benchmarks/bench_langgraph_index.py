"""LangGraph semantic search: ``MnemosyneStore(index=...)`` against LangGraph's own stores.

    uv run python benchmarks/bench_langgraph_index.py            # full run -> results/langgraph_index.json
    uv run python benchmarks/bench_langgraph_index.py --smoke    # tiny sizes, seconds

Self-contained (no shared harness). Workloads, all with one deterministic embedder
(hashed words, ``DIMS`` dimensions, no model), so the stores differ only in what
they do around it:

* ``libraries``: the brute-force search candidates for the sidecar, over random
  vectors: numpy (a matrix-vector product), sqlite-vec's ``vec_distance_cosine``
  over a table, sqlite-vec's ``vec0`` KNN table; and loading the vectors from a
  SQLite file into numpy.
* ``search``: ``search(prefix, query=...)`` (and with a filter) at 1,000 and 10,000
  items on ``MnemosyneStore``, ``InMemoryStore`` and a file-backed ``SqliteStore``,
  timed in the same rounds (each round calls every subject once, in rotating order);
  medians and ratios.
* ``rebuild``: at the largest size, the first search after the sidecar is deleted
  (every item embedded again), the first search of a new process-like store object
  with the sidecar intact (vectors loaded), and the embedder's own time for the
  same texts; sidecar bytes per item.

``SqliteStore(index=...)`` loads the sqlite-vec extension, which this Python's
``sqlite3`` may not allow (pyenv builds without it); the script then gives
``SqliteStore`` a ``pysqlite3`` connection, which does.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from mnem_langgraph import MnemosyneStore
from mnem_langgraph.sidecar import FILE, FOLDER

DIMS = 384
NAMESPACES = 10
HERE = Path(__file__).resolve().parent
WORDS = (
    "tea",
    "coffee",
    "water",
    "juice",
    "morning",
    "night",
    "green",
    "black",
    "sweet",
    "bitter",
    "porto",
    "lisbon",
    "london",
    "paris",
    "chess",
    "music",
    "piano",
    "guitar",
    "books",
    "films",
    "running",
    "swimming",
    "cycling",
    "hiking",
    "dog",
    "cat",
    "bird",
    "fish",
    "python",
    "rust",
    "go",
    "java",
    "work",
    "home",
    "school",
    "family",
    "friend",
    "meeting",
    "travel",
    "holiday",
    "summer",
    "winter",
    "apple",
    "pear",
    "bread",
    "cheese",
    "rice",
    "pasta",
    "soup",
    "salad",
    "early",
    "late",
    "quiet",
    "loud",
    "red",
    "blue",
    "small",
    "large",
)
QUERIES = (
    "what does the user drink in the morning",
    "where does the user live",
    "hobbies with music",
    "programming languages at work",
    "favourite food for dinner",
)


class HashedWords(Embeddings):
    """Deterministic and cheap: each word adds a fixed pseudo-random vector."""

    def __init__(self, dims: int = DIMS) -> None:
        self.dims = dims
        self._cache: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        vector = self._cache.get(word)
        if vector is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            vector = np.random.default_rng(seed).standard_normal(self.dims).astype(np.float32)
            self._cache[word] = vector
        return vector

    def _one(self, text: str) -> list[float]:
        total = np.zeros(self.dims, dtype=np.float32)
        for word in text.lower().split():
            total += self._word(word)
        return total.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} bench_langgraph_index] {message}", file=sys.stderr)


def items(n: int) -> list[PutOp]:
    rng = random.Random(7)
    ops = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(8))
        value = {"text": f"the user {text}", "kind": ("fact", "preference")[i % 2], "n": i}
        ops.append(PutOp(("users", f"u{i % NAMESPACES}", "memories"), f"m{i}", value))
    return ops


def sqlite_connection(path: Path) -> Any:
    """A connection that may load extensions: this Python's sqlite3, else pysqlite3's."""
    conn: Any = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    if hasattr(conn, "enable_load_extension"):
        return conn
    conn.close()
    import pysqlite3.dbapi2 as pysqlite3  # type: ignore[import-not-found]

    return pysqlite3.connect(str(path), check_same_thread=False, isolation_level=None)


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter_ns()
    call()
    return (time.perf_counter_ns() - start) / 1e6


def rounds(subjects: dict[str, Callable[[int], Any]], reps: int) -> dict[str, dict[str, float]]:
    """Every subject once per round, in rotating order; two untimed warm-up rounds."""
    names = list(subjects)
    samples: dict[str, list[float]] = {name: [] for name in names}
    gc.disable()
    try:
        for rep in range(reps + 2):
            shift = rep % len(names)
            for name in names[shift:] + names[:shift]:
                elapsed = timed(lambda name=name, rep=rep: subjects[name](rep))
                if rep >= 2:
                    samples[name].append(elapsed)
            gc.collect()
    finally:
        gc.enable()
    return {
        name: {
            "median_ms": round(statistics.median(values), 4),
            "p90_ms": round(sorted(values)[int(0.9 * (len(values) - 1))], 4),
            "mean_ms": round(statistics.fmean(values), 4),
        }
        for name, values in samples.items()
    }


def libraries(sizes: Sequence[int], reps: int, work: Path) -> list[dict[str, Any]]:
    found = []
    for n in sizes:
        timing = _libraries_at(n, reps, work)
        found.append({"n": n, "dims": DIMS, "top_k": 10, "subjects": timing})
        progress(
            f"libraries n={n}: " + ", ".join(f"{k} {v['median_ms']} ms" for k, v in timing.items())
        )
    return found


def _libraries_at(n: int, reps: int, work: Path) -> dict[str, dict[str, float]]:
    import sqlite_vec  # type: ignore[import-untyped]

    rng = np.random.default_rng(n)
    matrix = rng.standard_normal((n, DIMS)).astype(np.float32)
    normalised = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    queries = rng.standard_normal((reps + 2, DIMS)).astype(np.float32)
    path = work / f"vectors-{n}.sqlite3"
    conn = sqlite_connection(path)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.execute("CREATE TABLE v (hash BLOB PRIMARY KEY, vector BLOB) WITHOUT ROWID")
    conn.execute(f"CREATE VIRTUAL TABLE v0 USING vec0(e float[{DIMS}] distance_metric=cosine)")
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO v VALUES (?, ?)",
        ((i.to_bytes(16, "big"), matrix[i].tobytes()) for i in range(n)),
    )
    conn.executemany(
        "INSERT INTO v0 (rowid, e) VALUES (?, ?)", ((i, matrix[i].tobytes()) for i in range(n))
    )
    conn.execute("COMMIT")

    def numpy_top(rep: int) -> Any:
        query = queries[rep] / np.linalg.norm(queries[rep])
        scores = normalised @ query
        top = np.argpartition(-scores, 10)[:10]
        return top[np.argsort(-scores[top])]

    def scalar_top(rep: int) -> Any:
        return conn.execute(
            "SELECT hash, vec_distance_cosine(vector, ?) AS d FROM v ORDER BY d LIMIT 10",
            (queries[rep].tobytes(),),
        ).fetchall()

    def vec0_top(rep: int) -> Any:
        return conn.execute(
            "SELECT rowid, distance FROM v0 WHERE e MATCH ? AND k = 10", (queries[rep].tobytes(),)
        ).fetchall()

    def load(rep: int) -> Any:
        rows = conn.execute("SELECT hash, vector FROM v").fetchall()
        loaded = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, DIMS)
        return loaded / np.linalg.norm(loaded, axis=1, keepdims=True)

    timing = rounds(
        {
            "numpy brute force": numpy_top,
            "sqlite-vec vec_distance_cosine scan": scalar_top,
            "sqlite-vec vec0 KNN": vec0_top,
        },
        reps,
    )
    timing["load SQLite blobs into numpy"] = rounds({"load": load}, max(3, reps // 5))["load"]
    conn.close()
    return timing


def build(n: int, work: Path, embedder: HashedWords) -> dict[str, BaseStore]:
    index = {"dims": DIMS, "embed": embedder, "fields": ["text"]}
    ops = items(n)
    mnemosyne = MnemosyneStore(work / f"mnemosyne-{n}", index=index)  # type: ignore[arg-type]
    memory = InMemoryStore(index=index)  # type: ignore[arg-type]
    sqlite_store = SqliteStore(
        sqlite_connection(work / f"sqlite-{n}.db"),
        index={**index, "text_fields": ["text"]},  # type: ignore[typeddict-unknown-key]
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
    return stores


def search(sizes: Sequence[int], reps: int, work: Path) -> list[dict[str, Any]]:
    embedder = HashedWords()
    found = []
    for n in sizes:
        stores = build(n, work, embedder)
        for label, kwargs in (
            ("query", {}),
            ("query + filter", {"filter": {"kind": "preference"}}),
        ):

            def subject(store: BaseStore, kwargs: dict[str, Any] = kwargs) -> Callable[[int], Any]:
                def call(rep: int) -> Any:
                    query = QUERIES[rep % len(QUERIES)]
                    return store.search(("users",), query=query, limit=10, **kwargs)

                return call

            for store in stores.values():  # every store answers
                assert store.search(("users",), query=QUERIES[0], limit=1, **kwargs)
            timing = rounds({name: subject(store) for name, store in stores.items()}, reps)
            reference = timing["SqliteStore"]["median_ms"]
            found.append(
                {
                    "n": n,
                    "search": label,
                    "subjects": timing,
                    "mnemosyne_vs_sqlite": round(
                        timing["MnemosyneStore"]["median_ms"] / reference, 3
                    ),
                    "mnemosyne_vs_inmemory": round(
                        timing["MnemosyneStore"]["median_ms"]
                        / timing["InMemoryStore"]["median_ms"],
                        3,
                    ),
                }
            )
            progress(
                f"search n={n} {label}: "
                + ", ".join(f"{k} {v['median_ms']} ms" for k, v in timing.items())
            )
        for store in stores.values():
            if isinstance(store, MnemosyneStore):
                store.close()
            elif isinstance(store, SqliteStore):
                store.conn.close()
    return found


def rebuild(n: int, work: Path) -> dict[str, Any]:
    embedder = HashedWords()
    index = {"dims": DIMS, "embed": embedder, "fields": ["text"]}
    path = work / f"mnemosyne-{n}"
    texts = [op.value["text"] for op in items(n) if op.value is not None]
    started = time.perf_counter()
    embedder.embed_documents(texts)
    embed_s = time.perf_counter() - started

    with MnemosyneStore(path, index=index) as store:  # type: ignore[arg-type]
        store.search(("users",), query=QUERIES[0])
    sidecar = path / FOLDER / FILE
    conn = sqlite3.connect(sidecar)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = sum(p.stat().st_size for p in (path / FOLDER).iterdir())

    shutil.rmtree(path / FOLDER)
    with MnemosyneStore(path, index=index) as store:  # type: ignore[arg-type]
        rebuild_s = timed(lambda: store.search(("users",), query=QUERIES[0])) / 1000
    with MnemosyneStore(path, index=index) as store:  # type: ignore[arg-type]
        load_s = timed(lambda: store.search(("users",), query=QUERIES[0])) / 1000
    with MnemosyneStore(path) as plain:
        cold_plain_s = timed(lambda: plain.search(("users",), limit=10)) / 1000
    result = {
        "n": n,
        "dims": DIMS,
        "first_search_after_sidecar_deleted_s": round(rebuild_s, 3),
        "first_search_new_store_object_sidecar_intact_s": round(load_s, 3),
        "first_plain_search_new_store_object_s": round(cold_plain_s, 3),
        "index_rebuild_s": round(rebuild_s - cold_plain_s, 3),
        "index_load_s": round(load_s - cold_plain_s, 3),
        "embedder_alone_for_the_same_texts_s": round(embed_s, 3),
        "index_rebuild_beyond_embedding_s": round(rebuild_s - cold_plain_s - embed_s, 3),
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


def machine() -> dict[str, Any]:
    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE, check=False
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {
            name: version(name)
            for name in (
                "mnem-agents",
                "mnem-langgraph",
                "langgraph",
                "langgraph-checkpoint",
                "langgraph-checkpoint-sqlite",
                "numpy",
                "sqlite-vec",
            )
        },
        "commit": commit,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes; figures meaningless")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--workdir", type=Path, default=HERE / ".work")
    args = parser.parse_args()
    sizes, reps = ((50, 200), 3) if args.smoke else ((1_000, 10_000), 40)
    args.workdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="langgraph-index-", dir=args.workdir))
    before = machine()
    try:
        result = {
            "smoke": args.smoke,
            "embedder": f"hashed words, {DIMS} dims (deterministic, no model)",
            "machine": before,
            "workloads": {
                "libraries": libraries(sizes, reps, work),
                "search": search(sizes, reps, work),
                "rebuild": rebuild(sizes[-1], work),
            },
        }
        result["machine"]["load_average_after"] = list(os.getloadavg())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / "langgraph_index.json"
    target.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    progress(f"wrote {target}")


if __name__ == "__main__":
    main()
