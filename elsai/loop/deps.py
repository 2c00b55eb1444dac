"""What one invocation runs on: the agent's parts, handed to the loop explicitly.

The loop never reaches into the agent. The agent builds a `LoopDeps` for each invocation
(its model, tools, hooks, conversation manager, interrupt state and persistence) and an
`Invocation` for the per-call options; hooks, tools and conversation managers see
`deps.agent`, typed as the read-only `ConversationView`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from elsai.conversation.base import ConversationManager, ConversationView
from elsai.hooks.registry import HookRegistry
from elsai.interrupt.state import InterruptState
from elsai.loop.persistence import LoopPersistence
from elsai.models.base import Model
from elsai.tools.executor import ToolExecutor
from elsai.tools.registry import ToolRegistry
from elsai.types import ContentBlock, InvocationMetrics, ToolChoice

if TYPE_CHECKING:
    from elsai.structured_output.tool import StructuredOutputTool


class LoopDeps(NamedTuple):
    """The agent's parts one invocation uses; the loop gets nothing else from the agent."""

    #: What hooks, tools and conversation managers see; `agent.messages` is the transcript.
    agent: ConversationView
    model: Model
    system_prompt: str | None
    tools: ToolRegistry
    executor: ToolExecutor
    hooks: HookRegistry
    conversation: ConversationManager
    interrupts: InterruptState
    persistence: LoopPersistence


class Invocation(NamedTuple):
    """Per-invocation state; discarded when the invocation ends."""

    input_content: list[ContentBlock]
    #: The caller's state for this invocation and the counters it adds up (fresh for each one).
    invocation_state: dict[str, Any]
    metrics: InvocationMetrics
    invocation_id: str | None = None
    structured_output: StructuredOutputTool | None = None
    structured_output_retries: int = 3
    should_stop: Callable[[], bool] | None = None
    max_cycles: int | None = None
    #: Validated against the tools before the invocation starts; None is the provider default.
    tool_choice: ToolChoice | None = None
    #: Force `tool_choice` only on calls that answer user input, not tool results.
    tool_choice_first_only: bool = False
