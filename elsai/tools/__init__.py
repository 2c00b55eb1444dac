"""Tools: the `@tool` decorator, the AgentTool interface and the registry."""

from elsai.tools.base import AgentTool, error_result, success_result
from elsai.tools.context import ToolContext
from elsai.tools.decorator import FunctionTool, tool
from elsai.tools.registry import ToolRegistry

__all__ = [
    "AgentTool",
    "FunctionTool",
    "ToolContext",
    "ToolRegistry",
    "error_result",
    "success_result",
    "tool",
]
