"""A Graph/Swarm job's per-node waits: which are open, and answering any subset of them.

Each waiting node parks its own task token (`elsai.serverless.parked`, `node` set), so one
node's answer is sent while its siblings keep waiting or running. A node wait is open until
its token was sent (`answer_sent`); the history check of the job's one wait does not apply,
since parallel branches interleave their events.
"""

from collections.abc import Callable
from typing import Any

from elsai.serverless import ParkedTaskToken, read_node_waits
from elsai.serverless.answers import InterruptAlreadyAnsweredError, answer_sent, claim_answer
from elsai_lambdas.jobs_api import aws
from elsai_lambdas.jobs_api.errors import Conflict, InvalidRequest


def node_waits(job_id: str) -> list[ParkedTaskToken]:
    """Every node wait the job parked (open or answered), by node name."""
    return read_node_waits(aws.storage(), job_id)


def open_waits(job_id: str, waits: list[ParkedTaskToken] | None = None) -> list[ParkedTaskToken]:
    """The node waits not answered yet."""
    storage = aws.storage()
    found = node_waits(job_id) if waits is None else waits
    return [w for w in found if not answer_sent(storage, job_id, w.task_token)]


def answer_waits(
    job_id: str,
    waits: list[ParkedTaskToken],
    responses: list[dict[str, Any]],
    payload: Callable[[list[dict[str, Any]]], str],
    send: Callable[[str, ParkedTaskToken, str], None],
) -> list[str]:
    """Send each answered node's token with its answers; any subset of the open waits.

    Every interrupt of a node named in `responses` must be answered (one token per node);
    an interrupt of a wait already answered is a Conflict (409). `payload(answers)` is the
    token's output, `send(job_id, wait, output)` sends it. Returns the answered interrupt ids, sorted.
    """
    opened = {w.task_token for w in open_waits(job_id, waits)}
    owner = {iid: w for w in waits for iid in w.pending_ids()}
    groups: dict[str, list[dict[str, Any]]] = {}
    for response in responses:
        iid = str(response["interruptId"])
        wait = owner.get(iid)
        if wait is None:
            raise InvalidRequest(f"interrupt {iid!r} is not one this job's nodes asked")
        if wait.task_token not in opened:
            raise Conflict(f"interrupt {iid!r} of node {wait.node!r} was already answered")
        groups.setdefault(wait.task_token, []).append(response)
    chosen = [w for w in waits if w.task_token in groups]
    for wait in chosen:
        missing = sorted(
            wait.pending_ids() - {str(r["interruptId"]) for r in groups[wait.task_token]}
        )
        if missing:
            raise InvalidRequest(f"answer every interrupt of node {wait.node!r}: missing {missing}")
    outputs = {w.task_token: payload(groups[w.task_token]) for w in chosen}  # all checked first
    for wait in chosen:
        _send_one(job_id, wait, groups[wait.task_token], outputs[wait.task_token], send)
    return sorted(str(r["interruptId"]) for r in responses)


def _send_one(
    job_id: str,
    wait: ParkedTaskToken,
    answers: list[dict[str, Any]],
    output: str,
    send: Callable[[str, ParkedTaskToken, str], None],
) -> None:
    try:  # a conditional create makes a second answer a 409, even when two requests race
        claim = claim_answer(aws.storage(), job_id, wait.task_token, answers)
    except InterruptAlreadyAnsweredError as exc:
        raise Conflict(str(exc)) from None
    try:
        send(job_id, wait, output)
    except InvalidRequest:
        claim.failed()
        raise
    claim.sent()
