"""Tenant isolation end to end: the real agent handler under moto with IAM enforcement on."""

from __future__ import annotations

import os
import sys
from pathlib import Path

LAMBDAS = Path(__file__).resolve().parents[2] / "lambdas"
if str(LAMBDAS) not in sys.path:  # the handlers are top-level modules in the Lambda bundle
    sys.path.insert(0, str(LAMBDAS))
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
