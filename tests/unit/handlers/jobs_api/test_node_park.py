"""A Graph/Swarm job's node waits through the real handlers: parked once, answered apart.

moto executes a small machine around the agent handler's real `park_nodes` step (the same
task and Catch the job machine has): Park -> Woken -> Park again. The waits are stored as
Fold stores them (`record_waits`); the jobs API answers a subset, which wakes the park; the
second park then finds that answer still unused and the machine plans again
(AnswersWaitingError) instead of sleeping on it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from moto import mock_aws

from elsai.serverless.node_waits import read_waits, record_waits
from elsai.session.storage.s3 import S3Storage
from tests.unit.handlers.jobs_api.conftest import _account
from tests.unit.handlers.jobs_api.helpers import (
    AGENT_ARN,
    BUCKET,
    Api,
    FakeContext,
    wait_until,
)

JOB = "job-waits"


def _park(next_state: str) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {
            "FunctionName": AGENT_ARN,
            "Payload": {
                "action": "park_nodes",
                "task_token.$": "$$.Task.Token",
                "job_id.$": "$$.Execution.Name",
                "session_id.$": "$.session_id",
            },  # fmt: skip
        },
        "TimeoutSeconds": 120,
        "ResultPath": "$.answer",
        "Catch": [
            {"ErrorEquals": ["AnswersWaitingError"], "ResultPath": "$.answer", "Next": "PlanAgain"}
        ],  # fmt: skip
        "Next": next_state,
    }


MACHINE = {
    "StartAt": "Park",
    "States": {
        "Park": _park("Woken"),
        "Woken": {"Type": "Pass", "Next": "ParkAgain"},
        "ParkAgain": _park("Woken"),
        "PlanAgain": {"Type": "Pass", "End": True},
    },
}


@pytest.fixture
def machine_api(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    from moto.awslambda_simple.models import LambdaSimpleBackend

    from elsai_lambdas import agent_handler

    def invoke(_self: Any, function_name: str, qualifier: Any, body: Any, headers: Any,
               response_headers: dict[str, str]) -> bytes:  # fmt: skip
        try:  # a raised error reaches the machine by its class name, as Lambda reports it
            out: Any = agent_handler.handler(
                json.loads(body), FakeContext(function_name="elsai-agent")
            )
        except Exception as exc:
            response_headers["x-amz-function-error"] = "Unhandled"
            out = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
        return json.dumps(out).encode()

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    config: Any = {
        "lambda": {"use_docker": False},
        "stepfunctions": {"execute_state_machine": True},
    }
    with mock_aws(config=config):
        api = _account(MACHINE)
        yield api
        for execution in api.executions():
            if execution["status"] == "RUNNING":
                api.sfn.stop_execution(executionArn=execution["executionArn"])


def _ask(node: str, *ids: str) -> list[dict[str, Any]]:
    return [{"id": i, "name": "approve", "reason": node, "node": node} for i in ids]


def _entered(api: Api, state: str) -> list[dict[str, Any]]:
    events = api.sfn.get_execution_history(executionArn=api.execution_arn(JOB))["events"]
    return [
        json.loads(e["stateEnteredEventDetails"]["input"])
        for e in events
        if e.get("stateEnteredEventDetails", {}).get("name") == state
    ]


def test_a_subset_is_answered_the_park_wakes_and_an_unused_answer_is_never_slept_on(
    machine_api: Api,
) -> None:
    api = machine_api
    storage = S3Storage(BUCKET, client=api.s3)
    record_waits(storage, JOB, [*_ask("a", "ask-a1", "ask-a2"), *_ask("b", "ask-b")], [], 1)
    api.sfn.start_execution(stateMachineArn=api.machine_arn, name=JOB,
                            input=json.dumps({"session_id": "s-waits"}))  # fmt: skip
    waiting = wait_until(
        lambda: (b := api.get_job(JOB).body).get("status") == "WAITING_FOR_INPUT" and b,
        what="the job reports its nodes' waits",
    )
    assert sorted((i["node"], i["id"]) for i in waiting["interrupts"]) == [
        ("a", "ask-a1"), ("a", "ask-a2"), ("b", "ask-b"),
    ]  # fmt: skip
    wait_until(lambda: read_waits(storage, JOB).task_token, what="the park stored its token")
    # a node is answered as a whole; an id no node asked is refused
    partial = api.answer(JOB, {"responses": [{"interruptId": "ask-a1", "response": "x"}]})
    assert partial.status == 400 and "missing ['ask-a2']" in partial.error_message()
    unknown = api.answer(JOB, {"responses": [{"interruptId": "ask-z", "response": "x"}]})
    assert unknown.status == 400
    reply = api.answer(JOB, {"responses": [{"interruptId": "ask-b", "response": "yes"}]})
    assert (reply.status, reply.body["answered"]) == (200, ["ask-b"])

    wait_until(lambda: api.describe(JOB)["status"] == "SUCCEEDED", what="the machine ends")
    (woken,) = _entered(api, "Woken")
    assert woken["answer"] == {"answered": ["ask-b"]}  # the park's token, sent once
    (again,) = _entered(api, "PlanAgain")
    assert again["answer"]["Error"] == "AnswersWaitingError"  # b's answer not used yet
    record = read_waits(storage, JOB)
    assert record is not None and record.task_token is None
    assert record.answered() == {"b": [{"interruptId": "ask-b", "response": "yes"}]}
    assert [(i["node"], i["id"]) for i in record.open_interrupts()] == [
        ("a", "ask-a1"), ("a", "ask-a2"),
    ]  # fmt: skip
