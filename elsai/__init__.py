"""elsai: agents that survive crashes.

from elsai import Agent, tool
"""

from elsai.agent import Agent, AgentConfig
from elsai.tools.decorator import tool
from elsai.types import AgentResult

__all__ = ["Agent", "AgentConfig", "AgentResult", "tool"]
__version__ = "0.1.0"
