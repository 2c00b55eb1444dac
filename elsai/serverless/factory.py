"""Agent factories: users name `module:function` that builds their agent from a config."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from elsai.errors import AgentFactoryError

if TYPE_CHECKING:
    from elsai.agent.agent import Agent
    from elsai.agent.config import AgentConfig

AgentFactory = Callable[["AgentConfig"], "Agent"]


def load_factory(spec: str) -> AgentFactory:
    """Import `module:function`; errors name the spec so a misconfigured env var is obvious."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise AgentFactoryError(f"agent factory must look like 'module:function', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentFactoryError(
            f"cannot import agent factory module {module_name!r}: {exc}"
        ) from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise AgentFactoryError(f"agent factory {spec!r} is not a callable in {module_name!r}")
    return factory
