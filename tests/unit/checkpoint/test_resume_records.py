"""Each resume from a bookmark leaves a record in the agent's resumes/ folder.

checkpoint.json is overwritten as the run goes on, so once it completes nothing else says
that (and where) it recovered. The record is written only when a resume happens.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elsai.session.inspect.check import check_session
from elsai.session.inspect.resumes import load_resumes
from elsai.session.storage.file import FileStorage
from tests.unit.checkpoint.helpers import Crash, agent_dir, read_bookmark, tool_call


def test_a_crash_resumed_after_model_is_recorded_and_stays_after_completion(
    build: Any, store: Path, ledger: Any
) -> None:
    ledger.crash_on = {1}
    first = build([tool_call("t1", city="Paris")], position="after_model")
    with pytest.raises(Crash):
        first("What's the weather in Paris?")
    assert not (agent_dir(store) / "resumes").exists()  # nothing before a resume

    second = build(["It is sunny in Paris."], position="after_model")
    result = second("continue", invocation_id="inv-2")
    assert result.resume_position == "after_model"
    assert read_bookmark(store)["execution_status"] == "completed"  # type: ignore[index]

    records, problems = load_resumes(FileStorage(str(store)), "my-job", "worker")
    assert problems == []
    assert [(r.position, r.message_count, r.invocation_id) for r in records] == [
        ("after_model", 2, "inv-2")
    ]
    assert records[0].resumed_at.endswith("Z")
    assert check_session(FileStorage(str(store)), "my-job") == []  # a known file of the layout


def test_a_run_without_a_crash_writes_no_resume_record(build: Any, store: Path) -> None:
    agent = build([tool_call("t1", city="Paris"), "Sunny."], position="after_model")
    agent("weather?")
    agent2 = build(["Still sunny."], position="after_model")
    agent2("and now?")  # a completed bookmark: a messages-only continue, not a resume
    assert not (agent_dir(store) / "resumes").exists()


def test_a_corrupt_resume_record_is_reported_not_raised(
    build: Any, store: Path, ledger: Any
) -> None:
    ledger.crash_on = {1}
    with pytest.raises(Crash):
        build([tool_call("t1", city="Paris")], position="after_model")("weather?")
    build(["Sunny."], position="after_model")("continue")
    (path,) = (agent_dir(store) / "resumes").iterdir()
    path.write_text(json.dumps({"position": "after_model"}))
    records, problems = load_resumes(FileStorage(str(store)), "my-job", "worker")
    assert records == [] and len(problems) == 1 and path.name in problems[0]
