"""Check the agent factory when the stack is synthesized, not when the first job runs.

Without this, `-c agentFactory=nocolon` or a module that cannot be imported synthesizes
fine and then fails every slice at runtime. The check does what the agent Lambda does: put
the directories of the service's `code` on the path, import `module:function`, and call it
with a throwaway `AgentConfig` (a local session in a temporary directory). The result must
be an Agent that kept the config's session settings, or a Graph/Swarm.

Turn it off with `-c checkAgentFactory=false` when the factory needs packages that are only
installed into the Lambda bundle, not into the venv that runs `cdk synth`.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from elsai.errors import AgentFactoryError


def check_agent_factory(spec: str, code_dirs: Sequence[Path] = ()) -> None:
    """Raise AgentFactoryError naming `spec` unless it builds an agent from a test config."""
    from elsai import Agent
    from elsai.agent import AgentConfig
    from elsai.checkpoint import CheckpointConfig
    from elsai.multiagent import MultiAgentBase
    from elsai.serverless import load_factory
    from elsai.session import FileSessionManager

    added = [str(d) for d in code_dirs if str(d) not in sys.path]
    sys.path[:0] = added
    try:
        try:
            factory = load_factory(spec)
        except AgentFactoryError as exc:
            raise AgentFactoryError(f"agentFactory {spec!r}: {exc}") from None
        with tempfile.TemporaryDirectory(prefix="elsai-factory-check-") as tmp:
            manager = FileSessionManager(session_id="factory-check", storage_dir=tmp)
            config = AgentConfig(
                agent_id="factory-check",
                session_manager=manager,
                checkpoint=CheckpointConfig(position="both"),
            )
            try:
                built = factory(config)
            except Exception as exc:
                raise AgentFactoryError(
                    f"agentFactory {spec!r} raised {type(exc).__name__} when called with a test "
                    f"AgentConfig: {exc}"
                ) from exc
    finally:
        for path in added:
            sys.path.remove(path)
    if isinstance(built, MultiAgentBase):
        return
    if not isinstance(built, Agent):
        raise AgentFactoryError(
            f"agentFactory {spec!r} returned {type(built).__name__}, not an Agent, Graph or Swarm"
        )
    if built.config.session_manager is not manager or built.config.checkpoint is None:
        raise AgentFactoryError(
            f"agentFactory {spec!r} must build the Agent with the AgentConfig it is given "
            "(keep its session_manager and checkpoint settings)"
        )
