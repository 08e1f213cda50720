"""``MemoryContent`` to a node's JSON content and back, exactly.

Every field a caller gave comes back equal: ``str``, ``bytes`` (any bytes, as
base64), ``dict`` (kept as JSON text, so key order and every number survive),
``Image`` (as PNG base64), the MIME type as the enum member or the string it was
given as, and the metadata verbatim. Values that cannot come back equal, or that
nest deeper than :data:`~mnem_adapter_kit.payloads.MAX_NESTING` levels, are
refused with :class:`~mnem_adapter_kit.InvalidInputError` before anything is
staged.

Reading never recurses in Python per level of a value: one deep item must not
make a whole memory unreadable.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import warnings
from typing import Any

from autogen_core import Image
from autogen_core.memory import MemoryContent, MemoryMimeType

from mnem_adapter_kit import InvalidInputError, from_json_text, to_json_text
from mnem_adapter_kit.payloads import MAX_NESTING, check_text, nests_deeper_than_allowed

FORMAT = "mnem-autogen/1"


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
        kind, payload = "dict", to_json_text(value, "the content")
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
    return {
        "format": FORMAT,
        "kind": kind,
        "content": payload,
        "mime_type": mime_text,
        "mime_is_enum": mime_is_enum,
        "metadata": None if metadata is None else to_json_text(metadata, "the metadata"),
    }


def is_item(content: object) -> bool:
    """Whether a node's content was written by :func:`encode` and can be read back.

    An item nested deeper than :data:`MAX_NESTING` levels (only versions before the
    limit wrote them) is not: reads leave it out, with a warning, rather than fail.
    """
    if not (isinstance(content, dict) and content.get("format") == FORMAT):
        return False
    texts = [content.get("metadata")]
    if content.get("kind") == "dict":
        texts.append(content.get("content"))
    if any(isinstance(text, str) and nests_deeper_than_allowed(text) for text in texts):
        warnings.warn(
            f"a stored memory item nests deeper than {MAX_NESTING} levels, the limit for "
            "new items; reads leave it out (it stays in the store's history)",
            RuntimeWarning,
            stacklevel=2,
        )
        return False
    return True


def fresh(item: MemoryContent) -> MemoryContent:
    """A copy of a decoded item that shares nothing mutable with it.

    Dicts are copied through JSON (exact for what :func:`decode` returns) rather than
    ``deepcopy``, which recurses in Python two frames per level.
    """
    content = item.content
    if isinstance(content, dict):
        content = _copy_json(content)
    elif isinstance(content, Image):
        content = copy.deepcopy(content)
    metadata = None if item.metadata is None else _copy_json(item.metadata)
    return MemoryContent.model_construct(
        content=content, mime_type=item.mime_type, metadata=metadata
    )


def _copy_json(value: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(value, ensure_ascii=False))
    return copied


def decode(stored: dict[str, Any]) -> MemoryContent:
    """A fresh ``MemoryContent`` equal to the one :func:`encode` stored."""
    kind = stored["kind"]
    payload = stored["content"]
    value: str | bytes | dict[str, Any] | Image
    try:
        if kind == "str":
            value = payload
        elif kind == "bytes":
            value = base64.b64decode(payload, validate=True)
        elif kind == "dict":
            value = from_json_text(payload)
        elif kind == "image":
            value = Image.from_base64(payload)
        else:
            raise ValueError(f"unknown content kind {kind!r}")
    except (ValueError, binascii.Error) as exc:
        raise ValueError(f"a stored memory item is unreadable: {exc}") from exc
    mime: MemoryMimeType | str = stored["mime_type"]
    if stored.get("mime_is_enum"):
        mime = MemoryMimeType(mime)
    metadata_text = stored.get("metadata")
    metadata = None if metadata_text is None else from_json_text(metadata_text)
    return MemoryContent.model_construct(content=value, mime_type=mime, metadata=metadata)
