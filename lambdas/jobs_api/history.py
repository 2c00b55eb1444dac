"""The execution history of a job, read as progress: slices, retries, resumes, interrupts.

Step Functions history events carry the state they belong to only on ``TaskStateEntered``,
so reading from the middle needs a little context (which state runs, how many attempts
failed); `HistoryState` is that context, and it travels inside the events cursor.
"""

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from elsai_lambdas.jobs_api import aws

MAX_CAUSE_CHARS = 500
HISTORY_PAGE = 1000  # Step Functions' largest page
_FAILURES = frozenset({"TaskFailed", "TaskTimedOut", "TaskStartFailed", "TaskSubmitFailed"})
_ENDINGS = {
    "ExecutionSucceeded": "SUCCEEDED",
    "ExecutionFailed": "FAILED",
    "ExecutionAborted": "ABORTED",
    "ExecutionTimedOut": "TIMED_OUT",
}


class HistoryState(BaseModel):
    """What history events before the cursor said: the current state, slice and failures."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    state: str | None = Field(default=None, max_length=80)  # a state name (ASL caps it at 80)
    slice: int | None = Field(default=None, ge=0)
    failures: int = Field(default=0, ge=0)


def stamp(value: Any) -> str:
    """An event time as ISO-8601 UTC, seconds precision with a Z (as stored messages are)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _details(raw: dict[str, Any], kind: str) -> dict[str, Any]:
    name = kind[0].lower() + kind[1:] + "EventDetails"
    found = raw.get(name)
    return found if isinstance(found, dict) else {}


def _clip(text: Any) -> str | None:
    if text is None:
        return None
    value = str(text)
    return value if len(value) <= MAX_CAUSE_CHARS else value[:MAX_CAUSE_CHARS] + "…"


#: The states that wait for a person: a single agent's, and a Graph/Swarm job's park.
_WAITS = frozenset({"WaitForResponses", "WaitForNodeResponses"})


def _entered(raw: dict[str, Any], state: HistoryState) -> tuple[list[dict[str, Any]], HistoryState]:
    details = _details(raw, "StateEntered")
    name = str(details.get("name", ""))
    data = _json(details.get("input"))
    slice_no = data.get("slice") if isinstance(data, dict) else None
    if type(slice_no) is not int or slice_no < 0:  # bools and floats are not slice numbers
        slice_no = state.slice
    new = HistoryState(state=name[:80], slice=slice_no, failures=0)
    if name == "RunSlice":
        return [{"type": "slice_started", "slice": slice_no}], new
    if name in _WAITS:
        return [{"type": "waiting_for_input", "slice": slice_no}], new
    return [], new


