"""The Lambda handlers live in lambdas/ (a flat directory, as in the bundle)."""

from __future__ import annotations

import sys
from pathlib import Path

LAMBDAS = Path(__file__).resolve().parents[2] / "lambdas"
if str(LAMBDAS) not in sys.path:
    sys.path.insert(0, str(LAMBDAS))
