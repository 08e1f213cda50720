"""Branch names: what the kit refuses wherever it makes or enters a branch.

The engine reads a spec as a branch name before it reads it as a commit id prefix, so a
branch named like a commit id (4 or more hex digits) would hide that commit from every
read by id (:func:`refuse_id_like`). A new branch's name is the caller's, or the first
free of a default, ``default-2``, ... (:func:`new_name`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ._values import check_text
from .errors import InvalidInputError

_ID_LIKE = re.compile(r"[0-9a-fA-F]{4,}")
"""What a commit id or id prefix could be: the engine takes 4 to 64 lowercase hex digits;
any case and any length from 4 is refused, so a later engine reading more cannot turn a
branch made today into a shadow."""


def could_be_id(name: str) -> bool:
    """Whether a commit id or id prefix could be ``name``."""
    return _ID_LIKE.fullmatch(name) is not None


def refuse_id_like(name: str) -> None:
    """:class:`InvalidInputError` if a commit id or id prefix could mean the branch ``name``."""
    if could_be_id(name):
        raise InvalidInputError(
            f"the branch name {name!r} could mean a commit id (it is 4 or more hex digits): "
            "such a branch would hide the commit from every read by id. Add a character "
            "that is not a hex digit (for example 'try-' before it)"
        )


def new_name(name: str | None, default: str, taken: Collection[str]) -> str:
    """The name a new branch gets: ``name`` (refused if taken), else the first free of
    ``default``, ``default-2``, ``default-3``, ..."""
    if name is None:
        base = _checked(default)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        return name
    name = _checked(name)
    if name in taken:
        raise InvalidInputError(f"branch {name!r} exists already")
    return name


def _checked(name: object) -> str:
    text = check_text(name, "the branch name")
    if not text.strip():
        raise InvalidInputError("the branch name must not be blank")
    refuse_id_like(text)
    return text
