"""elsai as a CDK construct library: ``pip install "elsai[cdk]"``, then ``DurableAgentService``.

One construct per concern (storage, functions, state machine, API), wired by
``DurableAgentService``. Names are loaded on first use, so ``python -m elsai.cdk.lock`` and the
bundler's helpers do not pay for (or need) aws-cdk-lib; ``import elsai`` never imports this.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elsai.cdk.config import ElsaiConfig
    from elsai.cdk.nag import enable_nag
    from elsai.cdk.service import DurableAgentService

__all__ = ["DurableAgentService", "ElsaiConfig", "enable_nag"]

_WHERE = {
    "DurableAgentService": "elsai.cdk.service",
    "ElsaiConfig": "elsai.cdk.config",
    "enable_nag": "elsai.cdk.nag",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'elsai.cdk' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
