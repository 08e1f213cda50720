"""The history view: ``mnem-history``, which shows why an agent believes what it does.

Adapters register a reader (:data:`ENTRY_POINT_GROUP`) that turns one
of their nodes into a :class:`Reading`; importing this package stays cheap, so
a reader module costs its adapter nothing. The command lives in :mod:`._cli`.
"""

from ._readers import ENTRY_POINT_GROUP, FOREIGN, Reader, Reading

__all__ = ["ENTRY_POINT_GROUP", "FOREIGN", "Reader", "Reading"]
