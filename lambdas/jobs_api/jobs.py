"""The job logic over Step Functions: start, describe, answer, and "is it waiting for input?".

No HTTP here: functions take plain values, return plain values, and refuse with the errors
of `jobs_api.errors`. A job is one execution of the Standard state machine, named by its job
id; a job waiting for human input has a parked task token (`elsai.serverless.parked`).
"""

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from elsai.serverless import ParkedTaskToken, executions, limits, read_parked_token
from elsai.serverless.answers import InterruptAlreadyAnsweredError, claim_answer
from elsai.serverless.contract import AGENT_FUNCTION_FIELD
from elsai.serverless.node_status import node_status
from elsai_lambdas.jobs_api import aws, node_waits
from elsai_lambdas.jobs_api.errors import Conflict, InvalidRequest, NotFound, TooLarge
from elsai_lambdas.jobs_api.status import public_status

_JOB_ID_RE = re.compile(limits.JOB_ID_PATTERN)  # execution names this API creates
_IDEMPOTENCY_KEY_RE = re.compile(limits.IDEMPOTENCY_KEY_PATTERN)


@dataclass(frozen=True)
class StartOutcome:
    """What `start_job` did: the job's ids, its status, and whether it already existed."""

    job_id: str
    session_id: str
    agent_id: str
    status: str
    replayed: bool


def check_job_id(job_id: str) -> str:
    """`job_id` if it can name an execution this API started; InvalidRequest otherwise."""
    if not _JOB_ID_RE.match(job_id):
        raise InvalidRequest(
            f"job id must be 1-{limits.MAX_JOB_ID_LENGTH} characters of letters, digits, '-' or '_'"
        )
    return job_id


def execution_arn(job_id: str) -> str:
    """The ARN of job `job_id`'s execution of the jobs state machine."""
    prefix, _, name = aws.machine_arn().rpartition(":stateMachine:")
    return f"{prefix}:execution:{name}:{check_job_id(job_id)}"


def job_name(idempotency_key: str | None) -> str:
    """A fresh execution name, or one derived from the client's Idempotency-Key."""
    from elsai_lambdas.jobs_api.owner import (  # tagged with the owner under isolation
        current,
        new_job_id,
    )

    if idempotency_key is None:
        return new_job_id(uuid.uuid4().hex)
    if not _IDEMPOTENCY_KEY_RE.fullmatch(idempotency_key):
        raise InvalidRequest(
            f"Idempotency-Key must be 1-{limits.MAX_IDEMPOTENCY_KEY_CHARS} visible ASCII "
            "characters (no spaces)"
        )
    digest = hashlib.sha256(utf8(idempotency_key, "Idempotency-Key")).hexdigest()
    # An owner's tag takes 26 characters: the digest shrinks so that continuation names
    # (<job_id>-c<N>) still fit Step Functions' 80.
    return new_job_id("idem-" + digest[: 48 if current() is None else 40])


def utf8(text: str, what: str) -> bytes:
    """`text` as UTF-8; InvalidRequest naming `what` if it holds lone surrogates."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # lone surrogates from "\ud800"-style JSON escapes
        raise InvalidRequest(f"{what} is not valid Unicode (unpaired surrogate)") from exc


def sfn_payload(data: Any, what: str) -> str:
    """JSON for Step Functions, refused early if it would break the 256 KiB cap."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if len(utf8(text, what)) > limits.MAX_SFN_PAYLOAD_BYTES:
        raise TooLarge(f"{what} is larger than Step Functions' 256 KiB limit once encoded")
    return text


