"""Job errors that no retry can fix, named so the state machine does not retry them.

The Lambda runtime reports an exception's class name as the Step Functions error, so these
names appear in the state machine's non-retried list (``elsai.serverless.contract``
derives it from these classes) and in
``GET /jobs/{id}``'s ``error``. Their messages say what a person has to do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from elsai.errors import ElsaiError
from elsai.interrupt.limits import InterruptPayloadTooLargeError, check_payload

# Well below Step Functions' 256 KiB state cap: the state also carries ids and counters,
# and the park step's input repeats the interrupts next to the task token.
MAX_INTERRUPTS_BYTES = 64 * 1024

MODEL_ACCESS_STEPS = (
    "An administrator must enable this model for the account once: in the Bedrock console open "
    "the model catalog, pick the model and request/submit access (for Anthropic models the "
    "first-use form with the use case details); Bedrock then subscribes the account through "
    "AWS Marketplace, which needs aws-marketplace:Subscribe and aws-marketplace:ViewSubscriptions "
    "for whoever does it the first time. If the message names an IAM action instead, the agent "
    "role lacks bedrock:InvokeModel* on this model's ARN (modelId in cdk.json). "
    "See docs/deploying.md, 'Bedrock first use'."
)


class ModelAccessDeniedError(ElsaiError):
    """The model refused the account (no model access / Marketplace / IAM): not retried."""


class BuildMismatchError(ElsaiError):
    """A pinned job's agent is not the build it started on (fingerprint differs): not retried.

    Retrying runs the same code again; only an explicit upgrade (``POST /jobs/{id}/upgrade``)
    moves a job to other code. The message names what differs.
    """


def _client_error_code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return ""
    return str(response.get("Error", {}).get("Code", ""))


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def access_denied_cause(exc: BaseException) -> BaseException | None:
    """The ``AccessDeniedException`` behind ``exc`` (a model call failure), if any."""
    for cause in _causes(exc):
        if _client_error_code(cause) == "AccessDeniedException":
            return cause
    return None


@contextmanager
def model_access_guard() -> Iterator[None]:
    """Turn a model's AccessDeniedException into ModelAccessDeniedError with the fix."""
    try:
        yield
    except ModelAccessDeniedError:
        raise
    except Exception as exc:
        denied = access_denied_cause(exc)
        if denied is None:
            raise
        raise ModelAccessDeniedError(f"{denied} -- {MODEL_ACCESS_STEPS}") from exc


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
    "access_denied_cause",
    "checked_interrupts",
    "model_access_guard",
]
