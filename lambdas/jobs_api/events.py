"""A job's progress as a paged list of events: stored messages plus the execution history.

Two sources, each read in its own order: the agent's stored messages (by index, from the
session store) and the execution's Step Functions history (by event id). A page merges both
by time and hands back an opaque cursor that remembers how far each source was read, so
following a job never repeats or skips an event, whatever the page size. No HTTP here.

Every event is bounded: texts and tool inputs are truncated (``truncated: true`` says so),
and a page stops early once its encoded size reaches `MAX_PAGE_BYTES`.
"""

import base64
import binascii
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from elsai.serverless import limits
from elsai.session.inspect.snapshot import read_message
from elsai.session.layout import keys
from elsai.session.storage.base import StorageBackend
from elsai_lambdas.jobs_api import aws, jobs
from elsai_lambdas.jobs_api.corrupt import READ_ERRORS, corrupt_session
from elsai_lambdas.jobs_api.errors import InvalidRequest
from elsai_lambdas.jobs_api.history import HistoryState, history_events, stamp
from elsai_lambdas.jobs_api.status import public_status

MAX_TEXT_CHARS = 2_000
MAX_TOOL_INPUT_CHARS = 500
MAX_NAME_CHARS = 200  # ids, names, roles, statuses
MAX_BLOCKS = 20  # tool calls (and results) shown per message
MAX_PAGE_BYTES = 256 * 1024


class Cursor(BaseModel):
    """How far a client has read: the next message index and the last history event id."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    m: int | None = Field(default=None, ge=0)  # next message index (None: not located yet)
    e: int = Field(default=0, ge=0)  # the execution of the chain being read (0: the first)
    h: int = Field(default=0, ge=0)  # last history event id handed out, in execution `e`
    s: HistoryState = HistoryState()


def encode_cursor(cursor: Cursor) -> str:
    """The cursor as URL-safe text (opaque to clients)."""
    raw = cursor.model_dump_json(exclude_defaults=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(text: str | None) -> Cursor:
    """A cursor from `encode_cursor`; InvalidRequest for anything else."""
    if not text:
        return Cursor()
    if len(text) > limits.MAX_CURSOR_CHARS:
        raise InvalidRequest("the cursor is not one this API handed out")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        return Cursor.model_validate_json(raw)
    except (binascii.Error, ValueError, ValidationError, UnicodeError) as exc:
        raise InvalidRequest("the cursor is not one this API handed out") from exc


def check_limit(text: str | None, maximum: int = limits.MAX_EVENTS_PAGE) -> int:
    """The page size asked for, 1..maximum (`DEFAULT_PAGE`, or maximum if lower, when absent)."""
    if text is None or text == "":
        return min(limits.DEFAULT_PAGE, maximum)
    if not (text.isascii() and text.isdigit() and len(text) <= 6 and 1 <= int(text) <= maximum):
        raise InvalidRequest(f"limit must be a whole number from 1 to {maximum}")
    return int(text)


def clip(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to `limit` characters, and whether it was cut."""
    return (text, False) if len(text) <= limit else (text[:limit], True)


def _block(block: dict[str, Any]) -> tuple[str, dict[str, Any] | str, bool]:
    """One content block as (kind, shown, cut): "text", "call" or "result" ("" to skip)."""
    if "text" in block:
        return "text", str(block["text"]), False
    if isinstance(block.get("toolUse"), dict):
        use = block["toolUse"]
        shown, cut = clip(json.dumps(use.get("input"), ensure_ascii=False), MAX_TOOL_INPUT_CHARS)
        return "call", {"id": _short(use.get("toolUseId")), "name": _short(use.get("name")),
                        "input": shown}, cut  # fmt: skip
    if isinstance(block.get("toolResult"), dict):
        result = block["toolResult"]
        parts = [c for c in result.get("content") or [] if isinstance(c, dict) and "text" in c]
        shown, cut = clip(" ".join(str(c["text"]) for c in parts), MAX_TOOL_INPUT_CHARS)
        return "result", {"id": _short(result.get("toolUseId")),
                          "status": _short(result.get("status")), "text": shown}, cut  # fmt: skip
    return "", "", False


