"""Hooks: typed events fired by the agent loop, and the registry that dispatches them."""

from elsai.hooks.events import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookEvent,
    MessageAddedEvent,
)
from elsai.hooks.registry import HookProvider, HookRegistry

__all__ = [
    "AfterInvocationEvent",
    "AfterModelCallEvent",
    "AfterToolCallEvent",
    "BeforeInvocationEvent",
    "BeforeModelCallEvent",
    "BeforeToolCallEvent",
    "HookEvent",
    "HookProvider",
    "HookRegistry",
    "MessageAddedEvent",
]
