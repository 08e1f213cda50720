"""Data kept beside an engine store, never in it: embedding vectors and items' last reads.

One SQLite file per engine store (per shard), ``.mnem-langgraph/sidecar.sqlite3``
next to ``.mnem``, opened only by a store that needs it (an index, or items
with a TTL). It holds:

* ``vectors``: embeddings keyed by a hash of the exact text embedded. Derived
  data: losing it costs a re-embedding, never an answer, because every item's
  texts follow from its committed content.
* ``reads``: when a read last refreshed an item's TTL. Not derivable from the
  store; see :mod:`.ttl` for what happens when it is lost.
* ``meta``: when this file was created (the TTL grace point) and which embedder
  made the vectors (a different one discards them).

Several processes may share the file (SQLite's own locking, WAL). A file that
was deleted or replaced is noticed at the next use and reopened; one that is
not a database is moved aside and started afresh.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from . import clock

FOLDER = ".mnem-langgraph"
FILE = "sidecar.sqlite3"
SCHEMA = 1
CHUNK = 500
"""Most keys looked up in one statement (well under SQLite's variable limit)."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    # A rowid table: vectors are too big for WITHOUT ROWID pages (they would overflow).
    "CREATE TABLE IF NOT EXISTS vectors (hash BLOB PRIMARY KEY, vector BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS reads (node TEXT PRIMARY KEY, at_ms INTEGER NOT NULL) WITHOUT ROWID",
)


class Sidecar:
    """The sidecar file of one engine store, opened on first use."""

    def __init__(self, root: str) -> None:
        self.folder = os.path.join(root, FOLDER)
        self.path = os.path.join(self.folder, FILE)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._pid = 0
        self._created_ms = 0
        self.generation = 0
        """Moves every time a new file is opened, so callers can drop what they derived."""

    # --- lifetime -------------------------------------------------------------

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
            self._identity = None

    def open(self) -> None:
        """Open the file now (creating it if need be); a no-op while it is open and unchanged."""
        with self._lock:
            self._connection()

    @property
    def created_ms(self) -> int:
        """When the current file was created (opening it, or creating it, if need be)."""
        with self._lock:
            self._connection()
            return self._created_ms

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _connection(self) -> sqlite3.Connection:
        """The open file, reopened if it was deleted or replaced, or if this process forked."""
        identity = _identity(self.path)
        if self._conn is not None and self._pid == os.getpid() and identity == self._identity:
            return self._conn
        if self._pid == os.getpid() and self._conn is not None:
            self._conn.close()
        # A connection inherited across fork() is abandoned, never closed or used.
        self._conn = None
        try:
            conn, created = self._open()
        except sqlite3.DatabaseError:
            self._set_aside()
            conn, created = self._open()
        self._conn, self._created_ms, self._pid = conn, created, os.getpid()
        self._identity = _identity(self.path)
        self.generation += 1
        return conn

    def _open(self) -> tuple[sqlite3.Connection, int]:
        os.makedirs(self.folder, exist_ok=True)
        conn = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(
                "INSERT OR IGNORE INTO meta VALUES ('created_ms', ?), ('schema', ?)",
                (str(clock.now_ms()), str(SCHEMA)),
            )
            (created,) = conn.execute("SELECT value FROM meta WHERE name = 'created_ms'").fetchone()
            conn.execute("COMMIT")
            return conn, int(created)
        except BaseException:
            conn.close()
            raise

    def _set_aside(self) -> None:
        """Move an unreadable file out of the way (kept for inspection), so a new one can start."""
        stamp = clock.now_ms()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.replace(self.path + suffix, f"{self.path}.unreadable-{stamp}{suffix}")

    # --- meta -----------------------------------------------------------------

    def meta(self, name: str) -> str | None:
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT value FROM meta WHERE name = ?", (name,))
                .fetchone()
            )
            return None if row is None else str(row[0])

    def adopt_embedder(self, fingerprint: str) -> bool:
        """Make ``fingerprint`` the vectors' embedder; True if vectors of another were discarded."""
        with self._transaction() as conn:
            row = conn.execute("SELECT value FROM meta WHERE name = 'embedder'").fetchone()
            if row is not None and row[0] == fingerprint:
                return False
            conn.execute("DELETE FROM vectors")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (fingerprint,))
            return row is not None

    # --- vectors --------------------------------------------------------------

    def vectors(self, hashes: Iterable[bytes]) -> dict[bytes, bytes]:
        """The stored vectors among ``hashes``."""
        found: dict[bytes, bytes] = {}
        wanted = list(hashes)
        with self._lock:
            conn = self._connection()
            for start in range(0, len(wanted), CHUNK):
                chunk = wanted[start : start + CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT hash, vector FROM vectors WHERE hash IN ({marks})", chunk
                )
                found.update(rows)
        return found

    def add_vectors(self, vectors: Iterable[tuple[bytes, bytes]]) -> None:
        with self._transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", vectors)

    def clear_vectors(self) -> None:
        with self._transaction() as conn:
            conn.execute("DELETE FROM vectors")

    def keep_vectors(self, hashes: set[bytes]) -> int:
        """Delete every vector whose hash is not in ``hashes``; how many were deleted."""
        with self._transaction() as conn:
            stored = [row[0] for row in conn.execute("SELECT hash FROM vectors")]
            unused = [(h,) for h in stored if h not in hashes]
            conn.executemany("DELETE FROM vectors WHERE hash = ?", unused)
        return len(unused)

    def vector_count(self) -> int:
        with self._lock:
            (count,) = self._connection().execute("SELECT count(*) FROM vectors").fetchone()
            return int(count)

    # --- reads (TTL refreshes) ------------------------------------------------

    def reads(self, nodes: Iterable[str]) -> dict[str, int]:
        """When each of ``nodes`` was last read with a TTL refresh, for those ever read."""
        found: dict[str, int] = {}
        wanted = list(nodes)
        with self._lock:
            conn = self._connection()
            for start in range(0, len(wanted), CHUNK):
                chunk = wanted[start : start + CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(f"SELECT node, at_ms FROM reads WHERE node IN ({marks})", chunk)
                found.update(rows)
        return found

    def record_reads(self, nodes: Iterable[str], at_ms: int) -> None:
        """Note that ``nodes`` were read at ``at_ms`` (a later time never moves back)."""
        with self._transaction() as conn:
            conn.executemany(
                "INSERT INTO reads VALUES (?, ?) "
                "ON CONFLICT(node) DO UPDATE SET at_ms = max(at_ms, excluded.at_ms)",
                [(node, at_ms) for node in nodes],
            )

    def forget_reads(self, nodes: Iterable[str]) -> None:
        with self._transaction() as conn:
            conn.executemany("DELETE FROM reads WHERE node = ?", [(node,) for node in nodes])


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino
