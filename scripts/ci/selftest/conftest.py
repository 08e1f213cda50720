"""Self-checks of the CI scripts: each breaks what a check guards and shows the check fails."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]
