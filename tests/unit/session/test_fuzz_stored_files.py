"""Property-based fuzz of every stored file kind: loading succeeds validly or fails as documented.

Everything stored is untrusted data. For each kind of file (session.json, agent.json,
checkpoint.json, lease.json, a message file, a segment, multi_agent.json, a parked task token,
an answer claim) hypothesis corrupts a valid copy: random bytes, a truncation, a field of the
wrong JSON type, a huge number, deep nesting. Rebuilding the agent (or, for the kinds no agent
reads, calling their loader) must then either succeed, with a valid transcript, or raise one of
`DOCUMENTED`; any other exception type is a bug. The budget is the hypothesis profile: `ci` in
`make test`, `long` in `make fuzz` (tests/conftest.py). The cancel record is the jobs API's
(tests/unit/handlers/jobs_api/test_fuzz_stored_sessions.py).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.checkpoint.model import CheckpointException
from elsai.interrupt.model import InterruptError
from elsai.models import ScriptedModel
from elsai.multiagent.persistence import CursorStore, GraphCursor
from elsai.serverless.answers import AnswerRecord, InterruptAlreadyAnsweredError, claim_answer
from elsai.serverless.contract import service_keys
from elsai.serverless.parked import ParkedTaskToken, read_parked_token
from elsai.session import FileSessionManager
from elsai.session.layout import keys
from elsai.session.layout.records import SessionCorruptError
from elsai.session.read.segments import SEGMENT_SIZE
from elsai.session.storage import FileStorage, StorageError
from elsai.session.write.lease import LeaseRecord
from tests.support.transcripts import assert_valid_transcript

SID, AID, JOB = "s", "a", "job-1"
CYCLES = SEGMENT_SIZE // 2 + 1  # enough tool rounds for one full segment

#: What a load of a corrupt store may raise. ValueError covers id validation and the loaders
#: that report a record of the wrong shape by name (parked token, answer claim, the cursor's
#: JSON, InvocationMismatchError); SessionCorruptError and the rest are ElsaiErrors.
DOCUMENTED: tuple[type[BaseException], ...] = (
    SessionCorruptError,
    CheckpointException,
    StorageError,
    InterruptError,
    ValueError,
)

HUGE = [10**30, -(10**30), 2**63, 2**64 + 1, 10**12, -1, 0]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@tool
def step(n: int) -> str:
    """One step.

    Args:
        n: The step number.
    """
    return f"step {n} done"


def _agent(root: Path, responses: list[Any]) -> Agent:
    return Agent(
        model=ScriptedModel(responses, record=False),
        tools=[step],
        config=AgentConfig(
            agent_id=AID,
            session_manager=FileSessionManager(session_id=SID, storage_dir=str(root), fsync=False),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )


def _put(storage: FileStorage, key: str, data: bytes) -> None:
    current = storage.read(key)
    storage.replace(key, data, expected_version=current.version if current else None)


def _build_store(root: Path) -> None:
    """A valid store holding every file kind."""
    uses = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": f"t{i}", "name": "step", "input": {"n": i}}}],
        }
        for i in range(CYCLES)
    ]
    assert _agent(root, [*uses, "finished"])("go").stop_reason == "end_turn"
    storage = FileStorage(root)
    lease = LeaseRecord(
        owner="someone-else",
        pid=4_000_000,
        host="elsewhere",
        acquired_at="2000-01-01T00:00:00.000Z",
        renewed_at="2000-01-01T00:00:00.000Z",
        expires_at="2000-01-01T00:00:30.000Z",
    )
    _put(storage, keys.lease_key(SID, AID), lease.model_dump_json().encode())
    cursor = GraphCursor(id="g", run_id="r1", status="completed", task="hello")
    _put(storage, keys.multi_agent_key(SID), cursor.model_dump_json().encode())
    token = ParkedTaskToken(job_id=JOB, task_token="tok", interrupts=[{"id": "i1", "name": "ask"}])
    _put(storage, service_keys.job_token_key(JOB), token.model_dump_json().encode())
    answer = AnswerRecord(job_id=JOB, status="sent", answered=["i1"], digest="d", claimed_at=1.0)
    _put(storage, service_keys.job_answer_key(JOB, "tok"), answer.encode())


KINDS: dict[str, str] = {
    "session": keys.session_key(SID),
    "agent": keys.agent_key(SID, AID),
    "checkpoint": keys.checkpoint_key(SID, AID),
    "lease": keys.lease_key(SID, AID),
    "message": keys.message_key(SID, AID, 3),
    "segment": keys.segment_key(SID, AID, 0, SEGMENT_SIZE),
    "multi_agent": keys.multi_agent_key(SID),
    "parked_token": service_keys.job_token_key(JOB),
    "answer_claim": service_keys.job_answer_key(JOB, "tok"),
}
AGENT_KINDS = ["session", "agent", "checkpoint", "lease", "message", "segment"]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("valid-store")
    _build_store(root)
    for key in KINDS.values():
        assert Path(FileStorage(root).describe(key)).is_file(), key
    return root


def field_paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """Every field path (dict keys, list indices) down to depth 4."""
    out: list[tuple[Any, ...]] = []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    for key, item in items:
        out.append((*prefix, key))
        if depth < 4:
            out.extend(field_paths(item, (*prefix, key), depth + 1))
    return out[:200]


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _nested(depth: int) -> Any:
    value: Any = 1
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def corrupt(data: st.DataObject, valid: bytes) -> bytes:
    """One corruption of the valid file `valid`, drawn by hypothesis."""
    how = data.draw(
        st.sampled_from(["random", "truncate", "wrong_type", "huge", "deep"]), label="how"
    )
    if how == "random":
        return data.draw(st.binary(max_size=300), label="bytes")
    if how == "truncate":
        return valid[: data.draw(st.integers(0, len(valid) - 1), label="cut")]
    parsed = json.loads(valid)
    path = data.draw(st.sampled_from(field_paths(parsed)), label="field")
    if how == "wrong_type":
        old = _get(parsed, path)
        new = data.draw(JSON.filter(lambda v: type(v) is not type(old)), label="value")
    elif how == "huge":
        new = data.draw(st.sampled_from(HUGE), label="number")
    else:
        new = _nested(data.draw(st.integers(1, 200), label="depth"))
    _set(parsed, path, new)
    return json.dumps(parsed).encode()


def _corrupted_copy(template: Path, kind: str, data: st.DataObject, into: Path) -> FileStorage:
    root = into / "store"
    shutil.copytree(template, root)
    storage = FileStorage(root)
    file = Path(storage.describe(KINDS[kind]))
    file.write_bytes(corrupt(data, file.read_bytes()))
    return storage


def _documented_or_none(action: Callable[[], Any]) -> Any:
    """`action()`'s result, or None when it raised a documented error (any other propagates)."""
    try:
        return action()
    except DOCUMENTED:
        return None


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", AGENT_KINDS)
@given(data=st.data())
def test_a_corrupt_file_rebuilds_a_valid_agent_or_fails_as_documented(
    template: Path, kind: str, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as into:
        storage = _corrupted_copy(template, kind, data, Path(into))

        def rebuild_and_call() -> Agent:
            agent = _agent(Path(storage.root_dir), ["again", "and again", "once more"])
            agent("go on")
            return agent

        agent = _documented_or_none(rebuild_and_call)
        if agent is not None:
            assert_valid_transcript(agent.messages)


@pytest.mark.parametrize("kind", ["multi_agent", "parked_token", "answer_claim"])
@given(data=st.data())
def test_a_corrupt_record_loads_or_fails_as_documented(
    template: Path, kind: str, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as into:
        storage = _corrupted_copy(template, kind, data, Path(into))
        manager = FileSessionManager(
            session_id=SID, storage_dir=str(Path(storage.root_dir)), fsync=False
        )
        loaders: dict[str, Callable[[], Any]] = {
            "multi_agent": lambda: CursorStore(manager, "graph", "g").load(GraphCursor),
            "parked_token": lambda: read_parked_token(storage, JOB),
            "answer_claim": lambda: claim_answer(storage, JOB, "tok", [{"interruptId": "i1"}]),
        }
        try:
            loaders[kind]()
        except (*DOCUMENTED, InterruptAlreadyAnsweredError):
            pass  # the claim of an answered wait refuses a second answer, as documented


@pytest.mark.parametrize("claimed_at", ["1e30", "-1e30", "Infinity", "NaN"])
def test_an_answered_claim_with_an_impossible_time_still_refuses_a_second_answer(
    tmp_path: Path, claimed_at: str
) -> None:
    # Found by the fuzz: the refusal formatted the stored time and raised OverflowError.
    storage = FileStorage(tmp_path)
    record = AnswerRecord(job_id=JOB, status="sent", answered=["i1"], digest="d", claimed_at=1.0)
    data = record.encode().replace(b'"claimed_at":1.0', b'"claimed_at":' + claimed_at.encode())
    _put(storage, service_keys.job_answer_key(JOB, "tok"), data)
    with pytest.raises(InterruptAlreadyAnsweredError, match="unknown time"):
        claim_answer(storage, JOB, "tok", [{"interruptId": "i1"}])
