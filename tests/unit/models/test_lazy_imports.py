"""`import elsai` stays lean: the optional SDKs (and their HTTP stacks) load only on demand."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SDK_ROOTS = ("anthropic", "openai", "httpx", "httpx2", "httpcore", "httpcore2")


def loaded_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nimport json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return {name.split(".")[0] for name in json.loads(out.stdout.strip().splitlines()[-1])}


def test_import_elsai_does_not_import_the_sdks() -> None:
    roots = loaded_after("import elsai\nimport elsai.models\nfrom elsai import Agent, tool")
    assert roots.isdisjoint(SDK_ROOTS), sorted(roots.intersection(SDK_ROOTS))


@pytest.mark.parametrize(
    ("name", "sdk"), [("AnthropicModel", "anthropic"), ("OpenAIModel", "openai")]
)
def test_provider_classes_resolve_lazily(name: str, sdk: str) -> None:
    # Naming the class loads its module, but the SDK itself waits for construction.
    roots = loaded_after(f"from elsai.models import {name}")
    assert sdk not in roots
    roots = loaded_after(f"from elsai.models import {name}\n{name}()")
    assert sdk in roots
