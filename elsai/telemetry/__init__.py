"""Telemetry: OpenTelemetry traces through the hooks seam.

An agent attaches `OtelTracing` by itself once the application sets a global tracer provider
(`AgentConfig(tracing=False)` keeps it off); `AgentConfig(hooks=[OtelTracing(...)])` replaces it.

Needs the optional extra `otel` (`pip install 'elsai[otel]'`); without it `OtelTracing` is a
no-op, and `opentelemetry` is imported only when an `OtelTracing` is created.
"""

from elsai.telemetry.otel import OtelTracing

__all__ = ["OtelTracing"]
