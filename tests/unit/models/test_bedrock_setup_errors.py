"""Bedrock without credentials says what to do; retries are logged; one region rule."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from elsai import Agent
from elsai.errors import ModelConfigurationError, ModelError
from elsai.models import BedrockModel
from elsai.models.base import ModelRequest
from tests.unit.models.test_bedrock import (
    BASIC,
    USER,
    client_error,
    collect,
    make_model,
    text_stream,
)


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials and no region anywhere boto3 looks."""
    for var in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_no_credentials_is_one_clear_configuration_error(no_aws: None) -> None:
    with pytest.raises(ModelConfigurationError) as caught:
        Agent()("hello")
    message = str(caught.value)
    assert "us.anthropic.claude-sonnet-4-6" in message and "'us-west-2'" in message
    assert "aws configure" in message and "ScriptedModel" in message
    assert isinstance(caught.value, ModelError)
    assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_region_rule(no_aws: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert BedrockModel().region_name == "us-west-2"
    (tmp_path / "config").write_text("[default]\nregion = eu-central-1\n")
    assert BedrockModel().region_name == "eu-central-1"  # the profile's region
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-southeast-2")
    assert BedrockModel().region_name == "ap-southeast-2"
    monkeypatch.setenv("AWS_REGION", "us-east-2")
    assert BedrockModel().region_name == "us-east-2"
    assert BedrockModel(region_name="eu-west-1").region_name == "eu-west-1"


def test_each_retry_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    model, stubber, _ = make_model(max_retries=3)
    client_error(stubber, "ThrottlingException", "Too many requests", 429)
    client_error(stubber, "ServiceUnavailableException", "try later", 503)
    stubber.add_response("converse_stream", {"stream": text_stream("ok")}, BASIC)
    with caplog.at_level(logging.WARNING, logger="elsai.models"):
        collect(model, ModelRequest(messages=[USER]))
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert len(retries) == 2
    assert "throttled" in retries[0] and "retry 1 of 3" in retries[0]
    assert "transient" in retries[1] and "retry 2 of 3" in retries[1]
