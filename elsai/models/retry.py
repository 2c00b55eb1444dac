"""Retrying a model stream: the policy every provider shares.

Throttled and transient failures are retried with capped, fully jittered exponential backoff,
and only while nothing was yielded, so a caller never sees part of a reply twice. What a failure
means is the model's own `classify_error` (see `ModelErrorKind`); the provider's name words the
`elsai.errors` exception a failure becomes. No SDK is imported here.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field

from elsai.errors import (
    ContextWindowOverflowError,
    ElsaiError,
    ModelAccessDeniedError,
    ModelError,
    ModelThrottledError,
)
from elsai.models.base import Model, ModelErrorKind, ModelEvent

Sleep = Callable[[float], Awaitable[None]]

logger: logging.Logger = logging.getLogger("elsai.models")
#: The kinds worth another attempt.
RETRYABLE: frozenset[ModelErrorKind] = frozenset({"throttled", "transient"})


@dataclass
class RetryPolicy:
    """Retry settings of a provider; `sleep` and `rng` are replaced in tests."""

    max_retries: int
    initial_backoff: float
    max_backoff: float
    sleep: Sleep = field(default=asyncio.sleep, repr=False, compare=False)
    rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.max_retries = max(0, self.max_retries)

    def backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(max_backoff, initial * 2**attempt)]."""
        cap = min(self.max_backoff, self.initial_backoff * (2**attempt))
        return self.rng.uniform(0.0, cap)


def model_error(
    exc: Exception, kind: ModelErrorKind, model: Model, provider: str, midway: bool = False
) -> ModelError:
    """The `elsai.errors` exception a failure of `kind` becomes.

    `midway`: part of the reply had been yielded, which is why a retryable failure was not
    retried; the message says so, since "connection error" alone reads like a setup problem.
    """
    if kind == "access_denied":
        return ModelAccessDeniedError(
            f"{provider} refused access to model {model.model_id!r}: {exc} -- {model.access_help}"
        )
    if kind == "throttled":
        return ModelThrottledError(f"{provider} kept throttling: {exc}")
    if kind == "overflow":
        return ContextWindowOverflowError(f"{provider} input exceeds the context window: {exc}")
    if midway and kind in RETRYABLE:
        return ModelError(
            f"{provider} call failed mid-reply: {exc} (not retried: part of the reply had "
            "already arrived)"
        )
    return ModelError(f"{provider} call failed: {exc}")


async def stream_with_retries(
    attempt: Callable[[], AsyncGenerator[ModelEvent, None]],
    policy: RetryPolicy,
    model: Model,
    provider: str,
) -> AsyncGenerator[ModelEvent, None]:
    """Yield the events of `attempt()`, retrying what `model.classify_error` calls retryable.

    A retry happens only before the first event was yielded; after that the consumer has seen
    part of a reply, so `model_error(...)` is raised instead. `ElsaiError`s pass through
    untouched.
    """
    tries, failure = 0, ""
    while True:
        source = attempt()
        yielded = False
        try:
            while True:
                # Only the provider call sits inside `try`: errors thrown into this generator
                # by the consumer must not be taken for provider errors.
                try:
                    event = await source.__anext__()
                except StopAsyncIteration:
                    return
                except ElsaiError:
                    raise
                except Exception as exc:
                    kind = model.classify_error(exc)
                    if kind in RETRYABLE and not yielded and tries < policy.max_retries:
                        failure = f"{kind}: {type(exc).__name__}: {exc}"
                        break
                    raise model_error(exc, kind, model, provider, midway=yielded) from exc
                yielded = True
                yield event
        finally:
            await source.aclose()
        delay = policy.backoff(tries)
        # Said every time: a network outage must not look like a silent hang.
        logger.warning(
            "%s call failed (%s); retry %d of %d in %.1fs",
            provider,
            failure,
            tries + 1,
            policy.max_retries,
            delay,
        )
        await policy.sleep(delay)
        tries += 1
