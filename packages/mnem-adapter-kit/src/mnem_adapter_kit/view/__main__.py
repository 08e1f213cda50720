"""``python -m mnem_adapter_kit.view``: the ``mnem-history`` command."""

import sys

from ._cli import main

sys.exit(main())
