"""A Graph/Swarm job's per-node waits: which are open, and answering any subset of them.

Each waiting node has its own wait in the job's record (`elsai.serverless.node_waits`): an
answer is stored for its node, and the job runs that node while the others keep waiting.
The job parks a task token only when nothing but waits is left; an answer then sends it
(`{"answered": [...]}`) so the job plans again at once. An answer that arrives while the
job runs is only stored: the next Plan picks it up.
"""

import contextlib
from collections.abc import Callable
from typing import Any

from elsai.serverless import ParkedTaskToken
from elsai.serverless.answers import InterruptAlreadyAnsweredError
from elsai.serverless.contract import AGENT_FUNCTION_FIELD
from elsai.serverless.node_waits import (
    NodeWaits,
    UnknownInterruptError,
    answer_node_waits,
    forget_token,
    read_waits,
)
from elsai_lambdas.jobs_api import aws
from elsai_lambdas.jobs_api.errors import Conflict, InvalidRequest


def node_waits(job_id: str) -> NodeWaits | None:
    """The job's node waits record, or None if no node of it ever waited."""
    return read_waits(aws.storage(), job_id)


def open_interrupts(job_id: str) -> list[dict[str, Any]]:
    """The interrupts no answer was given to yet, each naming its node."""
    record = node_waits(job_id)
    return record.open_interrupts() if record is not None else []


def answer_waits(
    job_id: str,
    responses: list[dict[str, Any]],
    payload: Callable[[dict[str, Any]], str],
    send: Callable[[str, ParkedTaskToken, str], None],
    upgraded: str | None = None,
) -> list[str]:
    """Store the answers (any subset of the open waits) and wake the job if it is parked.

    A wait answered before is a Conflict (409) unless the same answers come again; an id no
    node asked is an InvalidRequest. `payload(answer)` is the token's output, `send` sends
    it; `upgraded` is the version an upgraded job resumes on. Returns the answered ids, sorted.
    """
    storage = aws.storage()
    try:
        record = answer_node_waits(storage, job_id, responses)
    except InterruptAlreadyAnsweredError as exc:
        raise Conflict(str(exc)) from None
    except UnknownInterruptError as exc:
        raise InvalidRequest(str(exc)) from None
    answered = sorted(str(r["interruptId"]) for r in responses)
    token = record.task_token
    if token is not None:
        answer: dict[str, Any] = {"answered": answered}
        if upgraded is not None:
            answer[AGENT_FUNCTION_FIELD] = upgraded
        parked = ParkedTaskToken(job_id=job_id, task_token=token)
        # a used token (another answer woke the job) is fine: this answer is stored
        with contextlib.suppress(Conflict):
            send(job_id, parked, payload(answer))
        forget_token(storage, job_id, token)
    return answered
