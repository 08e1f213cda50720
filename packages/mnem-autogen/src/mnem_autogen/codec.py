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
import binascii
import copy
import warnings
from typing import Any

import mnem
from autogen_core import Image
from autogen_core.memory import MemoryContent, MemoryMimeType

from mnem_adapter_kit import MAX_NESTING, check_text, from_json_text, kept_copy, to_json_text
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.numbered import FORMAT, New, record


def encode(item: object) -> dict[str, Any]:
    """The node content that stores ``item``."""
    if not isinstance(item, MemoryContent):
        raise InvalidInputError(f"add() takes a MemoryContent, not {type(item).__name__}")
    value = item.content
    kind: str
    payload: str
    if isinstance(value, str):
        kind, payload = "str", check_text(value, "the content")
    elif isinstance(value, bytes):
        kind, payload = "bytes", base64.b64encode(value).decode("ascii")
    elif isinstance(value, dict):
        kind, payload = "dict", to_json_text(value, "the content", tagged=True)
    elif isinstance(value, Image):
        kind, payload = "image", value.to_base64()
    else:
        raise InvalidInputError(
            f"the content is a {type(value).__name__}; MemoryContent holds str, bytes, dict or Image"
        )
    mime = item.mime_type
    if isinstance(mime, MemoryMimeType):
        mime_text, mime_is_enum = mime.value, True
    else:
        mime_text, mime_is_enum = check_text(mime, "the mime_type"), False
    metadata = item.metadata
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidInputError(f"metadata must be a dict or None, not {type(metadata).__name__}")
    metadata_text = (
        None if metadata is None else to_json_text(metadata, "the metadata", tagged=True)
    )
    return record(kind, payload, mime_text, mime_is_enum=mime_is_enum, metadata=metadata_text)


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
    """The ``MemoryContent`` that :func:`encode` stored; ``None`` if ``stored`` is not an item.

    An item nested deeper than :data:`MAX_NESTING` levels (only versions before the
    limit wrote them) is not one either: reads leave it out, with a warning, rather
    than fail. A damaged item is a ``ValueError``.
    """
    if not (isinstance(stored, dict) and stored.get("format") == FORMAT):
        return None
    kind = stored["kind"]
    payload = stored["content"]
    metadata_text = stored.get("metadata")
    value: str | bytes | dict[str, Any] | Image
    try:
        if kind == "str":
            value = payload
        elif kind == "bytes":
            value = base64.b64decode(payload, validate=True)
        elif kind == "dict":
            value = from_json_text(payload, tagged=True)
        elif kind == "image":
            value = Image.from_base64(payload)
        else:
            raise ValueError(f"unknown content kind {kind!r}")
        metadata = None if metadata_text is None else from_json_text(metadata_text, tagged=True)
    except InvalidInputError:
        warnings.warn(
            f"a stored memory item nests deeper than {MAX_NESTING} levels, the limit for "
            "new items; reads leave it out (it stays in the store's history)",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    except (ValueError, binascii.Error) as exc:
        raise ValueError(f"a stored memory item is unreadable: {exc}") from exc
    mime: MemoryMimeType | str = stored["mime_type"]
    if stored.get("mime_is_enum"):
        mime = MemoryMimeType(mime)
    return _construct(value, mime, metadata)


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
