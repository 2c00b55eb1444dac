"""Model providers. Providers are imported lazily so `import elsai` stays light."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from elsai.models.base import Model, ModelEvent, ModelRequest

if TYPE_CHECKING:
    from elsai.models.anthropic import AnthropicModel
    from elsai.models.bedrock import BedrockModel
    from elsai.models.openai import OpenAIModel
    from elsai.models.scripted import PositionalScriptedModel, ScriptedModel

__all__ = [
    "AnthropicModel",
    "BedrockModel",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "OpenAIModel",
    "PositionalScriptedModel",
    "ScriptedModel",
]


def __getattr__(name: str) -> Any:
    if name == "ScriptedModel":
        from elsai.models.scripted import ScriptedModel

        return ScriptedModel
    if name == "PositionalScriptedModel":
        from elsai.models.scripted import PositionalScriptedModel

        return PositionalScriptedModel
    if name == "BedrockModel":
        from elsai.models.bedrock import BedrockModel

        return BedrockModel
    if name == "AnthropicModel":
        from elsai.models.anthropic import AnthropicModel

        return AnthropicModel
    if name == "OpenAIModel":
        from elsai.models.openai import OpenAIModel

        return OpenAIModel
    raise AttributeError(f"module 'elsai.models' has no attribute {name!r}")
