"""Looks at a store from outside the adapter: its commit log and a raw engine handle."""

from __future__ import annotations

import hashlib
import math
import time
from pathlib import Path

import mnem
from langchain_core.embeddings import Embeddings

from mnem_adapter_kit import open_store
from mnem_adapter_kit.errors import NoStoreError


def commits(path: Path) -> list[mnem.Commit]:
    """The first-parent chain from HEAD, newest first (none if no store was ever made)."""
    client = open_store(path, author="test", create=False)
    try:
        with client.session() as engine:
            return engine.log(first_parent=True)
    except NoStoreError:
        return []
    finally:
        client.close()


def open_raw(path: Path, wait: float = 5.0) -> mnem.Store:
    """A raw engine handle, once this process's adapters have let the store's lock go.

    The caller must ``del`` it when done: the engine releases the lock only then.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            return mnem.open(path)
        except mnem.StoreIoError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class WordEmbeddings(Embeddings):
    """A deterministic embedder for tests: hashed word and character-trigram counts.

    Texts sharing words score high against each other; no model, no network.
    Counts the texts it was asked to embed, so tests can see what was (re)embedded.
    """

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims
        self.embedded: list[str] = []
        self.queries: list[str] = []

    def vector(self, text: str) -> list[float]:
        counts = [0.0] * self.dims
        lowered = text.lower()
        grams = lowered.split() + [lowered[i : i + 3] for i in range(max(0, len(lowered) - 2))]
        for gram in grams:
            digest = hashlib.blake2b(gram.encode(), digest_size=8).digest()
            counts[int.from_bytes(digest[:4], "big") % self.dims] += 1.0 if gram.isalpha() else 0.5
        return counts

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return [self.vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self.vector(text)


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else 0.0
