"""Checkpoints: thin ReAct-loop bookmarks stored beside an agent's session messages.

There is no resume() API: rebuild the Agent with the same session_id and agent_id and invoke
it again; an active bookmark that passes the consistency gate is acted on automatically.
"""

from elsai.checkpoint.config import CheckpointConfig
from elsai.checkpoint.model import SCHEMA_VERSION, Checkpoint, CheckpointException

__all__ = ["SCHEMA_VERSION", "Checkpoint", "CheckpointConfig", "CheckpointException"]
