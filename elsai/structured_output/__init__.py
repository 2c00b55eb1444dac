"""Structured output through an internal tool the model is made to call."""

from elsai.structured_output.tool import StructuredOutputTool

__all__ = ["StructuredOutputTool"]
