"""A job's build fingerprint: what of the agent a transcript depends on, recorded and compared.

The first slice of a job records the fingerprint of the agent the factory built
(``jobs/<job_id>/fingerprint.json``: elsai version, the agent function version, model id,
system prompt digest, each tool's name and input-schema digest). Every later slice compares:

- same function version, different fingerprint: the pinned code did not rebuild the same
  agent (a factory that reads the environment or the clock, a changed model id setting) —
  ``BuildMismatchError`` names what differs, and the state machine does not retry it;
- another function version (the job was upgraded): the differences are recorded with the new
  fingerprint (``changes``), the upgrade's job event says them, and the slice goes on.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from elsai.serverless.contract import version_of
from elsai.serverless.errors import BuildMismatchError
from elsai.session.layout import keys
from elsai.session.storage.base import StorageBackend

if TYPE_CHECKING:
    from elsai.agent import Agent


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class BuildFingerprint(BaseModel):
    """What of the agent a stored transcript depends on."""

    model_config = ConfigDict(extra="forbid")

    elsai_version: str = Field(max_length=64)
    code_version: str = Field(max_length=64)
    model_id: str = Field(max_length=512)
    system_prompt: str = Field(max_length=64)  # a digest, never the prompt itself
    tools: dict[str, str] = Field(default_factory=dict, max_length=1000)  # name -> schema digest


class FingerprintRecord(BaseModel):
    """The stored record: the fingerprint and the changes of the last upgrade."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(min_length=1, max_length=128)
    fingerprint: BuildFingerprint
    changes: list[str] = Field(default_factory=list, max_length=1000)


def fingerprint_of(agent: Agent, agent_function: str | None) -> BuildFingerprint:
    """The fingerprint of a built agent running as ``agent_function`` (a qualified ARN)."""
    import elsai

    model = agent.model
    model_id = getattr(model, "model_id", None) or type(model).__name__
    tools = {s["name"]: _digest(s.get("inputSchema")) for s in agent.tool_registry.specs()}
    return BuildFingerprint(
        elsai_version=elsai.__version__,
        code_version=version_of(agent_function) if agent_function else "",
        model_id=str(model_id)[:512],
        system_prompt=_digest(agent.system_prompt),
        tools=tools,
    )


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
    return out


def check_build(storage: StorageBackend, job_id: str, current: BuildFingerprint) -> list[str]:
    """Record or compare the job's fingerprint; the changes of an upgrade (empty: none).

    Raises ``BuildMismatchError`` when the job is on the version it recorded and the agent
    differs. An unreadable record is replaced: it is untrusted data, not a reason to fail.
    """
    key = keys.job_fingerprint_key(job_id)
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