def _short(value: Any) -> str | None:
    return None if value is None else clip(str(value), MAX_NAME_CHARS)[0]


def message_event(index: int, record: dict[str, Any]) -> dict[str, Any]:
    """One stored message as an event: role, text and tool calls, each bounded."""
    stored = record.get("message")
    message: dict[str, Any] = stored if isinstance(stored, dict) else {}
    shown: dict[str, list[Any]] = {"text": [], "call": [], "result": []}
    cut = False
    for block in message.get("content") or []:
        kind, value, was_cut = _block(block) if isinstance(block, dict) else ("", "", False)
        if kind:
            shown[kind].append(value)
            cut |= was_cut
    text, was_cut = clip("".join(shown["text"]), MAX_TEXT_CHARS)
    calls, results = shown["call"][:MAX_BLOCKS], shown["result"][:MAX_BLOCKS]
    cut |= was_cut or len(calls) < len(shown["call"]) or len(results) < len(shown["result"])
    event: dict[str, Any] = {
        "type": "message",
        "at": record.get("created_at"),
        "index": index,
        "role": _short(message.get("role")),
        "text": text,
        "tool_calls": calls,
        "tool_results": results,
    }
    if cut:
        event["truncated"] = True
    return event


def _first_index(storage: StorageBackend, session_id: str, agent_id: str, since: str) -> int:
    """Index of the first message written at or after `since` (binary search on created_at).

    A session may hold earlier jobs' messages; this job's start after its execution began.
    """
    indices = sorted(
        i
        for i in (
            keys.message_index(k) for k in storage.list(keys.messages_prefix(session_id, agent_id))
        )
        if i is not None
    )
    low, high = 0, len(indices)
    while low < high:
        mid = (low + high) // 2
        obj = storage.read(keys.message_key(session_id, agent_id, indices[mid]))
        created = json.loads(obj.data).get("created_at", "") if obj is not None else ""
        if created < since:
            low = mid + 1
        else:
            high = mid
    return indices[low] if low < len(indices) else (indices[-1] + 1 if indices else 0)


def _messages(
    storage: StorageBackend, session_id: str, agent_id: str, start: int, limit: int
) -> list[dict[str, Any]]:
    found = storage.read_many(
        [keys.message_key(session_id, agent_id, i) for i in range(start, start + limit)]
    )
    out = []
    for offset, obj in enumerate(found):
        if obj is None:  # messages are contiguous: the first gap is the end for now
            break
        index = start + offset
        key = keys.message_key(session_id, agent_id, index)
        record, problems = read_message(storage, index, key, obj.data)
        if record is None:
            raise corrupt_session(storage, session_id, problems)
        out.append(
            message_event(index, {"created_at": record.created_at, "message": record.message})
        )
    return out


Position = tuple[int, int]  # a history event: (execution in the chain, raw event id)
Unit = tuple[
    str, list[dict[str, Any]], int | Position, HistoryState | None
]  # at, events, where, state
Found = list[tuple[dict[str, Any], Position, HistoryState]]


_STARTERS = frozenset({"slice_started", "retry", "answered"})


def _key(unit: Unit) -> tuple[str, int]:
    """Order within one second (stored messages have seconds precision).

    What starts a slice comes before its messages, everything else after them.
    """
    kind = unit[1][0]["type"]
    return unit[0], 0 if kind in _STARTERS else 1 if kind == "message" else 2


def _units(messages: list[dict[str, Any]], found: Found) -> list[Unit]:
    """Messages one by one and history events grouped by raw event, merged by time.

    A merge, not a sort: each source keeps its own order, so a cursor can name a prefix of each.
    """
    history: list[Unit] = []
    for event, where, state in found:
        if history and history[-1][2] == where:
            history[-1][1].append(event)
        else:
            history.append((str(event["at"]), [event], where, state))
    own: list[Unit] = [(str(m["at"]), [m], int(m["index"]), None) for m in messages]
    out: list[Unit] = []
    i = j = 0
    while i < len(own) or j < len(history):
        if j >= len(history) or (i < len(own) and _key(own[i]) <= _key(history[j])):
            out.append(own[i])
            i += 1
        else:
            out.append(history[j])
            j += 1
    return out


