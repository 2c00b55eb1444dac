"""The hello-service CDK app: one DurableAgentService running hello_agents (``cdk synth``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk

from elsai.cdk import DurableAgentService, enable_nag

HERE = Path(__file__).resolve().parent


def build_app(context: dict[str, Any] | None = None, outdir: str | None = None) -> cdk.App:
    """The app; ``context`` stands in for what the cdk CLI passes (tests give cdk.json's)."""
    app = cdk.App(context=context, outdir=outdir)
    stack = cdk.Stack(app, "HelloService", description="hello-service: one durable agent")
    DurableAgentService(
        stack,
        "Agents",
        code=HERE / "hello_agents",
        factory="hello_agents.main:build",
        model_id=app.node.try_get_context("modelId") or "us.anthropic.claude-sonnet-4-6",
    )
    enable_nag(app)  # cdk-nag AwsSolutions: any unacknowledged finding fails the synth
    return app


def cdk_json_context() -> dict[str, Any]:
    """cdk.json's context block (for callers that are not the cdk CLI)."""
    return dict(json.loads((HERE / "cdk.json").read_text())["context"])


if __name__ == "__main__":
    build_app().synth()
