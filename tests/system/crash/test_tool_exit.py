"""A tool that kills its own process at once is run again by the rebuilt agent, on defaults.

The spec's after_model bookmark is how mid-tool crashes recover. The crash it names most
plainly is a tool that takes its process down in its first moments (os._exit, a native crash,
an OOM kill on a big input): on the default settings no tool starts before its after_model
bookmark is durable, so the rebuilt agent resumes from after_model and the tool runs again.

This file is also the child: `python test_crash_tool_exit.py '<json args>'` runs one
invocation with `position="both"` and nothing but the default manager settings. Its tool writes
`start <pid>` to the ledger (one unbuffered write, which a dying process keeps) and, in the
crashing run, calls os._exit on the very next line; otherwise it writes `done <pid>`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

EXIT_CODE = 17
SCRIPT: list[Any] = [
    {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "t1", "name": "charge", "input": {"card": "c-1"}}}],
    },
    "Charged c-1.",
]


def child(args: dict[str, Any]) -> int:
    """One invocation of the agent on default settings; the tool may kill the process."""
    from elsai import Agent, tool
    from elsai.agent import AgentConfig
    from elsai.checkpoint import CheckpointConfig
    from elsai.models import PositionalScriptedModel
    from elsai.session import FileSessionManager, S3SessionManager

    ledger = os.open(args["ledger"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    @tool
    def charge(card: str) -> str:
        """Charge a card: the side effect whose crash the after_model bookmark recovers."""
        os.write(ledger, f"start {os.getpid()}\n".encode())
        if args["crash"]:
            os._exit(EXIT_CODE)
        os.write(ledger, f"done {os.getpid()}\n".encode())
        return f"charged {card}"

    if args["backend"] == "file":
        manager: Any = FileSessionManager(session_id="exit", storage_dir=args["storage_dir"])
    else:
        manager = S3SessionManager(session_id="exit", bucket=args["bucket"], prefix=args["prefix"])
    agent = Agent(
        model=PositionalScriptedModel(SCRIPT),
        tools=[charge],
        config=AgentConfig(
            agent_id="worker",
            session_manager=manager,
            checkpoint=CheckpointConfig(position="both"),
        ),
    )
    result = agent("Charge card c-1.")
    print(json.dumps({"text": str(result), "position": result.resume_position}))
    return 0


if __name__ == "__main__":
    sys.exit(child(json.loads(sys.argv[1])))


import pytest  # noqa: E402

from tests.support.transcripts import assert_valid_transcript  # noqa: E402
from tests.system.crash import crash_harness as h  # noqa: E402


@pytest.mark.parametrize("backend", ["file", "s3"])
def test_a_tool_that_exits_its_process_at_once_runs_again_on_resume(
    make_store: Any, make_env: Any, children: Any, tmp_path: Path, backend: str
) -> None:
    store, env = make_store(backend), make_env(backend)
    ledger = tmp_path / "ledger.txt"
    args = {**store.child_args("exit"), "ledger": str(ledger)}
    argv = [sys.executable, __file__]

    crashed = children.start([*argv, json.dumps({**args, "crash": True})], env)
    _, err = crashed.communicate(timeout=120)
    assert crashed.returncode == EXIT_CODE, err[-2000:]
    killed = h.Session.parse("exit", store.snapshot("exit"))
    # The toolUse and the after_model bookmark naming it were durable before the tool started.
    assert len(killed.messages) == 2 and h.uses(killed.messages[-1])
    assert killed.bookmark is not None
    assert (killed.bookmark["position"], killed.bookmark["message_count"]) == ("after_model", 2)

    again = children.start([*argv, json.dumps({**args, "crash": False})], env)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err[-2000:]
    assert json.loads(out) == {"text": "Charged c-1.", "position": "after_model"}
    assert ledger.read_text().split() == [
        "start", str(crashed.pid), "start", str(again.pid), "done", str(again.pid)
    ]  # fmt: skip
    final = h.Session.parse("exit", store.snapshot("exit"))
    assert_valid_transcript(final.messages, bookmark=final.bookmark)
    answers = [r for m in final.messages for r in h.results(m)]
    assert [(r["toolUseId"], r["content"]) for r in answers] == [("t1", [{"text": "charged c-1"}])]
