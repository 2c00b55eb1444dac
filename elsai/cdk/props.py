"""The small pieces of DurableAgentService: its props resolved, its names, its outputs."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import aws_cdk as cdk
from constructs import Construct

from elsai.cdk.config import ElsaiConfig

if TYPE_CHECKING:
    from elsai.cdk.service import DurableAgentService


def add_outputs(service: DurableAgentService, prefix: str) -> None:
    """CfnOutputs with fixed ids (``<prefix>ApiUrl`` ...): what ``elsai jobs --stack-name`` reads."""
    for key, value in (
        ("SessionsBucketName", service.bucket.bucket_name),
        ("StateMachineArn", service.state_machine.state_machine_arn),
        ("ApiUrl", service.api_url),
        ("AgentFunctionName", service.agent_function.function_name),
    ):
        cdk.CfnOutput(service, key, value=value).override_logical_id(prefix + key)


def resolve_config(
    scope: Construct, config: ElsaiConfig | None, factory: str | None, model_id: str | None
) -> ElsaiConfig:
    """The given config (else the context's), with the ``factory``/``model_id`` shortcuts applied."""
    base = config or ElsaiConfig.from_node(scope.node)
    if factory:
        base = dataclasses.replace(base, agent_factory=factory)
    if model_id:
        base = dataclasses.replace(base, model_id=model_id)
    if not base.agent_factory:
        raise ValueError(
            "DurableAgentService needs the agent factory: factory='my_agents.main:build' "
            "(or config.agent_factory, or the agentFactory context value)"
        )
    return base


def code_paths(code: Path | Sequence[Path] | None) -> tuple[Path, ...]:
    """The user's code paths, absolute; a missing one is an error at synth, not a bare bundle."""
    if code is None:
        return ()
    paths = (code,) if isinstance(code, str | Path) else tuple(code)
    resolved = tuple(Path(p).resolve() for p in paths)
    for path in resolved:
        if not path.exists():
            raise ValueError(f"DurableAgentService code={path} does not exist")
    return resolved


def state_machine_name(stack: cdk.Stack, construct_id: str) -> str:
    """``<stack>-jobs`` for the stack's ``Default`` service, ``<stack>-<id>-jobs`` otherwise."""
    if construct_id == "Default":
        return f"{stack.stack_name}-jobs"
    return f"{stack.stack_name}-{construct_id}-jobs"
