"""The history view: ``mnem-history``, which shows why an agent believes what it does.

A :class:`Reading` is one stored node as its adapter's users know it; the
readers of the adapters' formats are in :mod:`mnem_adapter_kit.formats`.
Importing this package stays cheap. The command lives in :mod:`._cli`.
"""

from ._readers import FOREIGN, Reader, Reading

__all__ = ["FOREIGN", "Reader", "Reading"]