def _slice_result(payload: dict[str, Any], slice_no: int | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if payload.get("resumed_from_checkpoint"):
        out.append(
            {"type": "resumed", "slice": slice_no, "position": payload.get("resume_position")}
        )
    out.append({
        "type": "slice_ended", "slice": slice_no, "status": payload.get("status"),
        "stop_reason": payload.get("stop_reason"), "cycles": payload.get("cycles"),
    })  # fmt: skip
    if payload.get("status") == "interrupted":
        asked = [
            {"id": i.get("id"), "name": i.get("name"), "reason": _clip(json.dumps(i.get("reason")))}
            for i in payload.get("interrupts") or []
            if isinstance(i, dict)
        ]
        out.append({"type": "interrupted", "slice": slice_no, "interrupts": asked})
    return out


def _succeeded(raw: dict[str, Any], state: HistoryState) -> list[dict[str, Any]]:
    output = _json(_details(raw, "TaskSucceeded").get("output"))
    payload = output.get("Payload") if isinstance(output, dict) else None
    if state.state == "RunSlice" and isinstance(payload, dict):
        return _slice_result(payload, state.slice)
    if state.state == "WaitForResponses" and isinstance(output, dict):
        answers = output.get("interrupt_responses") or []
        ids = [a.get("interruptId") for a in answers if isinstance(a, dict)]
        return [{"type": "answered", "slice": state.slice, "interrupt_ids": ids}]
    if state.state == "WaitForNodeResponses" and isinstance(output, dict):
        # a Graph/Swarm park: the answer that woke it (others may have been stored meanwhile)
        woke = [str(i) for i in output.get("answered") or []]
        return [{"type": "answered", "slice": state.slice, "interrupt_ids": woke}]
    return []


def convert(raw: dict[str, Any], state: HistoryState) -> tuple[list[dict[str, Any]], HistoryState]:
    """The public events one raw history event stands for, and the context after it."""
    kind = str(raw.get("type", ""))
    if kind == "TaskStateEntered":
        return _entered(raw, state)
    if kind == "TaskScheduled" and state.failures and state.state == "RunSlice":
        return [{"type": "retry", "slice": state.slice, "attempt": state.failures + 1}], state
    if kind in _FAILURES:
        details = _details(raw, kind)
        failed: dict[str, Any] = {
            "type": "attempt_failed", "state": state.state, "slice": state.slice,
            "error": details.get("error") or ("States.Timeout" if kind == "TaskTimedOut" else None),
            "cause": _clip(details.get("cause")),
        }  # fmt: skip
        return [failed], state.model_copy(update={"failures": state.failures + 1})
    if kind == "TaskSucceeded":
        return _succeeded(raw, state), state
    if kind in _ENDINGS:
        details = _details(raw, kind)
        event: dict[str, Any] = {"type": "job_ended", "status": _ENDINGS[kind]}
        if details.get("error") or details.get("cause"):
            event["error"] = details.get("error")
            event["cause"] = _clip(details.get("cause"))
        return [event], state
    return [], state


NODE_STATE = "NodeSlice"  # the state of a Graph's/Swarm's node slice (a Map branch)
MAX_CHAIN = 200  # events followed back to find an event's state (a slice's retries are fewer)


@dataclass(frozen=True)
class NodeAttempt:
    """Where a raw event of a node slice belongs: the node, its slice, failures before it."""

    node: str
    slice: int | None
    failures: int


def node_attempt(raw: dict[str, Any], seen: dict[int, dict[str, Any]]) -> NodeAttempt | None:
    """The node slice `raw` belongs to, following previousEventId back to where it entered.

    Map branches run side by side, so their events interleave; unlike the single-agent path,
    the order of events cannot say which state an event is of, but the chain of ids can.
    """
    failures, current = 0, raw
    for _ in range(MAX_CHAIN):
        kind = str(current.get("type", ""))
        if kind == "TaskStateEntered":
            if str(_details(current, "StateEntered").get("name")) != NODE_STATE:
                return None
            data = _json(_details(current, "StateEntered").get("input"))
            data = data if isinstance(data, dict) else {}
            slice_no = data.get("slice")
            node = str(data.get("node") or "")[:MAX_CAUSE_CHARS]
            return NodeAttempt(node, slice_no if type(slice_no) is int else None, failures)
        if kind.endswith("StateExited") or kind.endswith("StateEntered"):
            return None  # another state's event: the chain left the node slice
        if current is not raw and kind in _FAILURES:
            failures += 1
        previous = current.get("previousEventId")
        if type(previous) is not int or previous not in seen:
            return None
        current = seen[previous]
    return None


def _node_events(raw: dict[str, Any], where: NodeAttempt) -> list[dict[str, Any]]:
    """The public events of a node slice's raw event; each names its node."""
    kind = str(raw.get("type", ""))
    base = {"node": where.node, "slice": where.slice}
    if kind == "TaskStateEntered":
        return [{"type": "slice_started", **base}]
    if kind == "TaskScheduled" and where.failures:
        return [{"type": "retry", **base, "attempt": where.failures + 1}]
    if kind in _FAILURES:
        details = _details(raw, kind)
        return [{
            "type": "attempt_failed", "state": NODE_STATE, **base,
            "error": details.get("error") or ("States.Timeout" if kind == "TaskTimedOut" else None),
            "cause": _clip(details.get("cause")),
        }]  # fmt: skip
    if kind == "TaskSucceeded":
        output = _json(_details(raw, "TaskSucceeded").get("output"))
        payload = output.get("Payload") if isinstance(output, dict) else None
        if isinstance(payload, dict):
            return [{**e, "node": where.node} for e in _slice_result(payload, where.slice)]
    return []


@dataclass(frozen=True)
class HistoryPage:
    """Public events after a cursor, each with its raw id and the context after it.

    `scanned_id` / `scanned_state`: how far the scan got, for a page that takes every event.
    """

    events: list[tuple[dict[str, Any], int, HistoryState]]
    scanned_id: int
    scanned_state: HistoryState
    #: The scan reached the history's end (False: it stopped at `limit`).
    complete: bool = False


def history_events(
    execution_arn: str, after_id: int, state: HistoryState, limit: int
) -> HistoryPage:
    """Public events after raw event `after_id`, at most `limit` of them.

    Stops before the first raw event whose events would go past `limit` (never splits one).
    """
    out: list[tuple[dict[str, Any], int, HistoryState]] = []
    seen: dict[int, dict[str, Any]] = {}
    scanned = after_id
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"executionArn": execution_arn, "maxResults": HISTORY_PAGE}
        if token:
            kwargs["nextToken"] = token
        page = aws.sfn().get_execution_history(**kwargs)
        for raw in sorted(page.get("events", []), key=lambda e: int(e.get("id", 0))):
            raw_id = int(raw.get("id", 0))
            seen[raw_id] = raw
            if raw_id <= scanned:
                continue
            where = node_attempt(raw, seen)
            if where is None:
                events, after = convert(raw, state)
            else:  # a node slice's event leaves the single-agent context as it is
                events, after = _node_events(raw, where), state
            if out and len(out) + len(events) > limit:
                return HistoryPage(events=out, scanned_id=scanned, scanned_state=state)
            at = stamp(raw.get("timestamp"))
            out.extend(({**e, "id": raw_id, "at": at}, raw_id, after) for e in events)
            scanned, state = raw_id, after
        token = page.get("nextToken")
        if not token:
            return HistoryPage(events=out, scanned_id=scanned, scanned_state=state, complete=True)
