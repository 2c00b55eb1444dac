"""Exceptions users may catch. One place, so `except elsai.errors.X` is easy to find."""

from __future__ import annotations


class ElsaiError(Exception):
    """Base class of every error elsai raises on purpose."""


class ModelError(ElsaiError):
    """A model provider failed in a way retries did not fix."""


class ModelThrottledError(ModelError):
    """The provider kept throttling after the retry budget was spent."""


class ContextWindowOverflowError(ModelError):
    """The request did not fit the model's context window.

    Conversation managers catch this, shrink the conversation and retry once.
    """


class ScriptExhaustedError(ModelError):
    """A ScriptedModel was called more times than it had responses."""


class ConcurrentInvocationError(ElsaiError):
    """An agent was invoked while another invocation of the same agent was running."""


class StructuredOutputError(ElsaiError):
    """The model did not produce valid structured output within the retry budget."""


class ToolError(ElsaiError):
    """Raised inside tools to return a clean error result to the model."""
