"""The history view: ``mnem-history``, which shows why an agent believes what it does.

It reads each node through the readers of :mod:`mnem_adapter_kit.formats`. Importing
this package stays cheap: it exports nothing, and the command lives in :mod:`._cli`.
"""

__all__: list[str] = []
