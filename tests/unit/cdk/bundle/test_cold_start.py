"""The built asset's init phase under CPython 3.12: the X-Ray SDK loads only with tracing on.

Behaviour, not time: which modules a fresh `import agent_handler` leaves in sys.modules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.cold_start import measure

pytestmark = pytest.mark.slow


def test_tracing_off_the_asset_never_imports_the_xray_sdk(python312: str, asset_dir: Path) -> None:
    off = measure(asset_dir, python=python312, runs=1)
    on = measure(
        asset_dir,
        python=python312,
        runs=1,
        env={"POWERTOOLS_TRACE_DISABLED": "false", "LAMBDA_TASK_ROOT": str(asset_dir)},
    )
    assert (off["xray"], on["xray"]) == (False, True)
    # X-Ray's bytecode ships although init does not load it: a traced start stays compiled.
    pyc = asset_dir / "aws_xray_sdk" / "core" / "__pycache__" / "recorder.cpython-312.pyc"
    assert pyc.exists()
