"""Where each namespace's items live: one engine store, or one per namespace prefix.

The engine stores the whole state with every commit, so a write costs what its
store holds. With ``shard_depth=k``, every distinct namespace prefix of ``k``
labels (a namespace shorter than that counts whole) gets an engine store of its
own in a folder under the store path: a put into ``("memories", user_id, ...)``
with ``k=2`` costs what that user's items cost. Each shard folder holds a
``shard.json`` naming its prefix, written before its store, so the shards can
be found again. A shard's store whose manifest is missing, unreadable or names
another prefix than its folder's is ``corrupt_store`` naming the file, never a
shard silently left out; reads open only shards whose store exists.

A shard creator killed between making the shard's store and its first commit
leaves an empty store (3.7 MB). Discovery removes such a store once it is
:data:`UNBORN_AGE` old, keeping its folder and manifest: the state a shard is in
before its store is made, which the next put into it leaves.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mnem_adapter_kit import Store, is_store, store_dir_name, store_root
from mnem_adapter_kit.errors import CorruptStoreError, InvalidInputError

from .namespaces import Namespace
from .sidecar import Sidecar
from .ttl import Expiry
from .view import ItemView

if TYPE_CHECKING:
    from .vectors import ShardVectors

SHARD_FILE = "shard.json"
UNBORN_AGE = 600.0
"""Seconds after which a shard store with no commit is taken for a killed creator's."""


@dataclass
class Shard:
    """One engine store and the items it holds, for the namespaces starting with ``key``.

    Beside it, its sidecar (opened only if needed), what the shard's items' TTL
    reads are known to be, and its vectors once a search or put needs them.
    """

    key: Namespace
    store: Store
    view: ItemView
    sidecar: Sidecar
    expiry: Expiry = field(init=False)
    vectors: ShardVectors | None = None

    def __post_init__(self) -> None:
        self.expiry = Expiry(self.sidecar)


class Shards:
    """The shards of one ``MnemosyneStore``; all of them are one shard without a depth."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        depth: int | None,
        connect: Callable[[str], Store],
    ) -> None:
        self.root = store_root(path)
        self.depth = depth
        self._connect = connect
        self._open: dict[Namespace, Shard] = {}
        self._known_folders: dict[str, Namespace] = {}
        _check_layout(self.root, depth)
        if depth is None:
            self._open[()] = Shard((), connect(self.root), ItemView(), Sidecar(self.root))

    @property
    def sharded(self) -> bool:
        return self.depth is not None

    def key_of(self, namespace: Namespace) -> Namespace:
        return () if self.depth is None else namespace[: self.depth]

    def for_write(self, namespace: Namespace) -> Shard:
        """The shard for ``namespace``, made (folder and manifest) if it is new."""
        key = self.key_of(namespace)
        shard = self._open.get(key)
        if shard is None:
            folder = os.path.join(self.root, store_dir_name(_encode(key)))
            _write_manifest(folder, key)
            _check_manifest(folder)
            shard = self._shard(key, folder)
        return shard

    def for_namespace(self, namespace: Namespace) -> Shard | None:
        """The shard for ``namespace`` if it exists."""
        key = self.key_of(namespace)
        if key not in self._open:
            self.discover()
        return self._open.get(key)

    def for_prefix(self, prefix: Namespace) -> list[Shard]:
        """Every existing shard that can hold a namespace starting with ``prefix``."""
        if self.depth is None:
            return self.all()
        if len(prefix) >= self.depth:
            shard = self.for_namespace(prefix)
            return [] if shard is None else [shard]
        self.discover()
        return [shard for key, shard in sorted(self._open.items()) if key[: len(prefix)] == prefix]

    def all(self) -> list[Shard]:
        """Every shard, in prefix order."""
        self.discover()
        return [shard for _, shard in sorted(self._open.items())]

    def discover(self) -> None:
        """Open the shards other objects or processes made since the last look."""
        if self.depth is None:
            return
        with contextlib.suppress(FileNotFoundError), os.scandir(self.root) as entries:
            for entry in entries:
                if entry.name in self._known_folders or not entry.is_dir():
                    continue
                if not is_store(entry.path):
                    continue  # not a shard, or one whose creator has not made its store yet
                key = _check_manifest(entry.path)
                if key in self._open:
                    self._known_folders[entry.name] = key
                    continue
                store = self._connect(entry.path)
                if store.remove_if_unborn(UNBORN_AGE):
                    store.close()
                    continue
                self._shard(key, entry.path, store)

    def close(self) -> None:
        for shard in self._open.values():
            shard.store.close()
            shard.view.forget()
            shard.sidecar.close()

    def _shard(self, key: Namespace, folder: str, store: Store | None = None) -> Shard:
        store = self._connect(folder) if store is None else store
        shard = self._open[key] = Shard(key, store, ItemView(), Sidecar(folder))
        self._known_folders[os.path.basename(folder)] = key
        return shard


def _check_layout(root: str, depth: int | None) -> None:
    """Refuse a sharded store's root opened without its depth, and a plain store with one."""
    if depth is not None and is_store(root):
        raise InvalidInputError(
            f"{root} is a plain store, not a sharded one: open it without shard_depth"
        )
    if depth is None and not is_store(root):
        with contextlib.suppress(OSError), os.scandir(root) as entries:
            for entry in entries:
                prefix = _read_manifest(entry.path) if entry.is_dir() else None
                if prefix is not None:
                    raise InvalidInputError(
                        f"{root} is the root of a store sharded by namespace prefixes of "
                        f"{len(prefix)} label(s): open it with shard_depth={len(prefix)}"
                    )


def _encode(key: Namespace) -> str:
    return json.dumps(list(key), ensure_ascii=False)


def _write_manifest(folder: str, key: Namespace) -> None:
    """Name the shard's prefix in its folder, atomically, before its store exists."""
    path = os.path.join(folder, SHARD_FILE)
    if os.path.exists(path):
        return
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".shard-", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as manifest:
        manifest.write(json.dumps({"namespace_prefix": list(key)}, ensure_ascii=False))
    os.replace(temporary, path)


def _check_manifest(folder: str) -> Namespace:
    """The prefix of the shard in ``folder``; ``corrupt_store`` if its manifest cannot say it."""
    key = _read_manifest(folder)
    path = os.path.join(folder, SHARD_FILE)
    if key is None:
        problem = "is missing" if not os.path.lexists(path) else "cannot be read"
    elif os.path.basename(folder) != store_dir_name(_encode(key)):
        problem = f"names the prefix {list(key)!r}, which is another folder's"
    else:
        return key
    raise CorruptStoreError(
        f"the shard manifest {path} {problem}, so the shard's items would be left out of "
        "every read",
        store_path=folder,
        hint="The store beside it is intact: restore the manifest from a backup (it holds "
        '{"namespace_prefix": [...]}, the labels of the prefix whose items that store holds).',
    )


def _read_manifest(folder: str) -> Namespace | None:
    try:
        with open(os.path.join(folder, SHARD_FILE), encoding="utf-8") as manifest:
            labels = json.load(manifest)["namespace_prefix"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        return None
    return tuple(labels)
