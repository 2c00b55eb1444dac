"""The default model, and what `from elsai import Agent, tool` pulls in."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from elsai import Agent

FORBIDDEN_ON_IMPORT = ("aws_cdk", "moto", "anthropic", "openai", "botocore", "boto3")


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No region, no credentials, no config files, and no way to open a socket."""
    for name in (
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "missing-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "missing-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("constructing an agent must not touch the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_agent_without_a_model_uses_bedrock_sonnet_in_us_west_2(no_aws: None) -> None:
    from elsai.models import BedrockModel
    from elsai.models.bedrock import DEFAULT_MODEL_ID

    agent = Agent()

    assert isinstance(agent.model, BedrockModel)
    assert agent.model.model_id == DEFAULT_MODEL_ID
    assert agent.model.region_name == "us-west-2"
    assert agent.model.config["model_id"] == DEFAULT_MODEL_ID
    assert agent.model.config["region_name"] == "us-west-2"
    assert "sonnet-4-6" in DEFAULT_MODEL_ID
    # A US cross-Region inference profile: callable from us-west-2.
    assert DEFAULT_MODEL_ID.startswith("us.")


def test_default_model_is_overridable_per_agent(no_aws: None) -> None:
    from elsai.models import BedrockModel

    custom = BedrockModel(model_id="eu.anthropic.claude-sonnet-4-6", region_name="eu-west-1")
    agent = Agent(model=custom)
    assert agent.model is custom
    assert (agent.model.model_id, agent.model.region_name) == (
        "eu.anthropic.claude-sonnet-4-6",
        "eu-west-1",
    )
    assert Agent().model is not Agent().model  # each agent gets its own default


def imported_modules(code: str) -> tuple[set[str], dict[str, int]]:
    """Modules imported by `code` in a fresh interpreter, and their cumulative µs."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    names: set[str] = set()
    cumulative: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if match:
            name = match.group(4)
            names.add(name)
            cumulative[name] = int(match.group(2))
    return names, cumulative


def test_public_import_is_lean() -> None:
    names, cumulative = imported_modules("from elsai import Agent, tool")
    assert "elsai" in names
    heavy = sorted(n for n in names if n.split(".")[0] in FORBIDDEN_ON_IMPORT)
    assert heavy == [], f"`from elsai import Agent, tool` imported {heavy}"
    assert "pydantic" in names  # allowed: tool schemas are built with it
    total_ms = cumulative["elsai"] / 1000
    print(f"\n`from elsai import Agent, tool` import time: {total_ms:.0f} ms")


def test_models_package_imports_providers_lazily() -> None:
    names, _ = imported_modules("import elsai.models; from elsai.models import ScriptedModel")
    assert not any(n.split(".")[0] in ("boto3", "botocore") for n in names)
    assert "elsai.models.bedrock" not in names
    names, _ = imported_modules("from elsai.models import BedrockModel")
    assert "elsai.models.bedrock" in names and "botocore" in names
