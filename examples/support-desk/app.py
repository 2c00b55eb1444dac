"""The support-desk CDK app: one DurableAgentService running a Graph (``cdk synth``)."""

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
    stack = cdk.Stack(app, "SupportDesk", description="support-desk: triage -> resolver graph")
    DurableAgentService(
        stack,
        "Desk",
        code=HERE / "support_desk",
        factory="support_desk.main:build",
        model_id=app.node.try_get_context("modelId") or "us.anthropic.claude-sonnet-4-6",
    )
    enable_nag(app)  # cdk-nag AwsSolutions: any unacknowledged finding fails the synth
    return app


def cdk_json_context() -> dict[str, Any]:
    """cdk.json's context block (for callers that are not the cdk CLI)."""
    return dict(json.loads((HERE / "cdk.json").read_text())["context"])


if __name__ == "__main__":
    build_app().synth()
