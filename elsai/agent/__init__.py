"""The Agent and its configuration and result types.

`AgentResult`, `InvocationMetrics` and `AgentState` are values the layers below produce or
share; they live in `elsai.types` and are re-exported here under their public names.
"""

from elsai.agent.agent import Agent
from elsai.agent.config import AgentConfig
from elsai.types import AgentResult, AgentState, InvocationMetrics

__all__ = ["Agent", "AgentConfig", "AgentResult", "AgentState", "InvocationMetrics"]
