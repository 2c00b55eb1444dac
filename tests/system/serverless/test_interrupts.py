"""Human in the loop: an interrupt parks the task token, the API answers it, the job completes."""

from __future__ import annotations

from elsai.serverless.contract import service_keys
from tests.system.local_stack import LocalStack
from tests.system.serverless.helpers import assert_valid_conversation


def test_interrupt_waits_for_the_answer_through_the_api_then_completes(stack: LocalStack) -> None:
    rt = stack.rt
    job = rt.jobs.start("Refund order 42", agent_id="approver")
    waiting = rt.wait(job.job_id, timeout=60)

    assert waiting.status == "WAITING_FOR_INPUT", waiting
    (interrupt,) = waiting.interrupts or []
    assert interrupt.name == "approve_refund" and interrupt.reason == {"order_id": "42"}
    parked = rt.read_json(service_keys.job_token_key(job.job_id))
    assert parked["task_token"] and parked["interrupts"] == [interrupt.as_dict()]
    history = rt.history(job.job_id)
    entered = [
        e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e
    ]
    assert entered[-1] == "WaitForResponses"
    assert (
        rt.sfn.describe_execution(executionArn=rt.execution_arn(job.job_id))["status"] == "RUNNING"
    )
    assert stack.ledger(job.session_id) == []  # nothing refunded before the answer

    answered = rt.jobs.answer(job.job_id, [{"interruptId": interrupt.id, "response": "approve"}])
    assert answered.status == "RUNNING"
    final = rt.wait(job.job_id, timeout=60)

    assert final.status == "SUCCEEDED", final
    assert final.result["text"] == "Done: Refund of order 42 approved and paid"
    records = rt.slices(job.job_id)
    assert [r.result["status"] for r in records if r.result] == ["interrupted", "completed"]
    assert records[1].event["interrupt_responses"] == [
        {"interruptId": interrupt.id, "response": "approve"}
    ]
    assert [x["tool"] for x in stack.ledger(job.session_id)] == ["refund"]  # refunded exactly once
    messages = stack.transcript(job.session_id, "approver")
    assert_valid_conversation(messages)
    assert stack.bookmark(job.session_id, "approver")["execution_status"] == "completed"
