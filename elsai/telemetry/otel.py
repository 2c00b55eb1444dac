"""OpenTelemetry spans for agents, following the GenAI semantic conventions.

An `Agent` attaches an `OtelTracing` by itself once the application has set a global tracer
provider (`default_tracing`), as the OpenTelemetry guidance for libraries asks; passing one as
a hook (`AgentConfig(hooks=[OtelTracing(...)])`) still works and replaces it. Per invocation it
opens an `invoke_agent` span; per model call a `chat` span (CLIENT) and per tool call an
`execute_tool` span, both children of the invocation. A tool span is made current while the
tool runs (in that tool's own task), so a sub-agent called from a tool nests under it, and
concurrent tools each get their own parent. Prompts and outputs are recorded only with
`capture_content=True`. Without the optional `opentelemetry` packages it is a no-op.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from elsai.hooks.events import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)

if TYPE_CHECKING:
    from elsai.hooks.registry import HookRegistry

logger: logging.Logger = logging.getLogger(__name__)

#: elsai's provider names → `gen_ai.provider.name` values of the conventions.
PROVIDER_NAMES = {"bedrock": "aws.bedrock", "anthropic": "anthropic", "openai": "openai"}


def _load_otel() -> Any:
    try:
        from opentelemetry import context, trace
    except ImportError:
        return None
    return context, trace


class _Run:
    """Open spans of one invocation (an agent runs one invocation at a time)."""

    __slots__ = ("chat", "span", "tools")

    def __init__(self, span: Any) -> None:
        self.span = span
        self.chat: Any = None
        self.tools: dict[str, tuple[Any, Any]] = {}  # toolUseId → (span, token)


class OtelTracing:
    """GenAI-convention spans for every invocation, model call and tool call of an agent."""

    def __init__(self, tracer_provider: Any = None, *, capture_content: bool = False) -> None:
        self.capture_content = capture_content
        self._otel = _load_otel()
        self._runs: weakref.WeakKeyDictionary[Any, _Run] = weakref.WeakKeyDictionary()
        if self._otel is None:
            logger.info("OtelTracing: opentelemetry is not installed; tracing is off")
            self._tracer = None
            self._provider = None
            return
        _, trace = self._otel
        self._provider = tracer_provider or trace.get_tracer_provider()
        self._tracer = self._provider.get_tracer("elsai")

    @property
    def enabled(self) -> bool:
        """False when the opentelemetry packages are missing (then nothing is traced)."""
        return self._tracer is not None

    def flush(self, timeout_ms: int = 5_000) -> None:
        """Export buffered spans now (a Lambda is frozen right after it returns)."""
        force_flush = getattr(self._provider, "force_flush", None)
        if force_flush is not None:
            force_flush(timeout_ms)

    @contextmanager
    def current_span(self, name: str, attributes: dict[str, Any]) -> Iterator[Any]:
        """A span that is current while the block runs (None when tracing is off).

        For the units around an agent (a Graph/Swarm node, a serverless slice): the agent's
        `invoke_agent` span, started inside the block, becomes its child.
        """
        if self._tracer is None:
            yield None
            return
        with self._tracer.start_as_current_span(name, attributes=attributes) as span:
            try:
                yield span
            except Exception:
                raise  # recorded on the span by the SDK
            except BaseException as exc:  # a dying process or a cancellation: still a failure
                self._error(span, f"{type(exc).__name__} ended the span", type(exc).__name__)
                raise

    def record_finished(
        self,
        name: str,
        ids: tuple[int, int],
        start_ns: int | None,
        attributes: dict[str, Any],
        error: str | None = None,
    ) -> Any:
        """Record a span that ran from `start_ns` until now under ids chosen beforehand.

        `error` marks it failed; returns the ended span (None when tracing is off).

        For a span whose children were recorded first, in other processes, under ids fixed in
        advance (`elsai.telemetry.job_spans`). Choosing ids needs the SDK's tracer (its
        `id_generator`); any other tracer gets a span with ids of its own, under `ids` as parent.
        """
        if self._tracer is None or self._provider is None:
            return None
        context, _ = self._otel
        tracer = self._provider.get_tracer("elsai.reserved")  # a tracer no one else uses
        generator = getattr(tracer, "id_generator", None)
        if generator is None:
            span = tracer.start_span(
                name, remote_parent(*ids), attributes=attributes, start_time=start_ns
            )
            return self._finish(span, error)
        with _RESERVED:
            tracer.id_generator = _FixedIds(*ids)
            try:  # an empty context: a root span, so both ids come from the generator
                span = tracer.start_span(
                    name, context.Context(), attributes=attributes, start_time=start_ns
                )
            finally:
                tracer.id_generator = generator
        return self._finish(span, error)

    def _finish(self, span: Any, error: str | None) -> Any:
        if error:
            self._error(span, error, "run_failed")
        span.end()
        return span

    def register_hooks(self, registry: HookRegistry) -> None:
        """HookProvider: subscribe to invocation, model-call and tool-call events."""
        if not self.enabled:
            return
        registry.add_callback(BeforeInvocationEvent, self._start_invocation)
        registry.add_callback(AfterInvocationEvent, self._end_invocation)
        registry.add_callback(BeforeModelCallEvent, self._start_chat)
        registry.add_callback(AfterModelCallEvent, self._end_chat)
        registry.add_callback(BeforeToolCallEvent, self._start_tool)
        registry.add_callback(AfterToolCallEvent, self._end_tool)

    # -- invocation ----------------------------------------------------------------------

    def _start_invocation(self, event: BeforeInvocationEvent) -> None:
        agent = event.agent
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.id": agent.agent_id,
            "gen_ai.agent.name": agent.name,
            **_model_attributes(_model_of(agent)),
        }
        if agent.session_id is not None:
            attributes["gen_ai.conversation.id"] = agent.session_id
        description = getattr(getattr(agent, "config", None), "description", None)
        if description:
            attributes["gen_ai.agent.description"] = description
        span = self._tracer.start_span(  # type: ignore[union-attr]
            f"invoke_agent {agent.name}", attributes=attributes
        )
        if self.capture_content and event.messages:
            span.set_attribute("gen_ai.input.messages", _json(event.messages))
        self._runs[agent] = _Run(span=span)

    def _end_invocation(self, event: AfterInvocationEvent) -> None:
        run = self._runs.pop(event.agent, None)
        if run is None:
            return
        for span, _ in run.tools.values():  # paused on an interrupt, or the invocation died
            span.set_attribute("elsai.tool.status", "unfinished")
            span.end()
        if run.chat is not None:
            run.chat.end()
        result, span = event.result, run.span
        if result is None:
            self._error(span, "invocation failed")
        else:
            span.set_attribute("elsai.resumed_from_checkpoint", result.resumed_from_checkpoint)
            if result.resume_position is not None:
                span.set_attribute("elsai.resume_position", result.resume_position)
            span.set_attribute("elsai.stop_reason", result.stop_reason)
            span.set_attribute("gen_ai.usage.input_tokens", result.metrics.usage["inputTokens"])
            span.set_attribute("gen_ai.usage.output_tokens", result.metrics.usage["outputTokens"])
            if self.capture_content and result.message is not None:
                span.set_attribute("gen_ai.output.messages", _json([result.message]))
        span.end()

    # -- model calls ---------------------------------------------------------------------

    def _start_chat(self, event: BeforeModelCallEvent) -> None:
        run = self._runs.get(event.agent)
        if run is None:
            return
        attributes = {"gen_ai.operation.name": "chat", **_model_attributes(_model_of(event.agent))}
        model_id = attributes.get("gen_ai.request.model", "")
        _, trace = self._otel
        run.chat = self._tracer.start_span(  # type: ignore[union-attr]
            f"chat {model_id}".strip(),
            context=trace.set_span_in_context(run.span),
            kind=trace.SpanKind.CLIENT,
            attributes=attributes,
        )
        if self.capture_content:
            run.chat.set_attribute("gen_ai.input.messages", _json(event.agent.messages))

    def _end_chat(self, event: AfterModelCallEvent) -> None:
        run = self._runs.get(event.agent)
        if run is None or run.chat is None:
            return
        span, run.chat = run.chat, None
        if event.exception is not None:
            self._error(span, str(event.exception), type(event.exception).__name__)
        if event.stop_reason is not None:
            span.set_attribute("gen_ai.response.finish_reasons", [event.stop_reason])
        if event.usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", event.usage["inputTokens"])
            span.set_attribute("gen_ai.usage.output_tokens", event.usage["outputTokens"])
        if self.capture_content and event.message is not None:
            span.set_attribute("gen_ai.output.messages", _json([event.message]))
        span.end()

    # -- tool calls ----------------------------------------------------------------------

    def _start_tool(self, event: BeforeToolCallEvent) -> None:
        run = self._runs.get(event.agent)
        use = event.tool_use
        if run is None or use is None:
            return
        context, trace = self._otel
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": use["name"],
            "gen_ai.tool.call.id": use["toolUseId"],
            "gen_ai.tool.type": "function",
        }
        if event.selected_tool is not None:
            attributes["gen_ai.tool.description"] = event.selected_tool.spec["description"]
        span = self._tracer.start_span(  # type: ignore[union-attr]
            f"execute_tool {use['name']}",
            context=trace.set_span_in_context(run.span),
            attributes=attributes,
        )
        if self.capture_content:
            span.set_attribute("gen_ai.tool.call.arguments", _json(use.get("input")))
        # Current only inside this tool's task: a sub-agent it calls nests under this span.
        token = context.attach(trace.set_span_in_context(span))
        run.tools[use["toolUseId"]] = (span, token)

    def _end_tool(self, event: AfterToolCallEvent) -> None:
        run = self._runs.get(event.agent)
        use = event.tool_use
        if run is None or use is None or use["toolUseId"] not in run.tools:
            return
        span, token = run.tools.pop(use["toolUseId"])
        context, _ = self._otel
        context.detach(token)
        status = event.result["status"] if event.result is not None else "success"
        span.set_attribute("elsai.tool.status", status)
        if event.exception is not None:
            self._error(span, str(event.exception), type(event.exception).__name__)
        elif status == "error":
            self._error(span, "the tool returned an error result", "tool_error")
        if self.capture_content and event.result is not None:
            span.set_attribute("gen_ai.tool.call.result", _json(event.result.get("content")))
        span.end()

    def _error(self, span: Any, description: str, error_type: str = "error") -> None:
        _, trace = self._otel
        span.set_attribute("error.type", error_type)
        span.set_status(trace.Status(trace.StatusCode.ERROR, description))


_RESERVED = threading.Lock()


class _FixedIds:
    """An SDK id generator that hands out one trace id and one span id chosen beforehand."""

    def __init__(self, trace_id: int, span_id: int) -> None:
        self.trace_id, self.span_id = trace_id, span_id

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id

    def is_trace_id_random(self) -> bool:
        return False


def remote_parent(trace_id: int, span_id: int) -> Any:
    """A context whose current span was recorded in another process (sampled): a parent here."""
    from opentelemetry import trace

    flags = trace.TraceFlags(trace.TraceFlags.SAMPLED)
    remote = trace.SpanContext(trace_id, span_id, is_remote=True, trace_flags=flags)
    return trace.set_span_in_context(trace.NonRecordingSpan(remote))


def configured_provider() -> Any:
    """The application's global TracerProvider, or None while only the API's default is set.

    Never imports opentelemetry: an application that set a provider has imported
    `opentelemetry.trace` already, so its absence from `sys.modules` means "none set".
    """
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    return provider


def explicit_tracing(hooks: Any) -> OtelTracing | None:
    """The OtelTracing among configured hook providers, if any (it wins over the automatic one)."""
    for provider in hooks or ():
        if isinstance(provider, OtelTracing):
            return provider
    return None


def default_tracing() -> OtelTracing | None:
    """An OtelTracing on the global provider when the application configured one, else None.

    Content capture stays off: prompts and outputs are recorded only by an explicit
    `OtelTracing(capture_content=True)`.
    """
    provider = configured_provider()
    return OtelTracing(tracer_provider=provider) if provider is not None else None


def _model_attributes(model: Any) -> dict[str, Any]:
    config = model.config if model is not None else {}
    provider = str(config.get("provider") or type(model).__name__.lower())
    name = PROVIDER_NAMES.get(provider, provider)
    # gen_ai.system is the older name of gen_ai.provider.name; both are set for older backends.
    attributes: dict[str, Any] = {"gen_ai.provider.name": name, "gen_ai.system": name}
    if config.get("model_id"):
        attributes["gen_ai.request.model"] = str(config["model_id"])
    return attributes


def _json(value: Any) -> str:
    return json.dumps(value, default=lambda o: f"<{type(o).__name__}>", ensure_ascii=False)


def _model_of(agent: Any) -> Any:
    """The agent's model, if the hooked object has one (hooks see an AgentView, not Agent)."""
    return getattr(agent, "model", None)
