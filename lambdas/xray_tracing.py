"""X-Ray tracing for the handlers that costs nothing at cold start when tracing is off.

Powertools' ``Tracer()`` imports ``aws_xray_sdk.core`` in its constructor even when tracing is
disabled (about 0.3 s of a 3.12 cold start here), and its decorators then wrap every call in a
subsegment that goes nowhere. ``LazyTracer`` asks the same question Powertools asks
(``POWERTOOLS_TRACE_DISABLED``, running outside Lambda or under SAM/Chalice local) when it is
first used; only if tracing is on does it build the real ``Tracer`` and apply its decorators,
so traced functions behave exactly as before. With tracing off the decorators return the
function unchanged and ``aws_xray_sdk`` is never imported.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_TRUTHY = {"1", "y", "yes", "t", "true", "on"}


def tracing_enabled() -> bool:
    """Powertools' rule: on inside Lambda unless POWERTOOLS_TRACE_DISABLED or a local emulator."""
    if os.environ.get("POWERTOOLS_TRACE_DISABLED", "false").strip().lower() in _TRUTHY:
        return False
    if not os.environ.get("LAMBDA_TASK_ROOT"):
        return False
    return not (os.environ.get("AWS_SAM_LOCAL") or os.environ.get("AWS_CHALICE_CLI_MODE"))


class LazyTracer:
    """Drop-in for the decorators and calls the handlers use of ``aws_lambda_powertools.Tracer``.

    ``tracer`` is the real Powertools ``Tracer`` (built on first use) or None when tracing is
    off; ``put_annotation``/``put_metadata`` are no-ops then, as Powertools' are when disabled.
    """

    def __init__(self, **tracer_options: Any) -> None:
        self._options = tracer_options
        self._tracer: Any = None
        self._decided = False

    @property
    def tracer(self) -> Any:
        """The Powertools Tracer when tracing is on (imports the X-Ray SDK), else None."""
        if not self._decided:
            self._decided = True
            if tracing_enabled():
                from aws_lambda_powertools import Tracer

                self._tracer = Tracer(**self._options)
        return self._tracer

    def capture_lambda_handler(
        self, handler: F | None = None, **options: Any
    ) -> Any:  # F, or a decorator of F when called with options
        """``@tracer.capture_lambda_handler`` or ``@tracer.capture_lambda_handler(...)``."""
        if handler is None:
            return functools.partial(self.capture_lambda_handler, **options)
        real = self.tracer
        return handler if real is None else real.capture_lambda_handler(handler, **options)

    def capture_method(self, method: F | None = None, **options: Any) -> Any:
        """``@tracer.capture_method`` or ``@tracer.capture_method(capture_response=False)``."""
        if method is None:
            return functools.partial(self.capture_method, **options)
        real = self.tracer
        return method if real is None else real.capture_method(method, **options)

    def put_annotation(self, key: str, value: str | float | bool) -> None:
        """Annotate the current segment (nothing when tracing is off)."""
        if self.tracer is not None:
            self.tracer.put_annotation(key=key, value=value)

    def put_metadata(self, key: str, value: Any, namespace: str | None = None) -> None:
        """Attach metadata to the current segment (nothing when tracing is off)."""
        if self.tracer is not None:
            self.tracer.put_metadata(key=key, value=value, namespace=namespace)
