"""MCP clients on the serverless runtime: started lazily, reused by warm invocations."""

from __future__ import annotations

from pathlib import Path

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.serverless import SliceRequest, run_slice
from elsai.session import FileSessionManager
from tests.unit.tools.mcp.conftest import read_log, stdio_client


def test_a_factory_client_starts_on_the_first_slice_and_serves_the_next(
    server_log: Path, tmp_path: Path
) -> None:
    # What a factory module holds at module scope: built at import, started by the first slice.
    client = stdio_client(server_log)

    def factory(config: AgentConfig) -> Agent:
        n = len(read_log(server_log))
        call = {"toolUseId": f"e{n}", "name": "echo", "input": {"text": f"job {n}"}}
        script = [{"role": "assistant", "content": [{"toolUse": call}]}, f"finished {n}"]
        return Agent(model=ScriptedModel(script), tools=[client.start()], config=config)

    assert not client.started
    try:
        for job in ("job-a", "job-b"):  # two warm invocations of one Lambda container
            manager = FileSessionManager(session_id=job, storage_dir=str(tmp_path))
            request = SliceRequest(
                job_id=job, execution_id=f"exec-{job}", session_id=job, prompt="go"
            )
            outcome = run_slice(
                request, session_manager=manager, factory=factory, remaining_ms=lambda: 900_000
            )
            assert outcome.status == "completed"
            assert client.started, "the agent did not open the client, so it did not close it"
        calls = read_log(server_log)
        assert [c["tool"] for c in calls] == ["echo", "echo"]
        assert calls[0]["pid"] == calls[1]["pid"], "one server process served both invocations"
    finally:
        client.close()
