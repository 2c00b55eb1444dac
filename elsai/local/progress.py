"""Turns what the local runtime sees (invocations, child lines, job states) into LocalEvents.

It also remembers which jobs are parked on a task token and not yet answered: the runtime
sees every park and every answer, so `wait()` does not have to guess from S3.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from elsai.local.events import EventSink, LocalEvent
from elsai.local.invoker import InvocationRecord
from elsai.serverless.contract import ANSWERS_WAITING_ERROR
from elsai.serverless.contract.steps import RUN_SLICE


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Progress:
    """Turns the runtime's observations into events for `sink`, and counts parks and answers."""

    def __init__(self, sink: EventSink | None) -> None:
        self.sink = sink
        self.events: list[LocalEvent] = []
        self._lock = threading.Lock()
        self._parks: dict[str, int] = {}
        self._answers: dict[str, int] = {}
        self._ended: set[str] = set()
        self._last_error: dict[str, str] = {}

    def emit(
        self,
        kind: str,
        job_id: str,
        message: str,
        record: InvocationRecord | None = None,
        **data: Any,
    ) -> None:
        """Record one event and pass it to the sink (tagged with its node or step, if any)."""
        step_kind = record.info.kind if record is not None else None
        if record is not None and step_kind == "slice" and record.event.get("node"):
            data.setdefault("node", record.info.agent_id)  # a Graph/Swarm node's own slice
        elif record is not None and step_kind == "schedule":
            data.setdefault("step", record.info.action)  # a Graph/Swarm plan or fold
        event = LocalEvent(
            kind,
            job_id,
            message,
            record.info.slice if record else None,
            record.info.attempt if record else None,
            data,
        )
        with self._lock:
            self.events.append(event)
            if self.sink is not None:
                self.sink(event)

    def job_started(self, job: dict[str, Any], prompt: str) -> None:
        """A job was started through the API."""
        self.emit(
            "job_started",
            job["job_id"],
            f"job {job['job_id']} started, session {job['session_id']}: {_short(prompt, 60)}",
        )

    def invocation_started(self, record: InvocationRecord) -> None:
        """A slice started: a first attempt, or a retry (and why it was retried)."""
        info = record.info
        if info.action != RUN_SLICE:
            return
        if info.attempt > 1:
            why = self._last_error.get(info.job_id, "an error")
            self.emit(
                "retry",
                info.job_id,
                f"Step Functions retries RunSlice after {why} (attempt {info.attempt})",
                record,
            )
        what = (
            "with the prompt"
            if record.event.get("prompt") is not None
            else (
                "with interrupt responses"
                if record.event.get("interrupt_responses")
                else "ids only"
            )
        )
        fault = f"; fault planned: {record.fault.describe()}" if record.fault else ""
        self.emit(
            "slice_started",
            info.job_id,
            f"RunSlice invokes the agent Lambda ({what}){fault}",
            record,
        )

    def child_event(self, record: InvocationRecord, data: dict[str, Any]) -> None:
        """A progress line the child wrote (resumed, tool ran, ...)."""
        if data.get("type") == "tool":
            args = ", ".join(f"{k}={v!r}" for k, v in (data.get("input") or {}).items())
            self.emit(
                "tool",
                record.info.job_id,
                f"{data['name']}({args}) runs (tool call {data['n']} of this invocation)",
                record,
                **data,
            )

    def invocation_ended(self, record: InvocationRecord) -> None:
        """An invocation ended: its result, or how it failed (killed, timed out, raised)."""
        info = record.info
        if record.error is not None and record.error.get("errorType") == ANSWERS_WAITING_ERROR:
            # a Graph/Swarm park that found answers already stored: not a failure, it replans
            self.emit(
                "answered", info.job_id, "answers arrived before the park: planning again", record
            )
            return
        if record.error is not None:
            kind = record.error.get("errorType", "Error")
            self._last_error[info.job_id] = kind
            killing = next((e for e in record.child_events if e.get("type") == "killing"), None)
            if killing is not None:
                message = f"Lambda process SIGKILLed inside tool call {killing['n']} ({killing['name']}): its side effect happened, its result was never saved -> {kind}"
                self.emit("killed", info.job_id, message, record, error=kind)
            elif record.killed:
                self.emit(
                    "killed",
                    info.job_id,
                    f"Lambda died: {kind}: {_short(record.error.get('errorMessage', ''))}",
                    record,
                    error=kind,
                )
            else:
                self.emit(
                    "slice_failed",
                    info.job_id,
                    f"handler raised {kind}: {_short(record.error.get('errorMessage', ''))}",
                    record,
                    error=kind,
                )
            return
        result = record.result or {}
        if info.kind == "park":  # a single agent's wait, or a Graph/Swarm job's on its nodes
            with self._lock:
                self._parks[info.job_id] = self._parks.get(info.job_id, 0) + 1
            names = [i.get("name") for i in record.event.get("interrupts") or []]
            self.emit(
                "parked",
                info.job_id,
                f"waiting for input: task token parked for interrupts {names}",
                record,
            )
            return
        if result.get("resumed_from_checkpoint"):
            self.emit("resumed", info.job_id, f"resumed from {result.get('resume_position')} (checkpoint.json bookmark)", record,
                      position=result.get("resume_position"))  # fmt: skip
        calls = result.get("model_calls", result.get("cycles", 0))  # node slices: model_calls only
        self.emit("slice_finished", info.job_id, f"status {result.get('status')} ({calls} model calls, {record.duration_s:.1f} s)",
                  record, status=result.get("status"))  # fmt: skip

    def answered(self, job_id: str, responses: list[dict[str, Any]]) -> None:
        """The API answered the job's interrupts: it no longer waits for input."""
        with self._lock:
            self._answers[job_id] = self._answers.get(job_id, 0) + 1
        self.emit("answered", job_id, f"POST /jobs/{job_id}/responses: {_short(responses)}")

    def waiting_for_input(self, job_id: str) -> bool:
        """Whether the job parked a token nobody answered yet (so `wait()` need not ask S3)."""
        with self._lock:
            return self._parks.get(job_id, 0) > self._answers.get(job_id, 0)

    def job_ended(self, job: dict[str, Any]) -> None:
        """The job's execution ended (reported once, however often it is polled)."""
        with self._lock:
            if job["job_id"] in self._ended:
                return
            self._ended.add(job["job_id"])
        if job["status"] == "SUCCEEDED":
            text = (job.get("result") or {}).get("text", "")
            self.emit("completed", job["job_id"], f"execution SUCCEEDED: {_short(text, 80)}")
        else:
            error = job.get("error") or {}
            self.emit(
                "failed",
                job["job_id"],
                f"execution {job['status']}: {error.get('error')}: {_short(error.get('cause') or '', 200)}",
            )