def chain_history(
    arns: tuple[str, ...], cursor: Cursor, limit: int
) -> tuple[Found, Position, HistoryState, bool]:
    """History events of each execution of the chain from the cursor's on, at most `limit`.

    An execution that continued the job ends in `continued` (`execution`: the number of the
    next one), not `job_ended`: the job ends once, in its last execution. Returns the events
    and how far the scan got (for a page that takes every event), and whether the scan got to
    the end of the history there is (False: `limit` cut it short).
    """
    found: Found = []
    scanned, state = (cursor.e, cursor.h), cursor.s
    # a scan cut short by `limit` holds later events back: so must the messages after them
    complete = True
    while scanned[0] < len(arns) and len(found) < limit:
        index = scanned[0]
        page = history_events(arns[index], scanned[1], state, limit - len(found))
        last = index == len(arns) - 1
        for event, raw_id, after_state in page.events:
            if not last and event["type"] == "job_ended" and event["status"] == "SUCCEEDED":
                event = {"type": "continued", "execution": index + 2,
                         "id": event["id"], "at": event["at"]}  # fmt: skip
            found.append((event, (index, raw_id), after_state))
        scanned, state = (index, page.scanned_id), page.scanned_state
        complete = page.complete
        if last or not page.complete:
            break
        scanned, state = (index + 1, 0), HistoryState()  # its history is its own
        complete = False  # until that execution is scanned
    return found, scanned, state, complete


def job_events(job_id: str, after: str | None, limit: int) -> dict[str, Any]:
    """A page of job `job_id`'s events after cursor `after`, and the cursor to continue from.

    The events span the job's whole continuation chain: the messages since the job began, and
    each execution's history in turn.
    """
    cursor = decode_cursor(after)
    chain = jobs.describe_chain(job_id)
    execution = chain.first
    ids = jobs.loads(execution.get("input"))
    ids = ids if isinstance(ids, dict) else {}
    session_id = str(ids.get("session_id") or job_id)
    agent_id = str(ids.get("agent_id") or "agent")
    storage = aws.storage()
    start = cursor.m
    if start is None:
        try:
            start = _first_index(storage, session_id, agent_id, stamp(execution["startDate"]))
        except READ_ERRORS as exc:
            raise corrupt_session(storage, session_id) from exc
    # History first: a slice writes its messages before Step Functions records its end, so
    # every message an event shown here follows is already stored when messages are read.
    history, scanned, scanned_state, complete = chain_history(chain.arns, cursor, limit)
    messages = _messages(storage, session_id, agent_id, start, limit)
    units = _units(messages, history)
    if not complete:  # the next history event may come before these messages: the next page
        held = [i for i, u in enumerate(units) if u[3] is not None]
        units = units[: held[-1] + 1] if held else units
    page: list[dict[str, Any]] = []
    size, next_m, taken = 0, start, 0
    last_h: Position = (cursor.e, cursor.h)
    state = cursor.s
    for _at, events, position, after_state in units:
        size += sum(len(json.dumps(e, ensure_ascii=False).encode()) for e in events)
        if page and (len(page) + len(events) > limit or size > MAX_PAGE_BYTES):
            break
        page.extend(events)
        taken += 1
        if isinstance(position, int):
            next_m = position + 1
        else:
            last_h, state = position, after_state or state
    if all(u[3] is None for u in units[taken:]):  # every history event found was taken
        last_h, state = scanned, scanned_state
    status = public_status(chain.current, job_id)
    for event in page:  # history says ABORTED for any stop; a cancelled job ended CANCELLED
        if event["type"] == "job_ended" and event["status"] == "ABORTED":
            event["status"] = status
    return {
        "job_id": job_id,
        "status": status,
        "events": page,
        "cursor": encode_cursor(Cursor(m=next_m, e=last_h[0], h=last_h[1], s=state)),
    }
