"""Build elsai agents for the benchmarks."""

from __future__ import annotations

from typing import Any

from bench import workload
from elsai import Agent, AgentConfig, tool
from elsai.checkpoint import CheckpointConfig
from elsai.conversation.null import NullConversationManager
from elsai.models.scripted import ScriptedModel
from elsai.session import FileSessionManager, S3SessionManager

AGENT_ID = "bench"


@tool(name=workload.TOOL_NAME)
def bump(n: int) -> str:
    """Bump a counter.

    Args:
        n: The step number.
    """
    return workload.bump_impl(n)


def _checkpoint(position: str | None) -> CheckpointConfig | None:
    return CheckpointConfig(position=position) if position else None  # type: ignore[arg-type]


def file_manager(session_id: str, storage_dir: str, fsync: bool = True) -> FileSessionManager:
    """`fsync=True` is elsai's default (power-loss durable); False is strands' durability class."""
    return FileSessionManager(session_id=session_id, storage_dir=storage_dir, fsync=fsync)


def s3_manager(session_id: str, bucket: str, boto_session: Any = None) -> S3SessionManager:
    return S3SessionManager(
        session_id=session_id, bucket=bucket, prefix="", boto_session=boto_session
    )


def forget_shared_clients() -> None:
    """Drop elsai's process-wide S3 clients, so the next S3SessionManager builds a new one.

    elsai reuses one boto3 client per (boto session, region, endpoint) across manager
    instances (`elsai.aws_clients.shared_client`); clearing that cache reproduces the
    first resume in a fresh process, where the client has to be built.
    """
    from elsai import aws_clients

    aws_clients.clear()


def make_agent(
    responses: list[dict[str, Any]],
    *,
    session_manager: Any = None,
    position: str | None = None,
    null_cm: bool = False,
) -> Agent:
    """An elsai agent over `responses`; `position` None means no checkpoint."""
    return Agent(
        model=ScriptedModel(responses, record=False),
        tools=[bump],
        config=AgentConfig(
            agent_id=AGENT_ID,
            session_manager=session_manager,
            checkpoint=_checkpoint(position) if session_manager is not None else None,
            conversation_manager=NullConversationManager() if null_cm else None,
        ),
    )


#: The LoopPersistence methods the loop calls on the agent's SessionBinding.
PERSISTENCE_METHODS = (
    "begin_invocation",
    "message_appended",
    "last_message_replaced",
    "boundary",
    "turn_ended",
)


def time_session_layer(agent: Agent, timer: Any) -> Any:
    """Wrap the agent's persistence binding so `timer` adds up the time spent in it."""
    return timer.wrap(agent._persistence, PERSISTENCE_METHODS)


def invoke(agent: Agent, prompt: str) -> str:
    result = agent(prompt)
    return result.stop_reason


def message_count(agent: Agent) -> int:
    return len(agent.messages)
