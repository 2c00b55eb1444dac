"""The Agent and its configuration and result types."""

from elsai.agent.agent import Agent
from elsai.agent.config import AgentConfig
from elsai.agent.result import AgentResult, InvocationMetrics
from elsai.agent.state import AgentState

__all__ = ["Agent", "AgentConfig", "AgentResult", "AgentState", "InvocationMetrics"]
