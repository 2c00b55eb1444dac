"""A user's project, as a user has it: an example copied outside the checkout, a clean environment."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def copy_example(name: str, parent: Path) -> Path:
    """`examples/<name>` copied to `parent/<name>`, without build output."""
    target = parent / name
    shutil.copytree(
        EXAMPLES / name, target, ignore=shutil.ignore_patterns("build", "cdk.out", "__pycache__")
    )
    return target


def user_env(copy: Path) -> dict[str, str]:
    """This machine's environment without AWS, moto, elsai or Python path settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "MOTO_", "ELSAI_", "PYTHON"))
    }
    env.update({"NO_COLOR": "1", "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
                "XDG_CACHE_HOME": str(copy.parent / "cache")})  # fmt: skip
    return env
