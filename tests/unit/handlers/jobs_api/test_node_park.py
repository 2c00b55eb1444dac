"""The agent handler's park step, for a node of a Graph/Swarm job: the node's own record."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from elsai.session.layout import keys
from tests.unit.handlers.jobs_api.conftest import _account
from tests.unit.handlers.jobs_api.helpers import (
    AGENT_ARN,
    BUCKET,
    REGION,
    Api,
    FakeContext,
    wait_until,
)

ASK = {"id": "i1", "name": "approve", "reason": {"amount": 40}, "tool_use_id": "t1"}


def _park(node: str | None, token: str) -> dict[str, object]:
    from elsai_lambdas import agent_handler

    event = {"action": "park", "task_token": token, "job_id": "job-1", "session_id": "s1",
             "agent_id": "graph", "interrupts": [ASK], **({"node": node} if node else {})}  # fmt: skip
    return dict(agent_handler.handler(event, FakeContext(function_name="elsai-agent")))


def test_a_node_parks_under_its_own_key_and_the_job_wait_keeps_its_own(aws_env: None) -> None:
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        assert _park("review_a", "token-a") == {"parked": True}
        assert _park(None, "token-job") == {"parked": True}

        def read(key: str) -> dict[str, object]:
            return dict(json.loads(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()))

        node_wait = read(keys.node_wait_key("job-1", "review_a"))
        assert (node_wait["node"], node_wait["task_token"]) == ("review_a", "token-a")
        assert node_wait["interrupts"] == [{**ASK, "node": "review_a"}]
        job_wait = read(keys.job_token_key("job-1"))
        assert (job_wait["node"], job_wait["task_token"]) == (None, "token-job")


def _ask(node: str) -> dict[str, object]:
    return {"node": node, "interrupts": [{"id": f"ask-{node}", "name": "approve", "reason": node}]}


#: Two parallel branches (a Map, as the Graph's Nodes state), each parking its own wait through
#: the real park step, then one more state of its own once answered.
BRANCHES = {
    "StartAt": "Nodes",
    "States": {
        "Nodes": {
            "Type": "Map",
            "ItemsPath": "$.nodes",
            "ItemSelector": {
                "node.$": "$$.Map.Item.Value.node",
                "interrupts.$": "$$.Map.Item.Value.interrupts",
                "session_id.$": "$.session_id",
                "agent_id.$": "$.agent_id",
            },  # fmt: skip
            "ItemProcessor": {
                "StartAt": "NodeWait",
                "States": {
                    "NodeWait": {
                        "Type": "Task",
                        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
                        "Parameters": {
                            "FunctionName": AGENT_ARN,
                            "Payload": {
                                "action": "park",
                                "task_token.$": "$$.Task.Token",
                                "job_id.$": "$$.Execution.Name",
                                "session_id.$": "$.session_id",
                                "agent_id.$": "$.agent_id",
                                "node.$": "$.node",
                                "interrupts.$": "$.interrupts",
                            },  # fmt: skip
                        },
                        "TimeoutSeconds": 120,
                        "ResultPath": "$.answer",
                        "Next": "NodeProceeds",
                    },
                    "NodeProceeds": {"Type": "Pass", "End": True},
                },
            },
            "End": True,
        }
    },
}


@pytest.fixture
def branches_api(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    from moto.awslambda_simple.models import LambdaSimpleBackend

    from elsai_lambdas import agent_handler

    def invoke(_self: Any, function_name: str, qualifier: Any, body: Any, headers: Any,
               response_headers: dict[str, str]) -> bytes:  # fmt: skip
        return json.dumps(
            agent_handler.handler(json.loads(body), FakeContext(function_name="elsai-agent"))
        ).encode()

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    config: Any = {
        "lambda": {"use_docker": False},
        "stepfunctions": {"execute_state_machine": True},
    }
    with mock_aws(config=config):
        api = _account(BRANCHES)
        yield api
        for execution in api.executions():
            if execution["status"] == "RUNNING":
                api.sfn.stop_execution(executionArn=execution["executionArn"])


def _proceeded(api: Api, job_id: str) -> list[str]:
    events = api.sfn.get_execution_history(executionArn=api.execution_arn(job_id))["events"]
    return [
        e["stateEnteredEventDetails"]["input"]
        for e in events
        if e.get("stateEnteredEventDetails", {}).get("name") == "NodeProceeds"
    ]


def _start(api: Api) -> str:
    job_id = "job-branches"
    job_input = {"session_id": "s-branches", "agent_id": "graph", "nodes": [_ask("a"), _ask("b")]}
    api.sfn.start_execution(
        stateMachineArn=api.machine_arn, name=job_id, input=json.dumps(job_input)
    )
    return job_id


def test_node_waits_are_answered_apart_each_once(branches_api: Api) -> None:
    api = branches_api
    job_id = _start(api)
    both = wait_until(
        lambda: (b := api.get_job(job_id).body).get("status") == "WAITING_FOR_INPUT"
        and len(b["interrupts"]) == 2 and b,
        what="both nodes parked",
    )  # fmt: skip
    assert sorted((i["node"], i["id"]) for i in both["interrupts"]) == [
        ("a", "ask-a"),
        ("b", "ask-b"),
    ]
    # a subset: node b only; its branch proceeds while node a still waits
    reply = api.answer(job_id, {"responses": [{"interruptId": "ask-b", "response": "yes"}]})
    assert (reply.status, reply.body["answered"]) == (200, ["ask-b"])
    proceeded = wait_until(lambda: _proceeded(api, job_id), what="node b proceeds")
    assert [json.loads(x)["node"] for x in proceeded] == ["b"]
    assert json.loads(proceeded[0])["answer"]["interrupt_responses"] == [
        {"interruptId": "ask-b", "response": "yes"}
    ]
    view = api.get_job(job_id).body
    assert view["status"] == "WAITING_FOR_INPUT"
    assert [(i["node"], i["id"]) for i in view["interrupts"]] == [("a", "ask-a")]
    # each wait is answered once; an unknown id and a partial node answer are refused
    again = api.answer(job_id, {"responses": [{"interruptId": "ask-b", "response": "no"}]})
    assert again.status == 409 and "already answered" in again.error_message()
    unknown = api.answer(job_id, {"responses": [{"interruptId": "ask-z", "response": "no"}]})
    assert unknown.status == 400
    assert api.describe(job_id)["status"] == "RUNNING"
    last = api.answer(job_id, {"responses": [{"interruptId": "ask-a", "response": "ok"}]})
    assert last.status == 200
    wait_until(lambda: api.describe(job_id)["status"] == "SUCCEEDED", what="job end")
    assert sorted(json.loads(x)["node"] for x in _proceeded(api, job_id)) == ["a", "b"]
    assert api.get_job(job_id).body["status"] == "SUCCEEDED"
