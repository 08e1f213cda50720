"""Looks at a store from outside the adapter: its commit log and a raw engine handle."""

from __future__ import annotations

import time
from pathlib import Path

import mnem

from mnem_adapter_kit import NoStoreError, attach


def commits(path: Path) -> list[mnem.Commit]:
    """The first-parent chain from HEAD, newest first (none if no store was ever made)."""
    client = attach(path, create=False)
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
