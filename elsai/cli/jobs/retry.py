"""How a follower rides out a slow or briefly unreachable jobs API.

A follow is only a view of a job that runs on its own: one poll that times out, a reset
connection or a 429/5xx says nothing about the job. So each poll is retried with capped
exponential backoff and full jitter (many followers do not retry in step) until the API has
failed for `give_up_after` seconds in a row; then the follower stops with `EXIT_GAVE_UP`,
never with the code of a failed job. Clock, sleep and randomness are injectable for tests.
"""

from __future__ import annotations

import http.client
import random
import time
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from elsai.client import ApiError

#: Exit code when the follower lost contact with the API: the job may still be running.
EXIT_GAVE_UP = 5
T = TypeVar("T")


class GaveUp(Exception):
    """The API kept failing for the whole retry window; `last` is its final failure."""

    def __init__(self, attempts: int, seconds: float, last: BaseException) -> None:
        """Keep what the message needs."""
        super().__init__(f"{attempts} attempts over {seconds:.0f}s; last: {describe(last)}")
        self.attempts: int = attempts
        self.seconds: float = seconds
        self.last: BaseException = last


def describe(exc: BaseException) -> str:
    """One line naming a failure (the class, and the message when it has one)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def is_transient(exc: BaseException) -> bool:
    """Whether `exc` says nothing about the job: timeouts, connection trouble, 429, 5xx."""
    if isinstance(exc, ApiError):
        return exc.status == 429 or exc.status >= 500
    # HTTPError is an ApiError by then (the client converts it); URLError wraps refusals/DNS.
    return isinstance(
        exc, TimeoutError | ConnectionError | urllib.error.URLError | http.client.HTTPException
    )


@dataclass
class RetryPolicy:
    """Backoff `base` doubling up to `cap` seconds, with full jitter, for `give_up_after` s."""

    give_up_after: float = 900.0
    base: float = 0.5
    cap: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    rng: random.Random = field(default_factory=random.Random)
    #: Called before each wait with the failure and the delay (the follower tells the user).
    on_retry: Callable[[BaseException, float], None] | None = None

    def delay(self, attempt: int) -> float:
        """The wait before retry number `attempt` (1-based): uniform in [0, min(cap, base·2^n)]."""
        return self.rng.uniform(0.0, min(self.cap, self.base * 2 ** (attempt - 1)))

    def call(self, fn: Callable[[], T]) -> T:
        """`fn()`, retried on transient failures; GaveUp once the window is spent."""
        started, attempt = self.clock(), 0
        while True:
            try:
                return fn()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                attempt += 1
                spent = self.clock() - started
                wait = self.delay(attempt)
                if spent + wait > self.give_up_after:
                    raise GaveUp(attempt, spent, exc) from exc
                if self.on_retry is not None:
                    self.on_retry(exc, wait)
                self.sleep(wait)
