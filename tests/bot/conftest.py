"""Make `bot` resolve to the project package, not the `tests/bot` directory (rootdir-less pytest runs)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
if getattr(sys.modules.get("bot"), "__file__", "") is None:  # a namespace package picked up from tests/
    for name in [n for n in sys.modules if n == "bot" or n.startswith("bot.")]:
        del sys.modules[name]
