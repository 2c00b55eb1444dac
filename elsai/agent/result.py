"""Old import path of the result types; they live in `elsai.types.result`."""

from elsai.types.result import AgentResult, InvocationMetrics
from elsai.types.resume import Position

#: The boundary an invocation resumed from (same literal as `elsai.types.Position`).
ResumePosition = Position

__all__ = ["AgentResult", "InvocationMetrics", "ResumePosition"]
