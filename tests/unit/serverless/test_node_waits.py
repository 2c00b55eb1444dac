"""A Graph/Swarm job's node waits record: synced with each fold, answered apart, parked safely."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elsai.errors import SessionConflictError
from elsai.serverless.answers import InterruptAlreadyAnsweredError
from elsai.serverless.contract import service_keys
from elsai.serverless.node_waits import (
    AnswersWaitingError,
    UnknownInterruptError,
    answer_node_waits,
    forget_token,
    park_nodes,
    read_waits,
    record_waits,
)
from elsai.session import FileSessionManager
from elsai.session.storage.base import StorageBackend


@pytest.fixture
def storage(tmp_path: Path) -> StorageBackend:
    return FileSessionManager(session_id="s1", storage_dir=str(tmp_path), fsync=False).storage


def _ask(node: str, iid: str) -> dict[str, Any]:
    return {"id": iid, "name": "approve", "reason": node, "node": node}


def _yes(iid: str, text: str = "yes") -> dict[str, Any]:
    return {"interruptId": iid, "response": text}


def test_fold_records_each_nodes_wait_and_an_answered_node_that_ran_closes_its_own(
    storage: StorageBackend,
) -> None:
    record_waits(storage, "j", [_ask("a", "ia"), _ask("b", "ib")], ["a", "b"], batch=1)
    record = read_waits(storage, "j")
    assert record is not None and set(record.waits) == {"a", "b"}
    assert [(i["node"], i["id"]) for i in record.open_interrupts()] == [("a", "ia"), ("b", "ib")]
    assert json.loads(storage.read(service_keys.node_waits_key("j")).data)["job_id"] == "j"  # type: ignore[union-attr]

    answer_node_waits(storage, "j", [_yes("ia")])
    assert read_waits(storage, "j").answered() == {"a": [_yes("ia")]}  # type: ignore[union-attr]
    # a retried fold of the same batch keeps the answer
    record_waits(storage, "j", [_ask("a", "ia"), _ask("b", "ib")], ["a", "b"], batch=1)
    assert read_waits(storage, "j").answered() == {"a": [_yes("ia")]}  # type: ignore[union-attr]
    # "a" ran with its answer and completed; "b" did not run and still waits
    record_waits(storage, "j", [_ask("b", "ib")], ["a"], batch=3)
    after = read_waits(storage, "j")
    assert after is not None and set(after.waits) == {"b"} and after.closed == ["ia"]
    with pytest.raises(InterruptAlreadyAnsweredError):  # answered once: 409 for the API
        answer_node_waits(storage, "j", [_yes("ia", "again")])


def test_answers_are_per_node_whole_once_and_a_same_retry_is_accepted(
    storage: StorageBackend,
) -> None:
    record_waits(storage, "j", [_ask("a", "a1"), _ask("a", "a2"), _ask("b", "b1")], [], 1)
    with pytest.raises(UnknownInterruptError, match="missing \\['a2'\\]"):
        answer_node_waits(storage, "j", [_yes("a1")])
    with pytest.raises(UnknownInterruptError, match="'zz'"):
        answer_node_waits(storage, "j", [_yes("zz")])
    answer_node_waits(storage, "j", [_yes("b1")])
    answer_node_waits(storage, "j", [_yes("b1")])  # a client's retry: the same answers
    with pytest.raises(InterruptAlreadyAnsweredError):
        answer_node_waits(storage, "j", [_yes("b1", "no")])
    record = read_waits(storage, "j")
    assert record is not None and record.answered() == {"b": [_yes("b1")]}
    assert [i["id"] for i in record.open_interrupts()] == ["a1", "a2"]


def test_the_park_never_sleeps_on_stored_answers_and_a_sent_token_is_forgotten(
    storage: StorageBackend,
) -> None:
    record_waits(storage, "j", [_ask("a", "ia"), _ask("b", "ib")], [], 1)
    assert park_nodes(storage, "j", "token-1").task_token == "token-1"
    answered = answer_node_waits(storage, "j", [_yes("ib")])
    assert answered.task_token == "token-1"  # the API wakes this park
    forget_token(storage, "j", "token-1")
    assert read_waits(storage, "j").task_token is None  # type: ignore[union-attr]
    with pytest.raises(AnswersWaitingError, match="'b'"):
        park_nodes(storage, "j", "token-2")
    assert read_waits(storage, "j").task_token is None  # type: ignore[union-attr]
    # a newer park's token is not forgotten by an older answer
    record_waits(storage, "j", [_ask("a", "ia")], ["b"], 2)
    park_nodes(storage, "j", "token-3")
    forget_token(storage, "j", "token-1")
    assert read_waits(storage, "j").task_token == "token-3"  # type: ignore[union-attr]


def test_a_lost_race_is_retried_on_the_fresh_record(
    storage: StorageBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_waits(storage, "j", [_ask("a", "ia"), _ask("b", "ib")], [], 1)
    real = storage.replace
    raced: list[bool] = []

    def replace(key: str, data: bytes, *, expected_version: str | None) -> str:
        if not raced:  # another writer answers "a" right before this write
            raced.append(True)
            real(key, json.dumps({**json.loads(storage.read(key).data),  # type: ignore[union-attr]
                                  "task_token": "other"}).encode(), expected_version=expected_version)  # fmt: skip
            raise SessionConflictError("lost the race")
        return real(key, data, expected_version=expected_version)

    monkeypatch.setattr(storage, "replace", replace)
    record = answer_node_waits(storage, "j", [_yes("ib")])
    assert record.task_token == "other" and record.answered() == {"b": [_yes("ib")]}


def test_plan_gives_each_answered_node_its_own_answers_and_honours_answers_in_the_state(
    tmp_path: Path,
) -> None:
    from elsai.serverless.contract import JobStepRequest
    from elsai.serverless.orchestration import plan
    from tests.unit.multiagent.test_graph_waits import _asks, _done, _steps

    steps = _steps(tmp_path / "graph")
    storage = FileSessionManager(session_id="s1", storage_dir=str(tmp_path / "jobs")).storage
    request = JobStepRequest(job_id="j", execution_id="e", session_id="job", prompt="Go")
    steps.fold(plan(request, steps, storage).batch, {"start": _done()})
    both = plan(request, steps, storage)
    waits = steps.fold(both.batch, {"a": _asks("a"), "b": _asks("b")})
    record_waits(storage, "j", waits.interrupts, ["a", "b"], both.batch)
    assert plan(request, steps, storage).status == "interrupted"

    answer_node_waits(storage, "j", [_yes("ask-b")])
    only_b = plan(request, steps, storage)
    assert only_b.status == "run"
    assert [(n["node"], n["interrupt_responses"]) for n in only_b.nodes] == [("b", [_yes("ask-b")])]
    # answers carried in the state (an older park's) reach the node they answer
    carried = request.model_copy(update={"interrupt_responses": [_yes("ask-a")]})
    plain = FileSessionManager(session_id="s2", storage_dir=str(tmp_path / "none")).storage
    outcome = plan(carried, steps, plain)
    assert [(n["node"], n["interrupt_responses"]) for n in outcome.nodes] == [
        ("a", [_yes("ask-a")])
    ]


def test_the_local_runtime_reports_a_park_that_found_answers_as_a_replan() -> None:
    from elsai.local.faults import InvocationInfo
    from elsai.local.invoker import InvocationRecord
    from elsai.local.progress import Progress

    progress = Progress(None)
    info = InvocationInfo("j", "s", "graph", "park_nodes", 0, 1)
    error = {"errorType": "AnswersWaitingError", "errorMessage": "answered before the park"}
    progress.invocation_ended(InvocationRecord(info, {}, None, "r1", error=error))
    assert [e.kind for e in progress.events] == ["answered"]
    assert not progress.waiting_for_input("j")  # it never parked
