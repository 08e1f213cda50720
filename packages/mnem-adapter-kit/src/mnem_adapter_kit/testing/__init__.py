"""The adapter contract as executable tests (needs the ``testing`` extra), store helpers,
and :func:`~.observe.observe`, the kit's hook for watching engine calls."""
