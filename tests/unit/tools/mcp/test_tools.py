"""MCP tools against a real MCP server process, over stdio and over streamable HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.tools.context import ToolContext
from elsai.tools.mcp import MCPClient, MCPTool
from tests.unit.tools.mcp.conftest import read_log
from tests.unit.tools.mcp.server import PNG_1X1


def use(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """An assistant message asking for `calls` (toolUseId, name, input) in one batch."""
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": i, "name": n, "input": x}} for i, n, x in calls],
    }


def results_of(agent: Agent) -> dict[str, dict[str, Any]]:
    """Every toolResult of the conversation, by toolUseId."""
    found: dict[str, dict[str, Any]] = {}
    for message in agent.messages:
        for block in message["content"]:
            if "toolResult" in block:
                found[block["toolResult"]["toolUseId"]] = block["toolResult"]
    return found


def test_list_tools_gives_names_descriptions_and_schemas(make_client: Any) -> None:
    with make_client() as client:
        tools = {t.name: t for t in client.list_tools()}
    assert {"echo", "add", "fail", "picture", "slow", "record", "die"} <= set(tools)
    add = tools["add"]
    assert isinstance(add, MCPTool)
    assert add.spec["description"].startswith("Add two integers")
    schema = add.spec["inputSchema"]["json"]
    assert schema["type"] == "object"
    assert set(schema["required"]) == {"a", "b"}
    assert schema["properties"]["a"]["type"] == "integer"


def test_agent_build_lists_tools_with_prefix_and_filters(make_client: Any) -> None:
    model = ScriptedModel(["hello"], record="full")
    client = make_client(prefix="srv_", allow={"echo", "add", "fail"}, deny={"fail"})
    with Agent(model=model, tools=[client]) as agent:
        assert agent.tool_names == ["srv_echo", "srv_add"]
        agent("hi")
    sent = [spec["name"] for spec in model.requests[0].tool_specs]
    assert sent == ["srv_echo", "srv_add"]


def test_text_structured_error_and_image_results(make_client: Any) -> None:
    script = [
        use(
            ("u1", "echo", {"text": "hello mcp"}),
            ("u2", "add", {"a": 2, "b": 40}),
            ("u3", "fail", {"message": "boom"}),
            ("u4", "picture", {}),
        ),
        "done",
    ]
    with Agent(model=ScriptedModel(script, record="full"), tools=[make_client()]) as agent:
        result = agent("go")
    assert str(result) == "done"
    got = results_of(agent)
    assert got["u1"] == {"toolUseId": "u1", "status": "success", "content": [{"text": "hello mcp"}]}
    assert got["u2"] == {"toolUseId": "u2", "status": "success", "content": [{"json": {"sum": 42}}]}
    assert got["u3"]["status"] == "error"
    assert "boom" in got["u3"]["content"][0]["text"]
    image = got["u4"]["content"][0]["image"]
    assert image == {"format": "png", "source": {"bytes": PNG_1X1}}


def test_each_call_carries_the_tool_context_idempotency_key(
    make_client: Any, server_log: Path, tmp_path: Path
) -> None:
    config = AgentConfig(
        agent_id="mcp-agent",
        session_manager=FileSessionManager(session_id="s-meta", storage_dir=str(tmp_path / "s")),
    )
    script = [use(("k1", "echo", {"text": "a"}), ("k2", "echo", {"text": "b"})), "done"]
    with Agent(
        model=ScriptedModel(script, record="full"), tools=[make_client()], config=config
    ) as agent:
        agent("go")
        expected = {
            i: ToolContext(tool_use={"toolUseId": i, "name": "echo", "input": {}}, agent=agent)
            for i in ("k1", "k2")
        }
    logged = {e["tool_use_id"]: e["key"] for e in read_log(server_log) if e["tool"] == "echo"}
    assert logged == {i: ctx.idempotency_key for i, ctx in expected.items()}
    assert logged["k1"] != logged["k2"]


def test_calls_of_one_batch_run_concurrently_and_answer_in_request_order(
    make_client: Any, server_log: Path
) -> None:
    calls = [(f"c{n}", "slow", {"seconds": 0.5, "tag": f"t{n}"}) for n in range(3)]
    with Agent(
        model=ScriptedModel([use(*calls), "done"], record="full"), tools=[make_client()]
    ) as agent:
        agent("go")
    order = [b["toolResult"]["toolUseId"] for b in agent.messages[2]["content"]]
    assert order == ["c0", "c1", "c2"]
    texts = [b["toolResult"]["content"][0]["text"] for b in agent.messages[2]["content"]]
    assert texts == ["slept t0", "slept t1", "slept t2"]
    events = [(e["phase"], e["tag"]) for e in read_log(server_log) if e["tool"] == "slow"]
    # Every call started before the first one ended: they overlapped on the server.
    first_end = next(i for i, (phase, _) in enumerate(events) if phase == "end")
    assert sorted(tag for phase, tag in events[:first_end] if phase == "start") == [
        "t0",
        "t1",
        "t2",
    ]


def test_a_call_past_its_timeout_is_an_error_result_and_the_loop_goes_on(
    make_client: Any,
) -> None:
    script = [
        use(("slow1", "slow", {"seconds": 30, "tag": "late"})),
        use(("next", "echo", {"text": "still here"})),
        "done",
    ]
    client = make_client(call_timeout=1.0)
    with Agent(model=ScriptedModel(script, record="full"), tools=[client]) as agent:
        assert str(agent("go")) == "done"
    got = results_of(agent)
    assert got["slow1"]["status"] == "error"
    assert "timed out after 1s" in got["slow1"]["content"][0]["text"]
    assert got["next"]["content"] == [{"text": "still here"}]


def test_a_stdio_server_killed_mid_call_is_an_error_result_then_reconnects(
    server_log: Path,
) -> None:
    from tests.unit.tools.mcp.conftest import stdio_client

    script = [use(("d", "die", {})), use(("e", "echo", {"text": "back"})), "done"]
    with Agent(
        model=ScriptedModel(script, record="full"), tools=[stdio_client(server_log)]
    ) as agent:
        assert str(agent("go")) == "done"
    got = results_of(agent)
    assert got["d"]["status"] == "error"
    assert "Connection closed" in got["d"]["content"][0]["text"]
    assert got["e"] == {"toolUseId": "e", "status": "success", "content": [{"text": "back"}]}
    pids = {e["tool"]: e["pid"] for e in read_log(server_log)}
    assert pids["die"] != pids["echo"], "the second call ran on a fresh server process"


def test_an_http_server_killed_mid_call_is_an_error_result(tmp_path: Path) -> None:
    from tests.unit.tools.mcp.conftest import free_port, start_http_server, stop, wait_for

    log, port = tmp_path / "log.jsonl", free_port()
    proc = start_http_server(log, port)
    try:
        client = MCPClient.http(f"http://127.0.0.1:{port}/mcp", call_timeout=20)
        script = [use(("d", "die", {})), "done"]
        with Agent(model=ScriptedModel(script, record="full"), tools=[client]) as agent:
            assert str(agent("go")) == "done"
        wait_for(lambda: proc.poll() is not None, "the server to be dead")
        got = results_of(agent)["d"]
        assert got["status"] == "error"
        assert got["content"][0]["text"].startswith("Error: ")
    finally:
        stop(proc)


def test_garbage_on_the_stdio_stream_does_not_break_the_session(server_log: Path) -> None:
    from tests.unit.tools.mcp.conftest import stdio_client

    script = [use(("g", "garbage", {})), use(("e", "echo", {"text": "next"})), "done"]
    client = stdio_client(server_log, call_timeout=10)
    with Agent(model=ScriptedModel(script, record="full"), tools=[client]) as agent:
        assert str(agent("go")) == "done"
    got = results_of(agent)
    assert got["g"]["content"] == [{"text": "answered after garbage"}]
    assert got["e"]["content"] == [{"text": "next"}]


def test_http_headers_reach_the_server(http_url: str) -> None:
    client = MCPClient.http(http_url, headers={"X-Elsai-Test": "secret-123"})
    script = [use(("h", "header", {"name": "x-elsai-test"})), "done"]
    with Agent(model=ScriptedModel(script, record="full"), tools=[client]) as agent:
        agent("go")
    assert results_of(agent)["h"]["content"] == [{"text": "secret-123"}]
