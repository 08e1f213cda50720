"""The adapter contract as executable tests (needs the ``testing`` extra)."""
