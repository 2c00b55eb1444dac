"""Closing the local runtime gives back moto's process-wide config (its Step Functions engine too)."""

from __future__ import annotations

from pathlib import Path

import pytest
from moto.core.config import default_user_config

from elsai.local import LocalRuntime

HERE = Path(__file__).parent


def test_a_failed_cleanup_still_restores_moto_config(monkeypatch: pytest.MonkeyPatch) -> None:
    before = dict(default_user_config["stepfunctions"])  # whatever earlier tests left
    rt = LocalRuntime(project=HERE.parents[2], agent_factory="serverless_agents:build_agent",
                      pythonpath=(str(HERE),), preloaded=False)  # fmt: skip
    rt.start()
    try:
        assert default_user_config["stepfunctions"] == {"execute_state_machine": True}

        real_cleanup = rt._cleanup

        def broken_cleanup() -> None:  # cleans up (the next runtime here needs a clean moto)
            real_cleanup()
            raise RuntimeError("stop_execution raced the engine")

        monkeypatch.setattr(rt, "_cleanup", broken_cleanup)
    finally:
        with pytest.warns(UserWarning, match="_cleanup failed: RuntimeError"):
            rt.close()
    assert default_user_config["stepfunctions"] == before
