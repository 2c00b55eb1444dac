"""StructuredOutputTool: turns a pydantic model into a tool whose input *is* the output.

Models are far more reliable at filling a tool's JSON schema than at emitting parseable
JSON text, and validation errors can go back to the model as a normal error toolResult.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from elsai.tools.base import AgentTool, error_result
from elsai.tools.context import ToolContext
from elsai.types import ToolResult, ToolSpec, ToolUse


class StructuredOutputTool(AgentTool):
    """The internal tool whose input is the structured output the caller asked for."""

    def __init__(self, output_model: type[BaseModel]) -> None:
        if not (isinstance(output_model, type) and issubclass(output_model, BaseModel)):
            raise TypeError(
                f"structured_output_model must be a pydantic BaseModel subclass, got {output_model!r}"
            )
        self.output_model = output_model
        self._name = re.sub(r"[^a-zA-Z0-9_-]", "_", output_model.__name__)[:64]
        schema = output_model.model_json_schema()
        description = (
            output_model.__doc__ or ""
        ).strip() or f"Structured {output_model.__name__} output."
        self._spec: ToolSpec = {
            "name": self._name,
            "description": f"{description}\nCall this tool exactly once to give your final answer.",
            "inputSchema": {"json": schema},
        }
        self.value: BaseModel | None = None
        self.failures: int = 0

    @property
    def name(self) -> str:
        """The tool name (the model class name, made tool-safe)."""
        return self._name

    @property
    def spec(self) -> ToolSpec:
        """The output model's JSON schema as the tool's input schema."""
        return self._spec

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Validate the input; errors go back to the model so it can try again."""
        try:
            self.value = self.output_model.model_validate(tool_use.get("input"))
        except ValidationError as exc:
            self.failures += 1
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()
            )
            return error_result(
                tool_use["toolUseId"],
                f"Invalid {self._name}: {problems}. Call the tool again with corrected input.",
            )
        return {
            "toolUseId": tool_use["toolUseId"],
            "status": "success",
            "content": [{"text": "Structured output recorded."}],
        }

    def forcing_prompt(self) -> dict[str, Any]:
        """The user text that makes the model call this tool."""
        return {"text": f"Now call the {self._name} tool with your final answer."}
