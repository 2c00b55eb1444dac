"""Telemetry: OpenTelemetry traces through the hooks seam (`AgentConfig(hooks=[OtelTracing()])`).

Needs the optional extra `otel` (`pip install 'elsai[otel]'`); without it `OtelTracing` is a
no-op, and `opentelemetry` is imported only when an `OtelTracing` is created.
"""

from elsai.telemetry.otel import OtelTracing

__all__ = ["OtelTracing"]
