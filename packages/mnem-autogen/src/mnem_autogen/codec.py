"""``MemoryContent`` to a node's JSON content and back, exactly.

Every field a caller gave comes back equal: ``str``, ``bytes`` (any bytes, as
base64), ``dict`` (kept as JSON text, so key order and every number survive),
``Image`` (as PNG base64), the MIME type as the enum member or the string it was
given as, and the metadata verbatim. Inside ``dict`` content and metadata,
``datetime`` (naive, or with a ``timezone`` or ``ZoneInfo``), ``date``, ``UUID``
and ``Decimal`` values come back as the same types and values, as ``ListMemory``
keeps them: each is written as a tagged object ``{"$mnem": type, "v": text}``,
and a caller's own keys starting with ``$`` get one more ``$`` so that no
caller's object is ever read as a tag. Values that cannot come back equal, or that
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
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID
from zoneinfo import ZoneInfo

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
        kind, payload = "dict", _to_json(value, "the content")
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
        "metadata": None if metadata is None else _to_json(metadata, "the metadata"),
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
    copied: dict[str, Any] = _untagged(
        json.loads(json.dumps(_tagged(value, "a value"), ensure_ascii=False))
    )
    return copied


TAG = "$mnem"
_TAGGED_TYPES: dict[type, str] = {
    datetime: "datetime",
    date: "date",
    UUID: "uuid",
    Decimal: "decimal",
}


def _to_json(value: dict[str, Any], what: str) -> str:
    """``value`` as exact JSON text, the types JSON lacks tagged (see the module docstring)."""
    return to_json_text(_tagged(value, what), what)


def _escaped(key: Any) -> Any:
    return f"${key}" if isinstance(key, str) and key.startswith("$") else key


def _from_json(text: str) -> Any:
    return _untagged(from_json_text(text))


def _tagged(value: Any, what: str, depth: int = 0) -> Any:
    if isinstance(value, (dict, list)) and depth == MAX_NESTING:
        raise InvalidInputError(
            f"{what} is nested too deeply: lists and objects may nest at most {MAX_NESTING} levels"
        )
    if isinstance(value, dict):
        return {_escaped(key): _tagged(item, what, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_tagged(item, what, depth + 1) for item in value]
    name = _TAGGED_TYPES.get(type(value))
    if name is None:
        return value
    if isinstance(value, datetime):
        return {TAG: name, "v": value.isoformat(), **_zone_of(value, what)}
    return {TAG: name, "v": str(value)}


def _zone_of(moment: datetime, what: str) -> dict[str, Any]:
    zone = moment.tzinfo
    extra: dict[str, Any] = {"fold": moment.fold} if moment.fold else {}
    if zone is None:
        return extra
    if isinstance(zone, timezone):
        name = zone.tzname(None)
        plain = timezone(zone.utcoffset(None)).tzname(None)
        return extra if name == plain or zone is timezone.utc else {**extra, "tzname": name}
    if isinstance(zone, ZoneInfo) and zone.key:
        return {**extra, "zone": zone.key}
    raise InvalidInputError(
        f"{what} holds a datetime with tzinfo {type(zone).__name__}, which cannot come back "
        "exactly; use datetime.timezone or zoneinfo.ZoneInfo"
    )


def _untagged(value: Any) -> Any:
    if isinstance(value, list):
        return [_untagged(item) for item in value]
    if not isinstance(value, dict):
        return value
    if TAG in value:  # a caller's own "$mnem" key was written as "$$mnem"
        return _typed(value)
    return {
        (key[1:] if key.startswith("$$") else key): _untagged(item) for key, item in value.items()
    }


def _typed(tag: dict[str, Any]) -> Any:
    name, text = tag[TAG], tag["v"]
    if name == "datetime":
        moment = datetime.fromisoformat(text)
        if "zone" in tag:
            moment = moment.replace(tzinfo=ZoneInfo(tag["zone"]))
        elif "tzname" in tag and moment.tzinfo is not None:
            offset = moment.utcoffset()
            assert offset is not None
            moment = moment.replace(tzinfo=timezone(offset, tag["tzname"]))
        return moment.replace(fold=tag.get("fold", 0))
    if name == "date":
        return date.fromisoformat(text)
    if name == "uuid":
        return UUID(text)
    if name == "decimal":
        return Decimal(text)
    raise ValueError(f"unknown tagged type {name!r}")


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
            value = _from_json(payload)
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
    metadata = None if metadata_text is None else _from_json(metadata_text)
    return MemoryContent.model_construct(content=value, mime_type=mime, metadata=metadata)
