"""The ``index`` configuration: which texts of an item are embedded, and by what.

The meaning is LangGraph's (``IndexConfig``): ``dims``, ``embed`` (a LangChain
``Embeddings``, a sync or async function, or a provider string) and ``fields``
(paths as ``get_text_at_path`` reads them, ``"$"`` for the whole value); a put's
own ``index`` (a list of paths, or ``False``) replaces ``fields`` for that item.
Each text found is embedded separately and an item scores as its best text.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import ensure_embeddings, get_text_at_path, tokenize_path
from langgraph.store.base.embed import EmbeddingsLambda

from mnem_adapter_kit.errors import InvalidInputError

from .values import IndexChoice, Stored

DISTANCES = ("cosine", "l2", "inner_product")
"""The scores LangGraph's Postgres store gives: cosine similarity, the negated Euclidean
distance, the dot product (higher is closer in all three)."""
KNOWN_KEYS = frozenset(
    {"dims", "embed", "fields", "text_fields", "distance_type", "ann_index_config"}
)

Path = tuple[str, "str | list[str]"]
"""A field path and its tokens (``"$"`` stands for the whole value)."""


@dataclass(frozen=True)
class IndexSettings:
    """A checked ``index`` configuration."""

    dims: int
    embeddings: Embeddings
    fields: tuple[Path, ...]
    fingerprint: str
    """Names the embedder and its size; vectors made by another are not reused."""
    distance: str = "cosine"
    """How a query scores an item: one of :data:`DISTANCES`."""

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> IndexSettings:
        if not isinstance(config, Mapping):
            raise InvalidInputError(f"index must be a mapping (IndexConfig), not {config!r}")
        unknown = sorted(set(config) - KNOWN_KEYS)
        if unknown:
            raise InvalidInputError(f"index has unknown key(s) {unknown}")
        dims = config.get("dims")
        if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
            raise InvalidInputError(f"index['dims'] must be a positive int, not {dims!r}")
        distance = config.get("distance_type", "cosine")
        if distance not in DISTANCES:
            raise InvalidInputError(
                f"index['distance_type'] must be one of {', '.join(DISTANCES)}, not {distance!r}"
            )
        if config.get("embed") is None:
            raise InvalidInputError("index['embed'] is required: Embeddings, a function, or a name")
        embeddings = ensure_embeddings(config["embed"])
        # SqliteStore reads its paths from "text_fields"; the IndexConfig name is "fields".
        fields = config.get("fields", config.get("text_fields")) or ["$"]
        if isinstance(fields, str):
            fields = [fields]
        return cls(
            dims=dims,
            embeddings=embeddings,
            fields=tokenized(_paths(fields, "index['fields']")),
            fingerprint=f"{_embedder_name(config['embed'], embeddings)}/{dims}",
            distance=distance,
        )

    def paths_for(self, choice: IndexChoice) -> tuple[Path, ...]:
        """The paths to embed for an item put with ``index=choice``."""
        if choice is False:
            return ()
        if choice is None:
            return self.fields
        return tokenized(choice)


def tokenized(paths: Sequence[str]) -> tuple[Path, ...]:
    return tuple((path, "$" if path == "$" else tokenize_path(path)) for path in paths)


def _paths(fields: object, where: str) -> tuple[str, ...]:
    if not isinstance(fields, (list, tuple)) or not all(isinstance(f, str) for f in fields):
        raise InvalidInputError(f"{where} must be a list of field paths, not {fields!r}")
    return tuple(fields)


def texts_of(stored: Stored, settings: IndexSettings) -> list[str]:
    """Every text of ``stored`` to embed, in path order (an item may have none)."""
    found: list[str] = []
    for _, tokens in settings.paths_for(stored.index):
        found.extend(get_text_at_path(stored.value, tokens))
    return found


def text_hash(text: str) -> bytes:
    """The key of a text's vector: the same text always has the same vector."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _embedder_name(embed: object, embeddings: Embeddings) -> str:
    """A stable name for the embedder: its class or function, and its model if it names one."""
    if isinstance(embed, str):
        return embed
    target: object = embeddings
    if isinstance(embeddings, EmbeddingsLambda):
        target = getattr(embeddings, "func", None) or getattr(embeddings, "afunc", None)
    kind = target if inspect.isroutine(target) else type(target)
    name = f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', '?')}"
    for attribute in ("model", "model_name", "deployment"):
        model = getattr(target, attribute, None)
        if isinstance(model, str):
            return f"{name}:{model}"
    return name
