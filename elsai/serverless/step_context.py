"""What the agent function gives every step besides its request (the handler's side).

The step registry (`elsai.serverless.contract.steps`) names each step's function by path and
stays free of the runtime it describes; this protocol is the runtime side of that seam, so it
lives here, beside the step functions that take it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from elsai.serverless.deadline import DeadlinePolicy
    from elsai.serverless.factory import AgentFactory
    from elsai.session.manager import SessionManager
    from elsai.telemetry.otel import OtelTracing


class StepContext(Protocol):
    """What the agent function gives every step besides its request (the handler's side).

    A step takes only what it uses: the factory, tracing and the clock are there on demand,
    so a park never imports the user's agent.
    """

    #: The stop margin and default tool timeout policy of this deployment.
    deadline: DeadlinePolicy
    #: This invocation's id (the Lambda request id).
    invocation_id: str

    def session_manager(self, session_id: str, job_id: str) -> SessionManager:
        """The job's session, under its owner's storage prefix."""
        ...

    def factory(self) -> AgentFactory:
        """The deployed agent factory (imports the user's module on first use)."""
        ...

    def remaining_ms(self) -> int:
        """Milliseconds left before the function's deadline."""
        ...

    def tracing(self) -> OtelTracing | None:
        """OpenTelemetry tracing when it is on (call after `factory`: it may set the provider)."""
        ...

    def count(self, metric: str, value: int = 1) -> None:
        """Add `value` to a count metric of this invocation."""
        ...

    def log(self, message: str, **fields: Any) -> None:
        """One structured log line of this invocation."""
        ...
