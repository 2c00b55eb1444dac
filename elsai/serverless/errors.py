"""Job errors that no retry can fix, named so the state machine does not retry them.

The Lambda runtime reports an exception's class name as the Step Functions error, so these
names appear in the state machine's non-retried list (``elsai.serverless.contract``
derives it from these classes) and in
``GET /jobs/{id}``'s ``error``. Their messages say what a person has to do.
``ModelAccessDeniedError`` is the model layer's own (``elsai.errors``: the providers raise it),
named here with the others.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from elsai.errors import ElsaiError, ModelAccessDeniedError
from elsai.interrupt.limits import InterruptPayloadTooLargeError, check_payload
from elsai.models.base import Model

# Well below Step Functions' 256 KiB state cap: the state also carries ids and counters,
# and the park step's input repeats the interrupts next to the task token.
MAX_INTERRUPTS_BYTES = 64 * 1024


class BuildMismatchError(ElsaiError):
    """A pinned job's agent is not the build it started on (fingerprint differs): not retried.

    Retrying runs the same code again; only an explicit upgrade (``POST /jobs/{id}/upgrade``)
    moves a job to other code. The message names what differs.
    """


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def access_denied(exc: BaseException, model: Model) -> ModelAccessDeniedError | None:
    """The access refusal behind ``exc`` (a failed model call of ``model``), if it is one.

    Any provider's: the model's own error classifier decides, on ``exc`` and its causes, so a
    Bedrock AccessDeniedException, an Anthropic or OpenAI 401/403 and a custom model's refusal
    all end the same way. A ``ModelAccessDeniedError`` the provider raised is returned as is.
    """
    for cause in _causes(exc):
        if isinstance(cause, ModelAccessDeniedError):
            return cause
        if model.classify_error(cause) == "access_denied":
            return ModelAccessDeniedError(f"{cause} -- {model.access_help}")
    return None


@contextmanager
def model_access_guard(model: Model) -> Iterator[None]:
    """Turn ``model``'s access refusal into ``ModelAccessDeniedError``, the non-retried job error.

    The Lambda runtime reports the class name of what the handler raises, so the refusal must
    leave the slice as this class, not wrapped in another.
    """
    try:
        yield
    except ModelAccessDeniedError:
        raise
    except Exception as exc:
        denied = access_denied(exc, model)
        if denied is None:
            raise
        raise denied from exc


def checked_interrupts(interrupts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``interrupts`` unchanged, or InterruptPayloadTooLargeError if they are too large.

    A single agent's slice is refused earlier, before it stores them (`run_agent` sets the
    cap on its interrupt state); this also covers what a Graph or Swarm collects.
    """
    check_payload(interrupts, MAX_INTERRUPTS_BYTES)
    return interrupts


__all__ = [
    "MAX_INTERRUPTS_BYTES",
    "InterruptPayloadTooLargeError",
    "ModelAccessDeniedError",
    "access_denied",
    "checked_interrupts",
    "model_access_guard",
]
