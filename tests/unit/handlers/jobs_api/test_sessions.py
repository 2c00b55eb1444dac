"""GET /sessions/{id}: a real elsai Agent writes the session to (moto) S3, the API reads it."""

from __future__ import annotations

from typing import Any

from elsai.agent import AgentConfig
from elsai.checkpoint.config import CheckpointConfig
from elsai.session import S3SessionManager
from tests.unit.handlers.jobs_api.helpers import BUCKET, Api, load_event


def _agent(session_id: str, agent_id: str) -> Any:
    import example_agent  # the stack's example agent (scripted model offline)

    manager = S3SessionManager(session_id=session_id, bucket=BUCKET)
    config = AgentConfig(
        agent_id=agent_id, session_manager=manager, checkpoint=CheckpointConfig(position="both")
    )
    return example_agent.build_agent(config)


def _stop_after(model_calls: int) -> Any:
    seen = {"n": 0}

    def should_stop() -> bool:
        seen["n"] += 1
        return seen["n"] > model_calls

    return should_stop


def test_paused_agent_shows_its_bookmark(api: Api) -> None:
    result = _agent("customer-42", "fulfilment")(
        "Process orders 1 and 2", invocation_id="exec-1", should_stop=_stop_after(2)
    )
    assert result.stop_reason == "paused"

    reply = api.call(load_event("get_session.json"))  # the SAM fixture: /sessions/customer-42
    assert reply.status == 200, reply.body
    summary = reply.body
    assert summary["session_id"] == "customer-42"
    assert summary["session"]["session_id"] == "customer-42"
    (agent,) = summary["agents"]
    assert agent["agent_id"] == "fulfilment"
    assert agent["message_count"] == 4
    assert agent["last_message"]["role"] == "assistant"
    assert agent["last_message"]["tool_uses"] == ["process_order"]
    assert agent["checkpoint"]["position"] == "after_model"
    assert agent["checkpoint"]["execution_status"] == "active"
    assert agent["checkpoint"]["message_count"] == 4
    assert agent["next_invoke"] == "resume after_model: run 1 pending tool(s) first"


def test_finished_agents_are_listed_with_their_transcripts(api: Api) -> None:
    agent = _agent("s-done", "fulfilment")
    agent("Process orders 1 and 2", invocation_id="exec-1", should_stop=_stop_after(2))
    resumed = _agent("s-done", "fulfilment")("Process orders 1 and 2", invocation_id="exec-1")
    assert str(resumed) == "All 2 orders processed: 1, 2."
    _agent("s-done", "auditor")("Process order 5", invocation_id="exec-2")

    summary = api.get_session("s-done").body
    assert [a["agent_id"] for a in summary["agents"]] == ["auditor", "fulfilment"]
    auditor, fulfilment = summary["agents"]
    assert fulfilment["message_count"] == 6  # prompt once, two tool rounds, the summary
    assert fulfilment["last_message"]["text"] == "All 2 orders processed: 1, 2."
    assert fulfilment["next_invoke"] == "messages-only continue"
    assert auditor["message_count"] == 4
    assert auditor["last_message"]["text"] == "All 1 orders processed: 5."


def test_unknown_session_is_404(api: Api) -> None:
    reply = api.get_session("nobody-here")
    assert reply.status == 404
    assert "no session" in reply.error_message()


def test_invalid_session_ids_are_400(api: Api) -> None:
    for bad in ["..", "a..b", "x" * 129, "tab\there"]:
        reply = api.get_session(bad)
        assert reply.status == 400, (bad, reply.body)
        reply.error_message()


def test_a_percent_encoded_session_id_is_decoded_as_api_gateway_leaves_it_encoded(
    api: Api,
) -> None:
    # REST API Gateway hands the Lambda the path still percent-encoded: `:` arrives as %3A.
    _agent("tenant:42", "fulfilment")("Process order 5", invocation_id="exec-1")
    reply = api.get_session("tenant%3A42")
    assert reply.status == 200, reply.body
    assert reply.body["session_id"] == "tenant:42"
