"""A deploy never changes the code under a job in flight; an upgrade does, explicitly.

Each deploy snapshots the agent's source into its own folder and publishes a version; the
state machine invokes the version the job started on (`$.agent_function`), so the children of
one job keep importing the same snapshot across waits, slices and deploys.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from elsai.cli import main as cli_main
from elsai.client import ApiError
from elsai.local import Fault, InvocationInfo
from elsai.local.faults import every_slice
from elsai.local.http import LocalHttpApi
from elsai.serverless.contract.jobs_api import Job
from elsai.serverless.contract.steps import RUN_SLICE
from elsai.session.layout import keys
from elsai.types import tool_results
from tests.support.transcripts import assert_valid_transcript
from tests.system.deploys.conftest import Deploying


@dataclass(frozen=True)
class Waiting:
    """A started job that waits on `interrupt`."""

    job_id: str
    session_id: str
    interrupt: str


def _waiting(d: Deploying, prompt: str, version_policy: str | None = None) -> Waiting:
    job = d.rt.jobs.start(prompt, agent_id="approver", version_policy=version_policy)
    waiting = d.rt.wait(job.job_id, timeout=60)
    assert waiting.status == "WAITING_FOR_INPUT" and waiting.interrupts, waiting
    return Waiting(job.job_id, job.session_id, waiting.interrupts[0].id)


def _answer(d: Deploying, job: Waiting) -> Job:
    d.rt.jobs.answer(job.job_id, [{"id": job.interrupt, "response": "approve"}])
    return d.rt.wait(job.job_id, timeout=60)


def _transcript(d: Deploying, session_id: str) -> list[dict[str, object]]:
    prefix = keys.messages_prefix(session_id, "approver")
    found = sorted(
        (keys.message_index(k), k)
        for k, _ in d.rt.session_files(session_id)
        if k.startswith(prefix)
    )
    return [d.rt.read_json(k)["message"] for _, k in found]


def test_a_waiting_job_finishes_on_its_own_version_after_a_deploy_removes_its_tool(
    deploying: Deploying,
) -> None:
    d = deploying
    old = d.deploy("1")
    job = _waiting(d, "Refund order 42")
    new = d.deploy("2", refund=False)  # the tool the job waits in is gone from the new code
    assert int(new.version) == int(old.version) + 1

    shown = d.rt.jobs.get(job.job_id)
    assert (shown.version, shown.current_version) == (old.version, new.version)
    assert shown.version_is_current is False and shown.version_policy == "pinned"

    final = _answer(d, job)
    assert final.status == "SUCCEEDED", final
    assert final.result["text"] == "v1 done: Refund of order 42 paid by v1"
    runs = d.ledger(job.session_id)
    assert [(r["tool"], r["version"]) for r in runs] == [("refund", "1")]  # once, on v1
    records = d.rt.slices(job.job_id)
    assert [r.version for r in records] == [old.version, old.version]
    assert all(r.event["agent_function"] == old.arn for r in records)
    assert_valid_transcript(_transcript(d, job.session_id))


def test_an_upgraded_waiting_job_resumes_on_the_new_code_with_an_error_for_the_lost_tool(
    deploying: Deploying,
) -> None:
    d = deploying
    old = d.deploy("3")
    job = _waiting(d, "Refund order 7")
    new = d.deploy("4", refund=False)
    upgraded = d.rt.jobs.upgrade(job.job_id)
    assert upgraded.as_dict() == {"job_id": job.job_id, "version": new.version, "upgraded": True,
                        "event": f"upgraded v{old.version} -> v{new.version}"}  # fmt: skip
    assert d.rt.jobs.get(job.job_id).version == new.version

    final = _answer(d, job)
    assert final.status == "SUCCEEDED", final
    text = final.result["text"]
    assert text.startswith("v4 done: ") and "Unknown tool 'refund'" in text, text
    assert d.ledger(job.session_id) == []  # the removed tool never ran, on no version
    records = d.rt.slices(job.job_id)
    assert [r.version for r in records] == [old.version, new.version]
    shown = d.rt.jobs.get(job.job_id)
    assert shown.build_changes == ["system prompt changed", "tool `refund` removed",
                                      "tool `process_order` added"]  # fmt: skip
    assert shown.upgrades == [f"upgraded v{old.version} -> v{new.version}"]
    messages = _transcript(d, job.session_id)
    assert_valid_transcript(messages)
    (result,) = [r for m in messages if m["role"] == "user" for r in tool_results(m)]
    assert result["status"] == "error" and result["toolUseId"] == "refund-7"


def test_an_upgrade_that_changes_a_pending_calls_schema_gives_a_validation_error_result(
    deploying: Deploying,
) -> None:
    d = deploying
    d.deploy("13")
    job = _waiting(d, "Refund order 8")
    d.deploy("14", refund_schema="amount")  # refund now needs an `amount` the call lacks
    d.rt.jobs.upgrade(job.job_id)
    final = _answer(d, job)
    assert final.status == "SUCCEEDED", final
    assert d.ledger(job.session_id) == []  # the tool never ran with the stale input
    shown = d.rt.jobs.get(job.job_id)
    assert "tool `refund` input schema changed" in shown.build_changes
    messages = _transcript(d, job.session_id)
    assert_valid_transcript(messages)
    (result,) = [r for m in messages if m["role"] == "user" for r in tool_results(m)]
    assert result["status"] == "error" and result["toolUseId"] == "refund-8"
    text = " ".join(b.get("text", "") for b in result["content"])
    assert "amount" in text, text
    assert final.result["text"] == f"v14 done: {text}"


def test_upgrade_on_resume_moves_the_job_to_the_version_current_at_the_answer(
    deploying: Deploying,
) -> None:
    d = deploying
    d.deploy("5")
    job = _waiting(d, "Refund order 9", version_policy="upgrade_on_resume")
    new = d.deploy("6")  # the tool is still there: the new code runs it
    final = _answer(d, job)
    assert final.status == "SUCCEEDED", final
    assert final.result["text"] == "v6 done: Refund of order 9 paid by v6"
    assert [r["version"] for r in d.ledger(job.session_id)] == ["6"]
    assert d.rt.jobs.get(job.job_id).version == new.version


def test_a_running_job_keeps_its_version_across_a_deploy_between_slices(
    deploying: Deploying,
) -> None:
    d = deploying
    old = d.deploy("7")
    deployed: list[str] = []
    short = every_slice(Fault(timeout_seconds=30))  # each slice stops at its first boundary

    def deploy_before_second_slice(info: InvocationInfo) -> Fault | None:
        if info.action == RUN_SLICE and info.slice == 1 and not deployed:
            deployed.append(d.deploy("8").version)  # between slice 0 and slice 1
        return short(info)

    d.rt.faults = deploy_before_second_slice
    try:
        job = d.rt.jobs.start("Process orders 1 2")
        final = d.rt.wait(job.job_id, timeout=120)
        assert final.status == "SUCCEEDED", final
        assert deployed == [str(int(old.version) + 1)]
        records = d.rt.slices(job.job_id)
        assert len(records) == 5 and {r.version for r in records} == {old.version}
        assert [r["version"] for r in d.ledger(job.session_id)] == ["7", "7"]
        assert final.result["text"].startswith("v7 done: ")

        d.rt.faults = None
        after = d.rt.jobs.start("Process orders 3")
        assert d.rt.wait(after.job_id, timeout=60).result["text"].startswith("v8 done: ")
        assert {r.version for r in d.rt.slices(after.job_id)} == {deployed[0]}
    finally:
        d.rt.faults = None


def test_a_pinned_job_whose_code_builds_another_agent_fails_unretried(
    deploying: Deploying,
) -> None:
    d = deploying
    d.deploy("10")
    job = _waiting(d, "Refund order 3")
    d.rt.child_env["AGENT_PROMPT_SUFFIX"] = " (changed)"  # same version, another system prompt
    try:
        final = _answer(d, job)
    finally:
        d.rt.child_env.pop("AGENT_PROMPT_SUFFIX")
    assert final.status == "FAILED", final
    assert final.error.error == "BuildMismatchError"
    assert "system prompt changed" in final.error.cause
    assert len(d.rt.slices(job.job_id)) == 2  # the resumed slice ran once: not retried
    assert d.ledger(job.session_id) == []


def test_upgrade_refuses_a_finished_or_unknown_job_and_start_refuses_an_unknown_policy(
    deploying: Deploying,
) -> None:
    rt = deploying.rt
    deploying.deploy("9")
    done = rt.jobs.start("Process orders 5")
    assert rt.wait(done.job_id, timeout=60).status == "SUCCEEDED"
    with pytest.raises(ApiError) as ended:
        rt.jobs.upgrade(done.job_id)
    assert (
        ended.value.status == 409 and "already ended with status SUCCEEDED" in ended.value.message
    )
    with pytest.raises(ApiError) as unknown:
        rt.jobs.upgrade("nope")
    assert unknown.value.status == 404, unknown.value.body
    with pytest.raises(ApiError) as policy:
        rt.jobs.start("hi", version_policy="latest")
    assert policy.value.status == 400, policy.value.body
    assert "'pinned', 'upgrade_on_resume'" in str(policy.value.body), policy.value.body


def test_the_cli_shows_the_version_lists_stale_jobs_and_upgrades(
    deploying: Deploying, capsys: pytest.CaptureFixture[str]
) -> None:
    d = deploying
    old = d.deploy("11")
    job = _waiting(d, "Refund order 5")
    new = d.deploy("12")
    http = LocalHttpApi(d.rt).start()
    try:
        where = ["--api-url", http.url]
        assert cli_main(["jobs", "status", job.job_id, *where]) == 0
        shown = capsys.readouterr().out
        assert f"version {old.version} (not current; latest {new.version}, policy pinned)" in shown
        assert cli_main(["jobs", "ls", "--stale", *where]) == 0
        stale = capsys.readouterr().out
        assert job.job_id in stale
        assert cli_main(["jobs", "upgrade", job.job_id, *where]) == 0
        upgraded = capsys.readouterr().out
        assert f"upgraded v{old.version} -> v{new.version}" in upgraded
        assert cli_main(["jobs", "ls", "--stale", *where]) == 0
        assert job.job_id not in capsys.readouterr().out  # on the current version now
    finally:
        http.close()
    final = _answer(d, job)
    assert final.result["text"] == "v12 done: Refund of order 5 paid by v12"


def test_an_upgrade_across_a_changed_model_id_records_it_and_goes_on_with_the_new_model(
    deploying: Deploying,
) -> None:
    d = deploying
    old = d.deploy("30", model_id="model-a")
    job = _waiting(d, "Refund order 5")
    new = d.deploy("31", model_id="model-b")
    d.rt.jobs.upgrade(job.job_id)
    final = _answer(d, job)
    assert final.status == "SUCCEEDED", final
    assert final.result["text"] == "v31 done: Refund of order 5 paid by v31"
    shown = d.rt.jobs.get(job.job_id)
    assert shown.build_changes == ["model id model-a -> model-b", "system prompt changed"]
    assert [(r["tool"], r["version"]) for r in d.ledger(job.session_id)] == [("refund", "31")]
    assert [r.version for r in d.rt.slices(job.job_id)] == [old.version, new.version]
    assert_valid_transcript(_transcript(d, job.session_id))


def _waiting_graph(d: Deploying, prompt: str) -> Waiting:
    job = d.rt.jobs.start(prompt, agent_id="graph")
    waiting = d.rt.wait(job.job_id, timeout=90)
    assert waiting.status == "WAITING_FOR_INPUT", waiting
    (interrupt,) = waiting.interrupts or []
    assert interrupt.node == "approver"
    return Waiting(job.job_id, job.session_id, interrupt.id)


def test_an_upgrade_that_removes_the_waiting_graph_node_fails_the_run_naming_it(
    deploying: Deploying,
) -> None:
    d = deploying
    d.deploy("40")
    job = _waiting_graph(d, "Draft a letter")
    d.deploy("41", graph=("drafter",))
    d.rt.jobs.upgrade(job.job_id)
    final = _answer(d, job)
    assert final.status == "FAILED", final
    assert "removed node(s) 'approver' from the graph" in str(final.error), final
    assert d.ledger(job.session_id) == []  # the approval never ran, on no version
    shown = d.rt.jobs.get(job.job_id)
    assert shown.build_changes == [
        "tool `approver.approve_draft` removed",
        "node `approver` removed",
        "edge `drafter -> approver` removed",
    ]


def test_an_upgrade_that_adds_a_graph_node_plans_it_normally(deploying: Deploying) -> None:
    d = deploying
    d.deploy("50")
    job = _waiting_graph(d, "Draft a memo")
    d.deploy("51", graph=("drafter", "approver", "notifier"))
    d.rt.jobs.upgrade(job.job_id)
    final = _answer(d, job)
    assert final.status == "SUCCEEDED", final
    assert "notifier: sent on v51" in str(final.result), final
    assert [(r["tool"], r["node"]) for r in d.ledger(job.session_id)] == [
        ("approve_draft", "approver")
    ]  # the approval ran once, on the new code
    assert d.rt.jobs.get(job.job_id).build_changes == [
        "node `notifier` added",
        "edge `approver -> notifier` added",
    ]
