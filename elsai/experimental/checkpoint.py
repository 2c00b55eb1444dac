"""Deprecated location. Checkpoints are stable: import from `elsai.checkpoint`.

This module re-exports nothing on purpose beyond the stable names, and warns on import so
code that still uses it is found and moved.
"""

import warnings

from elsai.checkpoint import Checkpoint, CheckpointConfig, CheckpointException

warnings.warn(
    "elsai.experimental.checkpoint is deprecated: import Checkpoint, CheckpointConfig and "
    "CheckpointException from elsai.checkpoint instead",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["Checkpoint", "CheckpointConfig", "CheckpointException"]
