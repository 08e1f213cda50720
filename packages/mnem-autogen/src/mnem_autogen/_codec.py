"""``MemoryContent`` to a node's JSON content and back, exactly, and fresh copies for readers.

Every field a caller gave comes back equal: ``str``, ``bytes`` (any bytes, as
base64), ``dict`` (kept as tagged JSON text, so key order, every number and the
``datetime``, ``date``, ``UUID`` and ``Decimal`` values inside come back as they
were, as ``ListMemory`` keeps them), ``Image`` (as PNG base64), the MIME type as
the enum member or the string it was given as, and the metadata verbatim. Values
that cannot come back equal, or that nest deeper than
:data:`~mnem_adapter_kit.MAX_NESTING` levels, are refused with
:class:`~mnem_adapter_kit.errors.InvalidInputError` before anything is staged; each
is checked and encoded in one walk (:func:`mnem_adapter_kit.to_json_text`).

An item is decoded once, into the memory's mirror; readers get :func:`fresh`
copies that share nothing mutable with it.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

import mnem
from autogen_core import Image
from autogen_core.memory import MemoryContent, MemoryMimeType

from mnem_adapter_kit import kept_copy
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats.autogen import parse, record
from mnem_adapter_kit.numbered import New


def encode(item: object) -> dict[str, Any]:
    """The node content that stores ``item``."""
    if not isinstance(item, MemoryContent):
        raise InvalidInputError(f"add() takes a MemoryContent, not {type(item).__name__}")
    value = item.content
    content: str | bytes | dict[str, Any]
    if isinstance(value, Image):
        kind, content = "image", base64.b64decode(value.to_base64())
    elif isinstance(value, str):
        kind, content = "str", value
    elif isinstance(value, bytes):
        kind, content = "bytes", value
    elif isinstance(value, dict):
        kind, content = "dict", value
    else:
        raise InvalidInputError(
            f"the content is a {type(value).__name__}; MemoryContent holds str, bytes, dict or Image"
        )
    mime = item.mime_type
    metadata = item.metadata
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidInputError(f"metadata must be a dict or None, not {type(metadata).__name__}")
    enum = isinstance(mime, MemoryMimeType)
    text = mime.value if isinstance(mime, MemoryMimeType) else mime
    return record(kind, content, text, mime_is_enum=enum, metadata=metadata)


def new(item: object, provenance: mnem.Provenance | None) -> New:
    """``item`` to add: its record and, when it is plain enough, the copy the memory keeps of it
    (what :func:`decode` would give back), so the record is not decoded again."""
    stored = encode(item)
    assert isinstance(item, MemoryContent)
    state = item.__dict__
    content, metadata, mime = state["content"], state["metadata"], state["mime_type"]
    if isinstance(content, Image) or type(mime) not in (str, MemoryMimeType):
        return New(stored, provenance)  # an image comes back from PNG: decode it
    if isinstance(content, dict):
        content = kept_copy(content)
    elif type(content) not in (str, bytes):
        content = None
    kept_metadata = None if metadata is None else kept_copy(metadata)
    if content is None or (metadata is not None and kept_metadata is None):
        return New(stored, provenance)
    return New(stored, provenance, _construct(content, mime, kept_metadata))


def decode(stored: object) -> MemoryContent | None:
    """The ``MemoryContent`` that :func:`encode` stored; ``None`` if ``stored`` is not an item
    (:func:`~mnem_adapter_kit.formats.autogen.parse` says which are not, and which are damaged).
    """
    found = parse(stored)
    if found is None:
        return None
    content: str | bytes | dict[str, Any] | Image = found.content
    if found.kind == "image":
        assert isinstance(content, bytes)  # the PNG
        content = Image.from_base64(base64.b64encode(content).decode("ascii"))
    mime = MemoryMimeType(found.mime_type) if found.mime_is_enum else found.mime_type
    return _construct(content, mime, found.metadata)


_new = MemoryContent.__new__
_set = object.__setattr__
_PLAIN_MODEL = not MemoryContent.__private_attributes__ and (
    MemoryContent.model_config.get("extra") != "allow"
)
"""Whether a ``MemoryContent`` is its three fields and nothing else (as pydantic's copy sees it)."""


def fresh(item: MemoryContent) -> MemoryContent:
    """A copy of a decoded item that shares nothing mutable with it.

    A new model of the same fields, with the content and metadata dicts copied level by
    level (their leaves are immutable) and an ``Image`` copied deeply.
    """
    state = item.__dict__
    content = state["content"]
    if isinstance(content, dict):
        content = _copy_tree(content)
    elif isinstance(content, Image):
        content = copy.deepcopy(content)
    metadata = state["metadata"]
    if metadata is not None:
        metadata = _copy_tree(metadata)
    return _construct(content, state["mime_type"], metadata)


_FIELDS = ("content", "mime_type", "metadata")


def _construct(
    content: str | bytes | dict[str, Any] | Image, mime: MemoryMimeType | str, metadata: Any
) -> MemoryContent:
    """A ``MemoryContent`` of valid fields, built as pydantic's ``model_construct`` builds it."""
    if not _PLAIN_MODEL:
        return MemoryContent.model_construct(content=content, mime_type=mime, metadata=metadata)
    built = _new(MemoryContent)
    _set(built, "__dict__", {"content": content, "mime_type": mime, "metadata": metadata})
    _set(built, "__pydantic_fields_set__", set(_FIELDS))
    _set(built, "__pydantic_extra__", None)
    _set(built, "__pydantic_private__", None)
    return built


def _copy_tree(value: Any) -> Any:
    """A decoded JSON value with every dict and list copied; the rest is immutable and shared."""
    if isinstance(value, dict):
        return {
            key: _copy_tree(item) if isinstance(item, (dict, list)) else item
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_copy_tree(item) if isinstance(item, (dict, list)) else item for item in value]
    return value
