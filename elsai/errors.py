"""Exceptions users may catch. One place, so `except elsai.errors.X` is easy to find."""

from __future__ import annotations


class ElsaiError(Exception):
    """Base class of every error elsai raises on purpose."""


class ModelError(ElsaiError):
    """A model provider failed in a way retries did not fix."""


class ModelConfigurationError(ModelError):
    """The model cannot be called as configured (no credentials, no such model or region).

    Raised before any request, with what to change; retrying cannot fix it.
    """


class ModelAccessDeniedError(ModelError):
    """The provider refused the credentials or the account access to the model.

    No model access enabled yet, a missing IAM permission, an invalid or unauthorised API key:
    a person must act, so it is never retried (the serverless runtime fails the job at once).
    The message says what to do for the provider.
    """


class ModelThrottledError(ModelError):
    """The provider kept throttling after the retry budget was spent."""


class ContextWindowOverflowError(ModelError):
    """The request did not fit the model's context window.

    Conversation managers catch this, shrink the conversation and retry once.
    """


class ScriptExhaustedError(ModelError):
    """A ScriptedModel was called more times than it had responses."""


class SessionConflictError(ElsaiError):
    """Another writer changed this session since we read it; nothing was overwritten.

    What to do: let the other writer finish, then rebuild the Agent with the same ids (so it
    loads what was stored) and invoke again. Defined here so lower layers can refine it;
    `elsai.session.SessionConflictError` is the same class.
    """


class AgentInUseError(SessionConflictError):
    """Another live process holds this agent's ownership lease; nothing was run or written.

    Retryable: wait until the time in the message (or until the other writer finishes) and
    invoke again. A crashed owner's lease expires, and the next invoke takes it over.
    """


class AgentOutOfSyncError(ElsaiError):
    """A message write of this agent object failed, so its memory may hold what the store lacks.

    The object refuses further invocations (it would write past the gap): rebuild the agent
    with the same session_id and agent_id, which loads what is stored, and invoke it again.
    """


class InvocationMismatchError(ElsaiError, ValueError):
    """An invocation_id the session already recorded was reused with a different prompt.

    The stored input wins (exactly-once), so running the new prompt would silently answer the
    old one; use a fresh invocation_id for new input.
    """


class AgentFactoryError(ElsaiError, ValueError):
    """The configured agent factory cannot be imported, called, or does not build an agent.

    A configuration error: retrying cannot fix it, so the serverless runtime fails the job at
    once with this message (and `cdk synth` checks the factory before anything is deployed).
    """


class ConcurrentInvocationError(ElsaiError):
    """An agent was invoked while another invocation of the same agent was running."""


class StructuredOutputError(ElsaiError):
    """The model did not produce valid structured output within the retry budget."""


class ToolError(ElsaiError):
    """Raised inside tools to return a clean error result to the model."""
