"""SummarizingConversationManager: on overflow, replace the oldest messages by a summary."""

from __future__ import annotations

from typing import Any, cast

from elsai.conversation.base import ConversationManager, ConversationView
from elsai.models.base import Model, ModelRequest
from elsai.models.stream import MessageAssembler
from elsai.types import Message, text_of

DEFAULT_SUMMARY_PROMPT = (
    "Summarize the conversation so far for your own later use: the user's goals, facts "
    "learned, tool results that matter, decisions made and open questions. Be concise."
)
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


class SummarizingConversationManager(ConversationManager):
    """On context overflow, replaces the oldest messages with a model-written summary."""

    def __init__(
        self,
        summary_ratio: float = 0.3,
        preserve_recent_messages: int = 10,
        summarization_model: Model | None = None,
        summarization_prompt: str = DEFAULT_SUMMARY_PROMPT,
    ) -> None:
        super().__init__()
        if not 0.1 <= summary_ratio <= 0.8:
            raise ValueError("summary_ratio must be between 0.1 and 0.8")
        self.summary_ratio = summary_ratio
        self.preserve_recent_messages = preserve_recent_messages
        self.summarization_model = summarization_model
        self.summarization_prompt = summarization_prompt
        self.summary: Message | None = None

    def apply_management(self, agent: ConversationView) -> None:
        """Nothing to do proactively; this manager acts only on overflow."""
        return None

    async def reduce_context(self, agent: ConversationView, error: Exception) -> None:
        """Summarize the oldest part of the conversation and keep the recent part."""
        messages = agent.messages
        offset = 1 if self.summary is not None and messages and messages[0] is self.summary else 0
        split = max(offset + 1, int(len(messages) * self.summary_ratio))
        split = min(split, len(messages) - self.preserve_recent_messages)
        # The kept part must start with an assistant message (it follows the summary, a user
        # message) and must not start with a toolResult whose toolUse would be summarized.
        while split < len(messages) and messages[split]["role"] != "assistant":
            split += 1
        if split <= offset or split >= len(messages):
            raise error
        summary_text = await self._summarize(agent, messages[:split])
        self.summary = {"role": "user", "content": [{"text": SUMMARY_PREFIX + summary_text}]}
        self.removed_message_count += split - offset
        agent.messages[:] = [self.summary, *messages[split:]]

    async def _summarize(self, agent: ConversationView, messages: list[Message]) -> str:
        model = self.summarization_model or agent.model
        convo = [*messages]
        if convo[-1]["role"] == "user":
            convo[-1] = {
                "role": "user",
                "content": [*convo[-1]["content"], {"text": self.summarization_prompt}],
            }
        else:
            convo.append({"role": "user", "content": [{"text": self.summarization_prompt}]})
        assembler = MessageAssembler()
        async for event in model.stream(
            ModelRequest(messages=convo, tool_specs=agent.tool_specs_for_history())
        ):
            assembler.feed(event)
        return text_of(assembler.message()) or "(no summary)"

    def get_state(self) -> dict[str, Any]:
        """The base state plus the current summary."""
        state = super().get_state()
        state["summary"] = self.summary
        return state

    def restore(self, state: dict[str, Any] | None) -> list[Message]:
        """Restore the summary; it is put back before the stored window."""
        super().restore(state)
        summary = (state or {}).get("summary")
        if summary is not None and not (
            isinstance(summary, dict)
            and summary.get("role") == "user"
            and isinstance(summary.get("content"), list)
            and all(isinstance(block, dict) for block in summary["content"])
        ):
            raise ValueError("summary must be a user message with a list of content blocks")
        self.summary = cast("Message | None", summary)
        return [self.summary] if self.summary else []