def start_job(
    prompt: str,
    session_id: str | None,
    agent_id: str,
    idempotency_key: str | None,
    version_policy: str = "pinned",
) -> StartOutcome:
    """Start an execution; a repeated Idempotency-Key with the same input starts nothing new.

    The job is pinned to this deploy's agent function version (``versions.record_start``).
    """
    from elsai_lambdas.jobs_api import versions

    job_id = job_name(idempotency_key)
    session_id = session_id or job_id
    payload = {"session_id": session_id, "agent_id": agent_id, "prompt": prompt}
    job_input = sfn_payload(payload, "the job input")
    # A keyed retry of a job that exists (running or not) is a replay; Step Functions itself
    # only de-duplicates a *running* execution with identical input.
    status = _replay_status(job_id, payload) if idempotency_key is not None else None
    replayed = status is not None
    if not replayed:
        arn = versions.record_start(job_id, version_policy)
        if arn is not None:
            job_input = sfn_payload({**payload, AGENT_FUNCTION_FIELD: arn}, "the job input")
        try:
            aws.sfn().start_execution(
                stateMachineArn=aws.machine_arn(), name=job_id, input=job_input
            )
        except ClientError as exc:
            code = aws.error_code(exc)
            if code == "ExecutionAlreadyExists":  # lost a race with the same key
                status = _replay_status(job_id, payload)
                replayed = True
            elif code in ("InvalidExecutionInput", "InvalidName"):
                raise InvalidRequest(f"Step Functions refused the job: {code}") from exc
            else:
                raise
    return StartOutcome(job_id, session_id, agent_id, status or "RUNNING", replayed)


def _replay_status(job_id: str, payload: dict[str, Any]) -> str | None:
    """Status of job `job_id` if it exists with this input; Conflict if with another; else None."""
    try:
        existing = aws.sfn().describe_execution(executionArn=execution_arn(job_id))
    except ClientError as exc:
        if aws.error_code(exc) == "ExecutionDoesNotExist":
            return None
        raise
    started = _loads(existing.get("input"))
    if isinstance(started, dict):  # the version it was pinned to is not part of the request
        started.pop(AGENT_FUNCTION_FIELD, None)
    if started != payload:
        raise Conflict("this Idempotency-Key was already used with a different request body")
    return str(_chain(job_id).current["status"])  # a continued job is still running


def describe_job(job_id: str) -> dict[str, Any]:
    """Status; the result when SUCCEEDED, error and cause when it ended otherwise.

    A long job spans several executions (continuations); this follows them and reports one job.
    A RUNNING execution parked on its current task token reports WAITING_FOR_INPUT and the
    interrupts it waits on.
    """

    chain = _chain(job_id)
    out = executions.job_view(job_id, chain)
    out["status"] = public_status(chain.current, job_id)
    from elsai_lambdas.jobs_api.versions import version_view

    out.update(version_view(job_id, chain.current))
    if out.get("session_id"):  # a Graph/Swarm job: each node's status (from multi_agent.json)
        multi_agent = node_status(aws.storage(), str(out["session_id"]))
        if multi_agent is not None:
            out["multi_agent"] = multi_agent
    if out["status"] == "RUNNING":
        parked = read_parked_token(aws.storage(), job_id)
        if parked is not None and _waiting_on(chain.current["executionArn"], parked):
            out["status"] = "WAITING_FOR_INPUT"
            out["interrupts"] = parked.interrupts
        elif parked is None and (waiting := node_waits.open_interrupts(job_id)):
            # Graph/Swarm nodes waiting on their own (others may run): each names its node
            out["status"] = "WAITING_FOR_INPUT"
            out["interrupts"] = waiting
    return out


def _chain(job_id: str) -> executions.JobChain:
    try:
        return executions.follow_job(aws.sfn(), aws.machine_arn(), check_job_id(job_id))
    except executions.JobNotFoundError as exc:
        raise NotFound(f"no job {job_id!r}") from exc


