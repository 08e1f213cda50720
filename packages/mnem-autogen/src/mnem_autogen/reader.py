"""How ``mnem-history`` shows this adapter's nodes: each memory's items as text, by number.

Registered in the ``mnem_adapter_kit.readers`` entry-point group. The layout and
its reading are the kit's (:mod:`mnem_adapter_kit.numbered`), shared with
``mnem-agent-framework``, so reading a store does not load AutoGen.
"""

from mnem_adapter_kit.numbered import FORMAT, read

__all__ = ["FORMAT", "read"]
