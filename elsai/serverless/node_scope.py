"""The job's session for one orchestration step, loading only the node agents the step uses.

Every step rebuilds the whole Graph or Swarm from the factory, and building an Agent on a
session manager loads its conversation, state and bookmark. A node slice needs one node's
agent, Plan none, Fold the nodes of its batch; loading every node would make each step cost
as many S3 reads as the orchestrator has nodes. `ScopedSessionManager` binds the agents it
is told to load and gives the others a binding that refuses to run them, so a step's reads
depend on what it does, not on the size of the graph.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

from elsai.loop.persistence import LoopPersistence
from elsai.serverless.contract import JobStepRequest
from elsai.serverless.contract.node_steps import FoldRequest, NodeSliceRequest
from elsai.session.manager import SessionManager
from elsai.session.write.bound import BoundAgent
from elsai.types import ContentBlock, Message, Position, ResumePlan

_KNOBS = ("lease_seconds", "overlap_bookmark", "overlap_after_model")


def loaded_nodes(request: JobStepRequest) -> frozenset[str]:
    """The node agents a step reads: its own node (a slice), its batch (a fold), none (a plan)."""
    if isinstance(request, NodeSliceRequest):
        return frozenset([request.node])
    if isinstance(request, FoldRequest):
        return frozenset(str(item.get("node")) for item in request.results)
    return frozenset()


class ScopedSessionManager(SessionManager):
    """`inner`'s session, where only the agents named in `loaded` are loaded when built."""

    def __init__(self, inner: SessionManager, loaded: Iterable[str]) -> None:
        super().__init__(inner.session_id, inner.storage)
        self.inner = inner
        self.loaded: frozenset[str] = frozenset(loaded)
        for knob in _KNOBS:
            setattr(self, knob, getattr(inner, knob))

    def bind_agent(self, agent: BoundAgent) -> Any:
        """`inner`'s binding for a loaded agent; for any other, one that refuses to run it."""
        if agent.agent_id in self.loaded:
            return self.inner.bind_agent(agent)
        return UnloadedAgent(agent.agent_id)

    def __getattr__(self, name: str) -> Any:
        # what the inner manager has beyond SessionManager (an S3 manager's bucket, prefix)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


class UnloadedAgent(LoopPersistence):
    """The persistence of a node agent this step did not load: any use of it is a bug."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id

    def _refuse(self) -> NoReturn:
        raise RuntimeError(
            f"agent {self.agent_id!r} was not loaded for this orchestration step "
            "(a step loads only the nodes it runs or folds)"
        )

    def begin_invocation(
        self, invocation_id: str | None, input_content: list[ContentBlock] | None = None
    ) -> ResumePlan:
        """Refused: running this agent would act on a conversation that was never read."""
        self._refuse()

    def message_appended(self, message: Message, *, invocation_id: str | None = None) -> None:
        """Refused (see begin_invocation)."""
        self._refuse()

    def last_message_replaced(self, message: Message, *, invocation_id: str | None = None) -> None:
        """Refused (see begin_invocation)."""
        self._refuse()

    def boundary(self, position: Position, cycle_index: int) -> bool:
        """Refused (see begin_invocation)."""
        self._refuse()

    def turn_ended(self) -> None:
        """Refused (see begin_invocation)."""
        self._refuse()

    def settle(self) -> None:
        """Nothing was ever written: nothing in flight."""
        return None

    def save_state(self) -> None:
        """Refused (see begin_invocation)."""
        self._refuse()

    def end_invocation(self) -> None:
        """Nothing held."""
        return None


__all__ = ["ScopedSessionManager", "UnloadedAgent", "loaded_nodes"]
