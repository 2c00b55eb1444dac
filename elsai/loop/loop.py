"""The ReAct loop: flat and iterative, in three phases, with every boundary in one place.

One invocation is `start` (act on what the last invocation left: interrupt answers, a
checkpoint bookmark, an orphan toolUse; then add the new input), `cycles` (a `while` loop of
model call → tools; nothing recurses, so a 10,000-cycle invocation keeps a constant stack)
and `finish` (the AgentResult). The three durable boundaries are the methods marked
`BOUNDARY` at the end of `EventLoop`; they are the only places the loop talks to
`LoopPersistence` about boundaries, and the only places conversation management runs.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import NamedTuple

from elsai.errors import StructuredOutputError
from elsai.interrupt.model import Interrupt, InterruptError
from elsai.loop.deps import Invocation, LoopDeps
from elsai.loop.events import ResultEvent, ResumeEvent, StreamEvent
from elsai.loop.model_call import MAX_MODEL_RETRIES_BY_HOOK, ModelCaller
from elsai.loop.persistence import LoopPersistence
from elsai.loop.phases import Done, Phase, Relay
from elsai.loop.tool_runner import ToolRunner
from elsai.loop.transcript import Transcript
from elsai.types import AgentResult, ContentBlock, Message, ResumePlan, StopReason, tool_uses

__all__ = ["MAX_MODEL_RETRIES_BY_HOOK", "EventLoop", "Invocation", "LoopDeps", "drain"]


class Started(NamedTuple):
    """What `start` leaves for the cycles: the resume plan, and whether to stop already."""

    plan: ResumePlan
    paused: bool


class Ended(NamedTuple):
    """How the cycles ended: the message the result shows, and the stop reason."""

    message: Message | None
    stop_reason: StopReason


class EventLoop:
    """Runs one invocation over `deps`; `run` streams its events, the last a ResultEvent."""

    def __init__(self, deps: LoopDeps, invocation: Invocation) -> None:
        self.deps = deps
        self.inv = invocation
        self.store: LoopPersistence = deps.persistence
        self.transcript: Transcript = Transcript(deps.agent, deps.persistence, deps.hooks)
        self.model: ModelCaller = ModelCaller(deps, invocation, self.transcript)
        self.tools: ToolRunner = ToolRunner(deps, invocation)
        self.cycle: int = 0
        #: Interrupts raised by the last tool batch; non-empty ends the invocation.
        self.interrupted: list[Interrupt] = []

    async def run(self) -> AsyncIterator[StreamEvent]:
        """Start, cycle, finish; each phase gets what the one before returned."""
        began = time.perf_counter()
        start = Relay(self._start())
        async for event in start:
            yield event
        cycles = Relay(self._cycles(start.value))
        async for event in cycles:
            yield event
        yield ResultEvent(result=self._finish(start.value, cycles.value, began))

    # -- start: the resume dispatch ----------------------------------------------------------

    async def _start(self) -> Phase[Started]:
        inv, transcript, interrupts = self.inv, self.transcript, self.deps.interrupts
        plan = self.store.begin_invocation(inv.invocation_id, inv.input_content)
        new_content = [] if plan.input_already_recorded else inv.input_content
        self.cycle = plan.cycle_index if plan.position is not None else 0
        paused = False
        if interrupts.active:
            # Human-in-the-loop answers: not a crash resume. The interrupted batch re-runs
            # (finished tools reuse their stored results) and sees the responses.
            interrupts.accept_responses(inv.input_content)
            new_content = []
            async for event in self._run_tools(self._last(), queued=[], answering=True):
                yield event
            self.cycle += 1
        else:
            if plan.position is None:
                async for event in transcript.repair_orphan():
                    yield event
            if interrupts.repeated_answers(new_content):
                # A retry of answers whose batch's results were stored before a crash.
                new_content = [b for b in new_content if "interruptResponse" not in b]
            if any("interruptResponse" in b for b in new_content):
                raise InterruptError(
                    "interrupt responses were given but this agent has no pending interrupts"
                )
            if plan.position == "after_model":
                # Active mid-tool bookmark: the trailing assistant toolUse message is pending.
                # Its tools run first; the new input is queued into the same user message.
                pending = self._last()
                yield ResumeEvent(position="after_model", pending_tools=len(tool_uses(pending)))
                async for event in self._run_tools(pending, queued=new_content):
                    yield event
                new_content = []
                self.cycle += 1
                paused = self._stop_requested()  # the after_tools boundary just reached
            elif plan.position == "after_tools":
                yield ResumeEvent(position="after_tools", pending_tools=0)
                self.cycle += 1
        if new_content:
            async for event in transcript.add_user_content(
                new_content, invocation_id=inv.invocation_id
            ):
                yield event
        yield Done(Started(plan=plan, paused=paused))

    # -- cycles: model call -> tools, until the turn ends --------------------------------------

    async def _cycles(self, started: Started) -> Phase[Ended]:
        if started.paused:
            yield Done(Ended(self._last(), "paused"))
            return
        while not self.interrupted:
            last = self.transcript.last
            if last is None or last["role"] != "user":
                # Nothing to answer (e.g. `agent()` on a finished conversation, or a retry after
                # a crash that came after the final answer was stored but before the bookmark
                # was finalized): the turn is over, so make the bookmark say so.
                if last is not None:
                    self._end_turn(manage=False)
                yield Done(Ended(last, "end_turn"))
                return
            if self.inv.max_cycles is not None and self.inv.metrics.cycles >= self.inv.max_cycles:
                raise RuntimeError(f"invocation exceeded max_cycles={self.inv.max_cycles}")
            turn = Relay(self.model.call(self.cycle))
            async for event in turn:
                yield event
            message, stop_reason = turn.value.message, turn.value.stop_reason
            self.inv.metrics.cycles += 1
            if stop_reason == "tool_use" and tool_uses(message):
                tools = Relay(self._tool_cycle(message))
                async for event in tools:
                    yield event
                if tools.value is None:
                    continue
                yield Done(Ended(message, tools.value))
                return
            so = self.inv.structured_output
            if so is not None and so.value is None:
                so.failures += 1
                self._raise_if_structured_output_exhausted()
                forcing: ContentBlock = so.forcing_prompt()  # type: ignore[assignment]
                async for event in self.transcript.add_user_content(
                    [forcing], invocation_id=self.inv.invocation_id
                ):
                    yield event
                continue
            self._end_turn(manage=True)
            yield Done(Ended(message, stop_reason))
            return
        yield Done(Ended(None, "end_turn"))  # interrupted while starting: finish reports it

    async def _tool_cycle(self, message: Message) -> Phase[StopReason | None]:
        """Run the tools of `message`; ends with a stop reason, or None to call the model again."""
        if self._after_model() and self._stop_requested():
            yield Done("paused")
            return
        async for event in self._run_tools(message, queued=[]):
            yield event
        so = self.inv.structured_output
        if self.interrupted:
            yield Done("interrupt")
        elif so is not None and so.value is not None:
            self._end_turn(manage=True)
            yield Done("end_turn")
        else:
            self.cycle += 1
            yield Done("paused" if self._stop_requested() else None)

    async def _run_tools(
        self, assistant: Message, queued: list[ContentBlock], *, answering: bool = False
    ) -> AsyncIterator[StreamEvent]:
        """Run the tools of `assistant`; store their results with `queued` input after them.

        `answering`: the batch runs with interrupt answers, so its results record this
        invocation (a retry with the same invocation id then resumes instead of answering
        again).
        """
        batch = Relay(self.tools.run_batch(tool_uses(assistant)))
        async for event in batch:
            yield event
        outcome = batch.value
        if outcome.raised:
            # Some tools asked for human input: keep what finished, persist, and stop.
            self.deps.interrupts.pause(outcome.finished, outcome.raised)
            self.interrupted = list(outcome.raised)
            self.store.save_state()
            return
        self.deps.interrupts.clear()
        content: list[ContentBlock] = [{"toolResult": r} for r in outcome.finished]
        record = bool(queued) or answering
        async for event in self._after_tools([*content, *queued], record=record):
            yield event
        # Checked only now, so a failed structured output still leaves every toolUse answered.
        self._raise_if_structured_output_exhausted()

    # -- finish ------------------------------------------------------------------------------

    def _finish(self, started: Started, ended: Ended, began: float) -> AgentResult:
        message, stop_reason = ended.message, ended.stop_reason
        if self.interrupted:
            stop_reason, message = "interrupt", self._last()
        self.inv.metrics.latency_ms = (time.perf_counter() - began) * 1000
        so = self.inv.structured_output
        return AgentResult(
            message=message,
            stop_reason=stop_reason,
            metrics=self.inv.metrics,
            structured_output=so.value if so else None,
            resumed_from_checkpoint=started.plan.position is not None,
            resume_position=started.plan.position,
            interrupts=list(self.interrupted),
        )

    # -- the boundaries: the only writes of bookmarks, the only conversation management ------

    def _after_model(self) -> bool:
        """BOUNDARY after_model: the assistant toolUse message is durable, tools not yet run.

        True if a bookmark now covers it (the loop may pause here).
        """
        return self.store.boundary("after_model", self.cycle)

    async def _after_tools(
        self, content: list[ContentBlock], *, record: bool
    ) -> AsyncIterator[StreamEvent]:
        """BOUNDARY after_tools: the tool results (and queued input) are durable.

        `record`: the message carries this invocation's input (queued text, or answers).
        """
        invocation_id = self.inv.invocation_id if record else None
        async for event in self.transcript.append(
            {"role": "user", "content": content}, invocation_id=invocation_id
        ):
            yield event
        self.store.boundary("after_tools", self.cycle)
        self.deps.conversation.apply_management(self.deps.agent)

    def _end_turn(self, *, manage: bool) -> None:
        """BOUNDARY end_turn: finalize the bookmark as completed.

        `manage` keeps the window within bounds after every answered invocation, not only
        after tool cycles; a turn that had nothing to answer leaves the window as it is.
        """
        if manage:
            self.deps.conversation.apply_management(self.deps.agent)
        self.store.turn_ended()

    # -- helpers -----------------------------------------------------------------------------

    def _last(self) -> Message:
        last = self.transcript.last
        assert last is not None, "the resume plan names a message that is not there"
        return last

    def _raise_if_structured_output_exhausted(self) -> None:
        so, retries = self.inv.structured_output, self.inv.structured_output_retries
        if so is not None and so.value is None and so.failures > retries:
            raise StructuredOutputError(
                f"the model did not produce a valid {so.name} after {retries} retries"
            )

    def _stop_requested(self) -> bool:
        check = self.inv.should_stop
        return bool(check and check())


async def drain(stream: AsyncIterator[StreamEvent]) -> AgentResult:
    """Run a stream to its end and return the result of its ResultEvent."""
    result: AgentResult | None = None
    async for event in stream:
        if isinstance(event, ResultEvent):
            result = event.result
    assert result is not None
    return result
