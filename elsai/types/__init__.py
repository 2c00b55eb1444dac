"""Value types shared by every part of elsai (the bottom layer: it imports nothing above).

Messages use the Amazon Bedrock Converse shape (see `elsai.types.messages`); the results,
positions and the `AgentView` protocol the loop and its helpers pass around live beside them.
"""

from elsai.types.messages import (
    ContentBlock,
    Message,
    Role,
    StopReason,
    ToolChoice,
    ToolResult,
    ToolResultContent,
    ToolResultStatus,
    ToolSpec,
    ToolUse,
    Usage,
    empty_usage,
    text_of,
    tool_results,
    tool_uses,
)
from elsai.types.result import AgentResult, InvocationMetrics
from elsai.types.resume import Position, ResumePlan
from elsai.types.state import AgentState
from elsai.types.tool_choice import check_tool_choice, parse_tool_choice
from elsai.types.view import AgentView, InterruptsView

__all__ = [
    "AgentResult",
    "AgentState",
    "AgentView",
    "ContentBlock",
    "InterruptsView",
    "InvocationMetrics",
    "Message",
    "Position",
    "ResumePlan",
    "Role",
    "StopReason",
    "ToolChoice",
    "ToolResult",
    "ToolResultContent",
    "ToolResultStatus",
    "ToolSpec",
    "ToolUse",
    "Usage",
    "check_tool_choice",
    "empty_usage",
    "parse_tool_choice",
    "text_of",
    "tool_results",
    "tool_uses",
]