def answer_job(job_id: str, responses: list[dict[str, Any]]) -> list[str]:
    """Send the parked task token with the answers; each pending interrupt exactly once.

    Returns the answered interrupt ids, sorted.
    """
    check_job_id(job_id)
    parked = read_parked_token(aws.storage(), job_id)
    if parked is None:
        _describe(job_id)  # NotFound for a job that does not exist
        if node_waits.node_waits(job_id) is not None:
            return _answer_nodes(job_id, responses)
        raise Conflict(f"job {job_id!r} is not waiting for interrupt responses")
    answered = [str(r["interruptId"]) for r in responses]
    if len(set(answered)) != len(answered):
        raise InvalidRequest("each interruptId may be answered only once per request")
    pending = parked.pending_ids()
    if pending and set(answered) != pending:
        current = _chain(job_id).current["executionArn"]
        if not _waiting_on(current, parked):  # a record left from an earlier wait
            raise Conflict(f"job {job_id!r} is not waiting for interrupt responses")
        missing, extra = sorted(pending - set(answered)), sorted(set(answered) - pending)
        raise InvalidRequest(
            f"answer every pending interrupt exactly: missing {missing}, unknown {extra}"
        )
    from elsai_lambdas.jobs_api.versions import resume_version

    answer: dict[str, Any] = {"interrupt_responses": responses}
    if (upgraded := resume_version(job_id)) is not None:  # the machine's UpgradeOnResume
        answer[AGENT_FUNCTION_FIELD] = upgraded
    output = sfn_payload(answer, "the responses")
    try:  # a conditional create makes a second answer a 409, even when two requests race
        claim = claim_answer(aws.storage(), job_id, parked.task_token, responses)
    except InterruptAlreadyAnsweredError as exc:
        raise Conflict(str(exc)) from None
    try:
        _send_answers(job_id, parked, output)
    except InvalidRequest:
        claim.failed()  # refused for a reason the caller can fix: let a corrected answer in
        raise
    claim.sent()
    return sorted(answered)


def _answer_nodes(job_id: str, responses: list[dict[str, Any]]) -> list[str]:
    """Answers to any subset of a Graph/Swarm job's open node waits (`node_waits`)."""
    from elsai_lambdas.jobs_api.versions import resume_version

    if len({str(r["interruptId"]) for r in responses}) != len(responses):
        raise InvalidRequest("each interruptId may be answered only once per request")
    if _chain(job_id).current["status"] != "RUNNING":
        raise Conflict(f"job {job_id!r} is not waiting for interrupt responses")
    sfn_payload({"interrupt_responses": responses}, "the responses")  # the size cap, early

    def payload(answer: dict[str, Any]) -> str:
        return sfn_payload(answer, "the responses")

    upgraded = resume_version(job_id)
    return node_waits.answer_waits(job_id, responses, payload, _send_answers, upgraded)


def _send_answers(job_id: str, parked: ParkedTaskToken, output: str) -> None:
    try:
        aws.sfn().send_task_success(taskToken=parked.task_token, output=output)
    except ClientError as exc:
        code = aws.error_code(exc)
        if code in ("TaskTimedOut", "InvalidToken", "TaskDoesNotExist"):
            raise Conflict(f"job {job_id!r} is no longer waiting for these responses") from exc
        if code == "InvalidOutput":
            raise InvalidRequest("Step Functions refused the responses as task output") from exc
        raise


def describe_chain(job_id: str) -> executions.JobChain:
    """The job's executions, first to current (continuations); NotFound if none."""
    return _chain(job_id)


def describe_execution(job_id: str) -> dict[str, Any]:
    """The job's current execution (the last of its continuation chain); NotFound if none."""
    return _chain(job_id).current


def loads(text: str | None) -> Any:
    """JSON from Step Functions (input, output), or the text itself if it is not JSON."""
    return _loads(text)


def _describe(job_id: str) -> dict[str, Any]:
    try:
        execution: dict[str, Any] = aws.sfn().describe_execution(executionArn=execution_arn(job_id))
    except ClientError as exc:
        if aws.error_code(exc) in ("ExecutionDoesNotExist", "InvalidArn"):
            raise NotFound(f"no job {job_id!r}") from exc
        raise
    return execution


def _loads(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text  # not JSON: hand it back as it is rather than fail the request


def _waiting_on(execution_arn: str, parked: ParkedTaskToken) -> bool:
    """Whether the execution waits on *this* token now (the record outlives its answer)."""
    return executions.waiting_on_token(aws.sfn(), execution_arn, parked.task_token)
