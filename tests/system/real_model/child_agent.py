"""A real agent process for the kill test: it streams from the real server until killed.

    python -m tests.system.real_model.child_agent <base_url> <gguf> <session_dir> <marker_file>

Builds the agent the parent will rebuild (same session and agent ids, file session, bookmarks
at both boundaries), forces the first call to the `population` tool and consumes the stream.
At the first tool-input delta it writes `marker_file` (fsync'd) and stops consuming: the HTTP
stream stays open with the server mid-answer, and the parent SIGKILLs this process there.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from elsai.loop.events import ToolInputDeltaEvent
from tests.system.real_model.agent_setup import PROMPT, build_agent


async def main(base_url: str, gguf: str, session_dir: str, marker: str) -> None:
    """Stream the invocation; park forever at the first tool-input delta."""
    agent = build_agent(base_url, gguf, session_dir, tool_log=None)
    async for event in agent.stream_async(PROMPT, invocation_id="job-1"):
        if isinstance(event, ToolInputDeltaEvent):
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.write(fd, f"{event.fragment!r}\n".encode())
            os.fsync(fd)
            os.close(fd)
            time.sleep(600)  # blocks the loop: the stream is open, nothing more is read
    raise SystemExit("the stream ended before the parent killed this process")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
