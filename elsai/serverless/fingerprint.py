"""A job's build fingerprint: what of the agent a transcript depends on, recorded and compared.

The first slice of a job records the fingerprint of the agent the factory built
(``jobs/<job_id>/fingerprint.json``: elsai version, the agent function version, model id,
system prompt digest, each tool's name and input-schema digest; for a Graph or Swarm job, its
node set and edges, and each node's prompt and tools). Every later slice compares (a Graph's
or Swarm's plan and fold steps, once per batch):

- same function version, different fingerprint: the pinned code did not rebuild the same
  agent (a factory that reads the environment or the clock, a changed model id setting) —
  ``BuildMismatchError`` names what differs, and the state machine does not retry it;
- another function version (the job was upgraded): the differences are recorded with the new
  fingerprint (``changes``), the upgrade's job event says them, and the slice goes on.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from elsai.serverless.contract import service_keys, version_of
from elsai.serverless.errors import BuildMismatchError
from elsai.session.storage.base import StorageBackend

if TYPE_CHECKING:
    from elsai.agent import Agent
    from elsai.multiagent.step_types import OrchestratorSteps


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class BuildFingerprint(BaseModel):
    """What of the agent a stored transcript depends on."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    elsai_version: str = Field(max_length=64)
    code_version: str = Field(max_length=64)
    model_id: str = Field(max_length=512)
    system_prompt: str = Field(max_length=64)  # a digest, never the prompt itself
    tools: dict[str, str] = Field(default_factory=dict, max_length=1000)  # name -> schema digest
    #: A Graph's or Swarm's node names and edges ("a -> b"); empty for a single agent.
    nodes: list[str] = Field(default_factory=list, max_length=1000)
    edges: list[str] = Field(default_factory=list, max_length=10000)
    #: Per node: a digest of its system prompt and model id.
    node_builds: dict[str, str] = Field(default_factory=dict, max_length=1000)


class FingerprintRecord(BaseModel):
    """The stored record: the fingerprint and the changes of the last upgrade."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    job_id: str = Field(min_length=1, max_length=128)
    fingerprint: BuildFingerprint
    changes: list[str] = Field(default_factory=list, max_length=1000)


def fingerprint_of(agent: Agent, agent_function: str | None) -> BuildFingerprint:
    """The fingerprint of a built agent running as ``agent_function`` (a qualified ARN)."""
    import elsai

    tools = {s["name"]: _digest(s.get("inputSchema")) for s in agent.tool_registry.specs()}
    return BuildFingerprint(
        elsai_version=elsai.__version__,
        code_version=version_of(agent_function) if agent_function else "",
        model_id=agent.model.model_id[:512],
        system_prompt=_digest(agent.system_prompt),
        tools=tools,
    )


def steps_fingerprint(steps: OrchestratorSteps, agent_function: str | None) -> BuildFingerprint:
    """The fingerprint of a Graph's or Swarm's steps: its shape and every node agent's build.

    Tools are keyed ``node.tool``; the model id is the orchestrator kind, and each node's own
    prompt and model id are digested per node (``node_builds``).
    """
    nodes, edges = steps.shape()
    prompts: dict[str, str] = {}
    tools: dict[str, str] = {}
    for name in nodes:
        agent = steps.node_agent(name)
        one = fingerprint_of(agent, agent_function)
        prompts[name] = _digest([one.system_prompt, one.model_id])
        tools.update({f"{name}.{tool}": digest for tool, digest in one.tools.items()})
    import elsai

    return BuildFingerprint(
        elsai_version=elsai.__version__,
        code_version=version_of(agent_function) if agent_function else "",
        model_id=steps.kind,
        system_prompt=_digest(None),
        tools=tools,
        nodes=nodes,
        edges=edges,
        node_builds=prompts,
    )


def removed_nodes(changes: list[str]) -> list[str]:
    """The nodes an upgrade's changes removed from the graph (``node `b` removed``)."""
    return [c.split("`")[1] for c in changes if c.startswith("node `") and c.endswith(" removed")]


def differences(old: BuildFingerprint, new: BuildFingerprint) -> list[str]:
    """What changed, in words (``tool `refund` removed``, ``model id a -> b``)."""
    out = []
    for field, what in (("elsai_version", "elsai"), ("model_id", "model id")):
        if getattr(old, field) != getattr(new, field):
            out.append(f"{what} {getattr(old, field)} -> {getattr(new, field)}")
    if old.system_prompt != new.system_prompt:
        out.append("system prompt changed")
    out += [f"tool `{n}` removed" for n in sorted(set(old.tools) - set(new.tools))]
    out += [f"tool `{n}` added" for n in sorted(set(new.tools) - set(old.tools))]
    changed = [n for n in sorted(set(old.tools) & set(new.tools)) if old.tools[n] != new.tools[n]]
    out += [f"tool `{n}` input schema changed" for n in changed]
    out += [f"node `{n}` removed" for n in sorted(set(old.nodes) - set(new.nodes))]
    out += [f"node `{n}` added" for n in sorted(set(new.nodes) - set(old.nodes))]
    out += [f"edge `{e}` removed" for e in sorted(set(old.edges) - set(new.edges))]
    out += [f"edge `{e}` added" for e in sorted(set(new.edges) - set(old.edges))]
    kept = sorted(set(old.node_builds) & set(new.node_builds))
    out += [
        f"node `{n}` prompt or model changed"
        for n in kept
        if old.node_builds[n] != new.node_builds[n]
    ]
    return out


def check_build(storage: StorageBackend, job_id: str, current: BuildFingerprint) -> list[str]:
    """Record or compare the job's fingerprint; the changes of an upgrade (empty: none).

    Raises ``BuildMismatchError`` when the job is on the version it recorded and the agent
    differs. An unreadable record is replaced: it is untrusted data, not a reason to fail.
    """
    key = service_keys.job_fingerprint_key(job_id)
    stored = storage.read(key)
    record: FingerprintRecord | None = None
    if stored is not None:
        try:
            record = FingerprintRecord.model_validate_json(stored.data)
        except (ValidationError, ValueError):
            record = None
    if record is not None and record.fingerprint == current:
        return []
    changes = differences(record.fingerprint, current) if record is not None else []
    if record is not None and record.fingerprint.code_version == current.code_version:
        raise BuildMismatchError(
            f"job {job_id!r} runs pinned to version {current.code_version or '$LATEST'}, but "
            f"the agent built now differs from the one it started with: {'; '.join(changes)}. "
            "Upgrade the job explicitly (POST /jobs/{id}/upgrade) to move it to new code."
        )
    new = FingerprintRecord(job_id=job_id, fingerprint=current, changes=changes)
    storage.replace(key, new.model_dump_json().encode(),
                    expected_version=stored.version if stored else None)  # fmt: skip
    return changes
