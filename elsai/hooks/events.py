"""Typed hook events.

Each event names the fields a hook may change in `_writable`; assigning any other field
raises AttributeError, so a hook cannot silently corrupt loop state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from elsai.types import AgentResult, AgentView, Message, StopReason, ToolResult, ToolUse, Usage

if TYPE_CHECKING:
    from elsai.tools.base import AgentTool


@dataclass
class HookEvent:
    """Base of every hook event; `agent` is what hooks may see of the agent that fired it."""

    agent: AgentView
    _writable: ClassVar[frozenset[str]] = frozenset()
    #: After-events run callbacks in reverse registration order, so pairs nest like context managers.
    reverse_order: ClassVar[bool] = False

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_sealed", False) and name not in self._writable:
            raise AttributeError(f"{type(self).__name__}.{name} is read-only for hooks")
        object.__setattr__(self, name, value)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sealed", True)


@dataclass
class BeforeInvocationEvent(HookEvent):
    """Fires at the start of every invocation, resumed ones included."""

    messages: list[Message] | None = None  # new input messages of this invocation (may be changed)
    _writable: ClassVar[frozenset[str]] = frozenset({"messages"})


@dataclass
class AfterInvocationEvent(HookEvent):
    """Fires when an invocation ends, also when it raised (then `result` is None)."""

    result: AgentResult | None = None
    reverse_order: ClassVar[bool] = True


@dataclass
class MessageAddedEvent(HookEvent):
    """A message was appended to the conversation (and made durable when a session is set)."""

    message: Message | None = None


@dataclass
class BeforeModelCallEvent(HookEvent):
    """Fires before every model call, retries included."""


@dataclass
class AfterModelCallEvent(HookEvent):
    """`retry=True` asks the loop to discard this response and call the model again."""

    message: Message | None = None
    stop_reason: StopReason | None = None
    exception: BaseException | None = None
    retry: bool = False
    usage: Usage | None = None  # tokens of this call (telemetry); None when the call failed
    _writable: ClassVar[frozenset[str]] = frozenset({"retry"})
    reverse_order: ClassVar[bool] = True


@dataclass
class BeforeToolCallEvent(HookEvent):
    """A hook may swap the tool, edit its input, or cancel it (with a message for the model)."""

    tool_use: ToolUse | None = None
    selected_tool: AgentTool | None = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel_tool: bool | str = False
    _writable: ClassVar[frozenset[str]] = frozenset({"tool_use", "selected_tool", "cancel_tool"})

    def interrupt(self, name: str, reason: Any = None) -> Any:
        """Ask a human before the tool runs (e.g. an approval gate); see ToolContext.interrupt."""
        from elsai.interrupt.model import Interrupt

        use_id = self.tool_use["toolUseId"] if self.tool_use else ""
        ordinal = getattr(self, "_asks", 0)
        object.__setattr__(self, "_asks", ordinal + 1)  # not a hook-writable field
        return self.agent.interrupts.raise_or_answer(
            Interrupt.for_tool(use_id, name, reason, source="hook", ordinal=ordinal)
        )


@dataclass
class AfterToolCallEvent(HookEvent):
    """A hook may replace the tool's `result` before the model sees it."""

    tool_use: ToolUse | None = None
    selected_tool: AgentTool | None = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    result: ToolResult | None = None
    exception: BaseException | None = None
    _writable: ClassVar[frozenset[str]] = frozenset({"result"})
    reverse_order: ClassVar[bool] = True
