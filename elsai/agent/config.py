"""AgentConfig: the durable identity and the pluggable parts of an agent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elsai.types import ToolChoice

if TYPE_CHECKING:
    from elsai.checkpoint.config import CheckpointConfig
    from elsai.conversation.base import ConversationManager
    from elsai.hooks.registry import HookProvider
    from elsai.session.manager import SessionManager
    from elsai.tools.executor import ToolExecutor


@dataclass
class AgentConfig:
    """Everything about an agent that is not its model, tools or prompt.

    `agent_id` names the agent inside its session; keep it stable so a rebuilt agent finds
    its messages and checkpoint again.

    `tool_choice` ("auto", "any", or `{"tool": {"name": ...}}`, the Converse shapes) is the
    default for every invocation; with `tool_choice_first_only` it forces only the model call
    that answers the user's input, so a forced run can still end its turn.

    `tracing=False` stops the agent from attaching OpenTelemetry tracing by itself when the
    application has set a global tracer provider; an `OtelTracing` in `hooks` still traces.
    """

    agent_id: str = "default"
    name: str | None = None
    description: str | None = None
    session_manager: SessionManager | None = None
    checkpoint: CheckpointConfig | None = None
    conversation_manager: ConversationManager | None = None
    tool_executor: ToolExecutor | str | None = None
    hooks: Sequence[HookProvider] = ()
    state: dict[str, Any] = field(default_factory=dict)
    structured_output_retries: int = 3
    tool_choice: ToolChoice | str | None = None
    tool_choice_first_only: bool = False
    tracing: bool = True

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Type errors first (a wrong object), then value errors (a missing dependency)."""
        from elsai.checkpoint.config import CheckpointConfig
        from elsai.ids import validate_id
        from elsai.types import parse_tool_choice

        validate_id(self.agent_id, "agent_id")
        if not isinstance(self.tracing, bool):
            raise TypeError(
                f"tracing= takes True or False, not {type(self.tracing).__name__}; "
                "pass an OtelTracing(...) in hooks= to configure spans"
            )
        self.tool_choice = parse_tool_choice(self.tool_choice)
        if self.checkpoint is not None and not isinstance(self.checkpoint, CheckpointConfig):
            raise TypeError(
                f"checkpoint= takes a CheckpointConfig (e.g. CheckpointConfig(position='both')), "
                f"not {type(self.checkpoint).__name__}"
            )
        if self.checkpoint is not None and self.session_manager is None:
            raise ValueError(
                "checkpoint requires a session_manager: pass session_manager=FileSessionManager(...) "
                "or S3SessionManager(...) on AgentConfig"
            )
