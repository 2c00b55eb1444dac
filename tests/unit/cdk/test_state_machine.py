"""The state machine's ASL, read from the synthesized template (moto runs it elsewhere)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from elsai.local.definition import state_machine_definition, state_machine_logical_id
from elsai.serverless.contract import (
    NON_RETRYABLE_ERRORS,
    PARK_RETRYABLE_ERRORS,
    RETRYABLE_ERRORS,
    THROTTLE_ERRORS,
)

AGENT_ARN = "arn:aws:lambda:eu-west-1:111122223333:function:agent"
# The Graph/Swarm path (elsai/cdk/multi_agent.py); tested in test_multi_agent.py.
MULTI_AGENT_STATES = {
    "StartMultiAgent", "Plan", "PlanRoute", "Nodes", "Fold", "FoldRoute", "NextBatch",
    "WaitForNodeResponses", "ResumeNodes", "UpgradeNodesOnResume", "ResumeNodesUpgraded", "MultiAgentResult", "MultiAgentCompleted", "MultiAgentFailed",
    "MultiAgentStepFailed", "CheckBatchBudget", "ContinueMultiAgent", "MultiAgentPrepareHandOff",
    "MultiAgentHandOff", "MultiAgentHandedOff", "MultiAgentContinued",
}  # fmt: skip
REQUIRED_RETRY_ERRORS = {
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Sandbox.Timedout",
    "Runtime.ExitError",
    "States.Timeout",
    "Lambda.Unknown",
    "States.TaskFailed",
}


@pytest.fixture(scope="module")
def asl(template_dict: dict[str, Any]) -> dict[str, Any]:
    return state_machine_definition(template_dict, {"AgentFunction": AGENT_ARN})


@pytest.fixture(scope="module")
def states(asl: dict[str, Any]) -> dict[str, Any]:
    return dict(asl["States"])


def _walk_strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in [k, *_walk_strings(v)]]
    if isinstance(node, list):
        return [s for v in node for s in _walk_strings(v)]
    return []


def test_machine_is_standard_traced_and_logged(template_dict: dict[str, Any]) -> None:
    props = template_dict["Resources"][state_machine_logical_id(template_dict)]["Properties"]
    assert props["StateMachineType"] == "STANDARD"
    assert props["StateMachineName"] == "ElsaiStack-jobs"
    assert props["TracingConfiguration"] == {"Enabled": True}
    logging = props["LoggingConfiguration"]
    assert logging["Level"] == "ALL" and logging["IncludeExecutionData"] is False


def test_definition_resolves_to_plain_asl(asl: dict[str, Any]) -> None:
    text = json.dumps(asl)
    assert "Fn::" not in text and '"Ref"' not in text and "${Token" not in text
    assert asl["StartAt"] == "PinVersion"  # then StartOrContinue (test_pinning.py)
    assert {s["Type"] for s in asl["States"].values()} == {
        "Pass",
        "Choice",
        "Task",
        "Succeed",
        "Fail",
        "Map",  # the Graph/Swarm path's node Map (test_multi_agent.py)
    }
    tasks = [s for s in asl["States"].values() if s["Type"] == "Task"]
    lambdas = [t for t in tasks if t["Resource"].startswith("arn:aws:states:::lambda:invoke")]
    # The job's own version, never the bare function (tests/unit/cdk/test_pinning.py).
    assert {t["Parameters"]["FunctionName.$"] for t in lambdas} == {"$.agent_function"}
    # the only other tasks: the continuations of single-agent and of Graph/Swarm jobs
    continuations = [t for t in tasks if t not in lambdas]
    assert len(continuations) == 2
    machine = "arn:aws:states:us-east-1:123456789012:stateMachine:ElsaiStack-jobs"
    for continuation in continuations:
        assert continuation["Resource"] == "arn:aws:states:::states:startExecution"
        assert continuation["Parameters"]["StateMachineArn"] == machine


def test_unresolvable_references_raise(template_dict: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="no single ARN"):
        state_machine_definition(template_dict, {"Nope": AGENT_ARN})


def test_state_names(states: dict[str, Any]) -> None:
    assert set(states) == {
        "Init", "CheckSliceBudget", "RunSlice", "RouteOnStatus", "NextSlice",
        "WaitForResponses", "ResumeSlice", "Completed", "JobFailed", "SliceTimedOut",
        "InterruptWaitTimedOut", "SliceBudgetExhausted", "UnknownSliceStatus",
        "StartOrContinue", "Continue", "PrepareHandOff", "HandOff", "HandedOff", "Continued",
        "PinVersion", "PinCurrentVersion", "UpgradeOnResume", "ResumeUpgraded",
    } | MULTI_AGENT_STATES  # fmt: skip


def test_run_slice_payload_result_and_timeout(states: dict[str, Any]) -> None:
    run = states["RunSlice"]
    assert run["Resource"] == "arn:aws:states:::lambda:invoke"
    assert run["Parameters"]["Payload"] == {
        "action": "run_slice",
        "job_id.$": "$.job_id",
        "execution_id.$": "$$.Execution.Id",
        "session_id.$": "$.session_id",
        "agent_id.$": "$.agent_id",
        "prompt.$": "$.prompt",
        "interrupt_responses.$": "$.interrupt_responses",
        "slice.$": "$.slice",
        "agent_function.$": "$.agent_function",
    }
    assert run["ResultSelector"] == {"Payload.$": "$.Payload"}
    assert run["ResultPath"] == "$.last"
    assert run["TimeoutSeconds"] == 930  # function timeout 900 + 30
    assert run["Next"] == "RouteOnStatus"


def test_run_slice_retries(states: dict[str, Any]) -> None:
    first, throttled, second = states["RunSlice"]["Retry"]
    # The conflict entry comes first: a matching retrier with MaxAttempts 0 means "never".
    assert first == {"ErrorEquals": list(NON_RETRYABLE_ERRORS), "MaxAttempts": 0}
    assert {"SessionConflictError", "ModelAccessDeniedError"} <= set(first["ErrorEquals"])
    # Throttling (reserved concurrency reached) waits longer than an ordinary failure.
    assert throttled["ErrorEquals"] == list(THROTTLE_ERRORS) == ["Lambda.TooManyRequestsException"]
    assert throttled["MaxAttempts"] == 8 and throttled["IntervalSeconds"] == 10
    assert throttled["MaxDelaySeconds"] == 300 and throttled["JitterStrategy"] == "FULL"
    assert REQUIRED_RETRY_ERRORS <= set(second["ErrorEquals"]) == set(RETRYABLE_ERRORS)
    assert "SessionConflictError" not in second["ErrorEquals"]
    assert second["JitterStrategy"] == "FULL"
    assert 1 <= second["MaxAttempts"] <= 10 and second["MaxAttempts"] == 5
    assert second["IntervalSeconds"] == 2 and second["BackoffRate"] == 2
    assert second["MaxDelaySeconds"] == 60


def test_catches_end_in_fail_states_with_real_causes(states: dict[str, Any]) -> None:
    for name, timeout_state in (
        ("RunSlice", "SliceTimedOut"),
        ("WaitForResponses", "InterruptWaitTimedOut"),
    ):
        catches = states[name]["Catch"]
        assert [c["ErrorEquals"] for c in catches] == [["States.Timeout"], ["States.ALL"]]
        assert [c["Next"] for c in catches] == [timeout_state, "JobFailed"]
        assert all(c["ResultPath"] == "$.error" for c in catches)
    failed = states["JobFailed"]
    assert failed["Type"] == "Fail"
    assert failed["ErrorPath"] == "$.error.Error"
    assert failed["CausePath"] == "States.Format('{}', $.error.Cause)"
    for name in (
        "SliceTimedOut",
        "InterruptWaitTimedOut",
        "SliceBudgetExhausted",
        "UnknownSliceStatus",
    ):
        assert states[name]["Type"] == "Fail"
        assert states[name]["Error"] == name and states[name]["Cause"]


def test_route_on_status(states: dict[str, Any]) -> None:
    route = states["RouteOnStatus"]
    assert {c["StringEquals"]: c["Next"] for c in route["Choices"]} == {
        "completed": "Completed",
        "continue": "NextSlice",
        "interrupted": "WaitForResponses",
        "orchestrate": "StartMultiAgent",  # a Graph/Swarm job (test_multi_agent.py)
    }
    assert all(c["Variable"] == "$.last.Payload.status" for c in route["Choices"])
    assert route["Default"] == "UnknownSliceStatus"
    assert states["Completed"] == {
        "Type": "Succeed",
        "Comment": states["Completed"]["Comment"],
        "OutputPath": "$.last.Payload",
    }


def test_slice_budget(states: dict[str, Any], custom_template_dict: dict[str, Any]) -> None:
    check = states["CheckSliceBudget"]
    assert check["Choices"] == [
        {"Variable": "$.slice", "NumericGreaterThanEquals": 200, "Next": "SliceBudgetExhausted"},
        {"Variable": "$.execution_slices", "NumericGreaterThanEquals": 255,
         "Next": "PrepareHandOff"},
    ]  # fmt: skip
    assert check["Default"] == "RunSlice"
    assert "ModelCallBudgetExhausted" not in states  # no maxModelCalls: no such check
    custom = state_machine_definition(custom_template_dict, {"AgentFunction": AGENT_ARN})
    assert custom["States"]["CheckSliceBudget"]["Choices"][0]["NumericGreaterThanEquals"] == 3
    calls = custom["States"]["CheckSliceBudget"]["Choices"][1]
    assert calls == {"Variable": "$.model_calls", "NumericGreaterThanEquals": 4,
                     "Next": "ModelCallBudgetExhausted"}  # fmt: skip
    failed = custom["States"]["ModelCallBudgetExhausted"]
    assert failed["Type"] == "Fail" and "4 model calls" in failed["Cause"]
    assert custom["States"]["RunSlice"]["TimeoutSeconds"] == 330
    assert custom["States"]["WaitForResponses"]["TimeoutSeconds"] == 2


def test_state_data_flow(states: dict[str, Any]) -> None:
    null = "States.StringToJson('null')"
    assert states["Init"]["Parameters"] == {
        "job_id.$": "$$.Execution.Name",
        "session_id.$": "$.session_id",
        "agent_id.$": "$.agent_id",
        "agent_function.$": "$.agent_function",
        "prompt.$": "$.prompt",
        "interrupt_responses.$": null,
        "slice": 0,
        "model_calls": 0,
        "execution_slices": 0,
        "execution_index": 0,
    }
    ids = {"job_id.$": "$.job_id", "session_id.$": "$.session_id", "agent_id.$": "$.agent_id",
           "agent_function.$": "$.agent_function", "slice.$": "States.MathAdd($.slice, 1)", "prompt.$": null,
           "model_calls.$": "States.MathAdd($.model_calls, $.last.Payload.model_calls)",
           "execution_slices.$": "States.MathAdd($.execution_slices, 1)",
           "execution_index.$": "$.execution_index"}  # fmt: skip
    assert states["NextSlice"]["Parameters"] == {**ids, "interrupt_responses.$": null}
    assert states["ResumeSlice"]["Parameters"] == {
        **ids,
        "interrupt_responses.$": "$.answer.interrupt_responses",
    }
    assert states["ResumeUpgraded"]["Parameters"] == {
        **ids,
        "agent_function.$": "$.answer.agent_function",
        "interrupt_responses.$": "$.answer.interrupt_responses",
    }
    assert (
        states["NextSlice"]["Next"]
        == states["ResumeSlice"]["Next"]
        == states["ResumeUpgraded"]["Next"]
        == "CheckSliceBudget"
    )


def test_wait_for_responses_parks_the_token(states: dict[str, Any]) -> None:
    wait = states["WaitForResponses"]
    assert wait["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
    assert wait["Parameters"]["Payload"] == {
        "action": "park",
        "task_token.$": "$$.Task.Token",
        "job_id.$": "$.job_id",
        "session_id.$": "$.session_id",
        "agent_id.$": "$.agent_id",
        "agent_function.$": "$.agent_function",
        "interrupts.$": "$.last.Payload.interrupts",
    }
    assert wait["ResultPath"] == "$.answer"
    assert wait["TimeoutSeconds"] == 7 * 24 * 3600
    assert wait["Next"] == "UpgradeOnResume"
    throttled, retry = wait["Retry"]
    assert throttled["ErrorEquals"] == ["Lambda.TooManyRequestsException"]
    assert retry["ErrorEquals"] == list(PARK_RETRYABLE_ERRORS)
    assert {"Sandbox.Timedout", "Runtime.ExitError", "Lambda.Unknown"} <= set(retry["ErrorEquals"])
    assert "States.Timeout" not in retry["ErrorEquals"]
    assert (
        "States.TaskFailed" not in retry["ErrorEquals"]
    )  # an API-side SendTaskFailure ends the job
    assert retry["JitterStrategy"] == "FULL" and retry["MaxAttempts"] == 5


def test_payloads_carry_pointers_not_transcripts(asl: dict[str, Any]) -> None:
    # Everything the machine moves is addressed by these paths; no message bodies.
    # ($.Payload is the Lambda response inside RunSlice's ResultSelector.)
    paths = {s for s in _walk_strings(asl) if s.startswith("$.") and s != "$.Payload"}
    allowed_roots = {
        "job_id",
        "session_id",
        "agent_id",
        "agent_function",
        "prompt",
        "interrupt_responses",
        "slice",
        "last",
        "answer",
        "error",
        "model_calls",
        "execution_slices",
        "execution_index",
        "handoff",
        "continued",
        "plan",
        "batch",
        "node",
        "started_at",
    }  # fmt: skip (the last: Graph/Swarm jobs)
    assert {p[2:].split(".")[0] for p in paths} <= allowed_roots
    assert len(json.dumps(asl)) < 24_000
