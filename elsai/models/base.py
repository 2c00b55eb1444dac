"""The provider interface: one async stream of typed events per model call.

Every provider (Bedrock, scripted, others) yields the same small event vocabulary; the loop
assembles it into a Converse message with `assemble`. Non-streaming providers simply yield
the events of a complete response.

Besides `stream`, a model says which model it is (`model_id`, recorded in a serverless job's
build fingerprint), how long one call may wait for the service (`read_timeout`, which sizes a
serverless slice's stop margin) and what a failure of its SDK means (`classify_error`: the
retry policy and the serverless runtime act on the kind, never on a provider's exception
classes).
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from elsai.errors import (
    ContextWindowOverflowError,
    ModelAccessDeniedError,
    ModelThrottledError,
)
from elsai.types import Message, StopReason, ToolChoice, ToolSpec, Usage, empty_usage


@dataclass(frozen=True)
class TextDelta:
    """A piece of assistant text for content block `index`."""

    text: str
    index: int = 0


@dataclass(frozen=True)
class ToolUseStart:
    """A tool call begins in content block `index`; its input follows as `ToolInputDelta`s."""

    index: int
    tool_use_id: str
    name: str


@dataclass(frozen=True)
class ToolInputDelta:
    """A fragment of the JSON text of a tool's input (fragments concatenate)."""

    index: int
    fragment: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's reasoning (or its signature) for content block `index`."""

    index: int
    text: str = ""
    signature: str | None = None


@dataclass(frozen=True)
class BlockStop:
    """Content block `index` is complete."""

    index: int


@dataclass(frozen=True)
class ModelStop:
    """Last event of every call."""

    stop_reason: StopReason
    usage: Usage = field(default_factory=empty_usage)
    latency_ms: int = 0


ModelEvent = TextDelta | ToolUseStart | ToolInputDelta | ReasoningDelta | BlockStop | ModelStop


@dataclass(frozen=True)
class ModelRequest:
    """Everything a provider needs for one call. Providers must not mutate `messages`."""

    messages: Sequence[Message]
    tool_specs: Sequence[ToolSpec] = ()
    system_prompt: str | None = None
    tool_choice: ToolChoice | None = None


ModelErrorKind = Literal["access_denied", "throttled", "transient", "overflow", "other"]
"""What a failed model call means, as `Model.classify_error` tells it.

- "access_denied": the provider refused the credentials or the account access to the model
  (Bedrock's AccessDeniedException, an HTTP 401 or 403). Retrying cannot fix it: it becomes
  `ModelAccessDeniedError` with the provider's fix steps, and the serverless runtime fails the
  job at once.
- "throttled": the provider asks to slow down (429, Bedrock's ThrottlingException, Anthropic's
  529). Retried with backoff; `ModelThrottledError` once the budget is spent.
- "transient": the service or the connection failed (5xx, a reset, a timeout). Retried.
- "overflow": the request does not fit the context window (`ContextWindowOverflowError`).
- "other": anything else (`ModelError`); not retried.
"""

#: The read timeout of the network providers unless told otherwise: long replies need a
#: generous one, and the serverless stop margin is sized from it.
DEFAULT_READ_TIMEOUT_S = 120.0

_GENERIC_ACCESS_HELP = (
    "The provider refused these credentials for this model: check the credentials the model "
    "is built with and that the account may use the model."
)


class Model(abc.ABC):
    """Base class of model providers."""

    @property
    @abc.abstractmethod
    def model_id(self) -> str:
        """The provider's name of the model that answers (Bedrock's modelId, an API model name).

        A serverless job records it in its build fingerprint: a resumed job whose agent now
        names another model is reported, never silently continued on it.
        """

    @property
    def read_timeout(self) -> float | None:
        """Seconds one call may wait for the service before giving up; None: no such wait.

        The serverless runtime keeps this much time (plus the tool timeout and a safety) in
        hand at each boundary, so a call it starts can finish before the Lambda deadline. A
        model that declares None (the scripted ones, which never wait) gets the runtime's
        default budget.
        """
        return None

    def classify_error(self, exc: BaseException) -> ModelErrorKind:
        """What `exc`, raised by this model's SDK during a call, means (see `ModelErrorKind`).

        This base recognises elsai's own model errors and the builtin connection and timeout
        errors; a provider adds its SDK's exceptions and falls back to this.
        """
        if isinstance(exc, ModelAccessDeniedError):
            return "access_denied"
        if isinstance(exc, ModelThrottledError):
            return "throttled"
        if isinstance(exc, ContextWindowOverflowError):
            return "overflow"
        if isinstance(exc, ConnectionError | TimeoutError):
            return "transient"
        return "other"

    @property
    def access_help(self) -> str:
        """What a person does when a call is refused ("access_denied"): shown with the error."""
        return _GENERIC_ACCESS_HELP

    @abc.abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Yield the events of one model call, ending with exactly one `ModelStop`."""

    @property
    def config(self) -> dict[str, Any]:
        """Provider settings, for display and telemetry."""
        return {}
