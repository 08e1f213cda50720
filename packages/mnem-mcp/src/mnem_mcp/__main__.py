"""``python -m mnem_mcp``: the same as the ``mnem-mcp`` command."""

from .cli import main

if __name__ == "__main__":
    main()
