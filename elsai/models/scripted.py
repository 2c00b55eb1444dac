"""ScriptedModel: the offline model for tests, examples and demos.

It replays a list of responses and streams them in small chunks, exactly like a real
provider, so streaming and assembly paths run in every test.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, cast

from elsai.errors import ScriptExhaustedError
from elsai.models.base import (
    BlockStop,
    Model,
    ModelEvent,
    ModelRequest,
    ModelStop,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from elsai.types import Message, StopReason, ToolChoice, ToolSpec

ScriptItem = str | dict[str, Any] | Exception | Callable[[ModelRequest], "str | dict[str, Any]"]


Recording = bool | Literal["full", "summary"]


@dataclass(frozen=True)
class RecordedRequest:
    """What the scripted model was asked, copied so later changes do not show through.

    A summary (the default) keeps the size of the conversation and a copy of its last
    message only, so recording costs the same at call 5,000 as at call 1. The whole
    conversation is kept only when asked for (`ScriptedModel(record="full")`); reading
    `messages` of a summary raises instead of quietly answering with part of it.
    """

    message_count: int
    last_message: Message | None
    tool_specs: list[ToolSpec]
    system_prompt: str | None
    tool_choice: ToolChoice | None
    full_messages: list[Message] | None = None

    @property
    def messages(self) -> list[Message]:
        """The whole conversation of the call; needs `record="full"` (or `True`)."""
        if self.full_messages is None:
            raise RuntimeError(
                "this request was recorded as a summary (message_count, last_message); "
                'build the model with ScriptedModel(..., record="full") to keep whole conversations'
            )
        return self.full_messages


class ScriptedModel(Model):
    """Replays `responses` one per model call.

    Items: a Converse assistant message dict, a `str` (text-only reply), an exception instance
    (raised by that call), or a callable taking the request and returning one of the first two.
    The stop reason is `tool_use` when the message has toolUse blocks, else `end_turn`; a
    message dict may override it with a `"stopReason"` key (e.g. `"max_tokens"`), which is not
    part of the streamed message.
    Every request is recorded in `requests`: by default as a summary (message count, last
    message), cheap at any length; `record="full"` (or `True`) keeps deep copies of whole
    conversations, which grows quadratically over a long full-history script; `record=False`
    keeps nothing. `model_id` names the model in a serverless job's build fingerprint (a test
    changes it to play a changed model). A scripted model never waits for a service, so it
    declares no `read_timeout`; an exception item is classified as the base class does, so
    scripting `ModelAccessDeniedError(...)` or `ModelThrottledError(...)` plays that failure.
    """

    def __init__(
        self,
        responses: Iterable[object],
        *,
        chunk_size: int = 8,
        record: Recording = "summary",
        model_id: str = "scripted",
    ) -> None:
        self._model_id = model_id
        self._responses = [_script_item(n, item) for n, item in enumerate(responses)]
        self._next = 0
        self._chunk = max(1, chunk_size)
        if record not in (True, False, "full", "summary"):
            raise ValueError(f'record must be "summary", "full", True or False, got {record!r}')
        self._record: Recording = "full" if record is True else record
        self.requests: list[RecordedRequest] = []

    @property
    def model_id(self) -> str:
        """The name the fingerprint records (`"scripted"` unless given)."""
        return self._model_id

    @property
    def calls(self) -> int:
        """How many scripted responses were served so far."""
        return self._next

    @property
    def remaining(self) -> int:
        """How many scripted responses are left, so a test can check the script was used up."""
        return len(self._responses) - self._next

    @property
    def config(self) -> dict[str, Any]:
        """The settings that identify this model, for logs and traces."""
        return {"provider": "scripted", "responses": len(self._responses)}

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Serve the next scripted response as the events a real provider would emit."""
        if self._record:
            self.requests.append(self._recorded(request))
        item = self._pick(request)
        if isinstance(item, Exception):
            raise item
        if callable(item):
            item = item(request)
        stop_override = item.get("stopReason") if isinstance(item, dict) else None
        message = _as_message(item)
        for event in self._events(message, stop_override):
            yield event

    def _recorded(self, request: ModelRequest) -> RecordedRequest:
        messages = request.messages
        return RecordedRequest(
            message_count=len(messages),
            last_message=copy.deepcopy(messages[-1]) if messages else None,
            tool_specs=copy.deepcopy(list(request.tool_specs)),
            system_prompt=request.system_prompt,
            tool_choice=copy.deepcopy(request.tool_choice),
            full_messages=copy.deepcopy(list(messages)) if self._record == "full" else None,
        )

    def _pick(self, request: ModelRequest) -> ScriptItem:
        """The next response in call order (PositionalScriptedModel picks by transcript)."""
        if self._next >= len(self._responses):
            raise ScriptExhaustedError(
                f"ScriptedModel ran out of responses: it was given {len(self._responses)} "
                f"response(s) and this is model call number {self._next + 1}"
            )
        item = self._responses[self._next]
        self._next += 1
        return item

    def _events(
        self, message: Message, stop_override: StopReason | None = None
    ) -> Iterable[ModelEvent]:
        has_tool = False
        chars = 0
        for index, block in enumerate(message["content"]):
            if "text" in block:
                text = block["text"]
                chars += len(text)
                for i in range(0, max(len(text), 1), self._chunk):
                    yield TextDelta(text=text[i : i + self._chunk], index=index)
            elif "toolUse" in block:
                has_tool = True
                use = block["toolUse"]
                yield ToolUseStart(index=index, tool_use_id=use["toolUseId"], name=use["name"])
                raw = json.dumps(use.get("input", {}))
                chars += len(raw)
                for i in range(0, len(raw), self._chunk * 4):
                    yield ToolInputDelta(index=index, fragment=raw[i : i + self._chunk * 4])
            yield BlockStop(index=index)
        stop: StopReason = stop_override or ("tool_use" if has_tool else "end_turn")
        out = max(1, chars // 4)
        yield ModelStop(
            stop_reason=stop,
            usage={"inputTokens": 10, "outputTokens": out, "totalTokens": 10 + out},
        )


class PositionalScriptedModel(ScriptedModel):
    """A scripted model whose reply depends on the conversation, not on how often it was called.

    Reply N is given when the conversation already holds N assistant turns. A rebuilt agent
    given the same whole script therefore continues where the stored transcript ends: after a
    crash and resume the tools run once and the transcript does not grow twice. That makes it
    the natural offline model for durable agents; `ScriptedModel` keeps call-order replay.
    """

    def _pick(self, request: ModelRequest) -> ScriptItem:
        position = sum(1 for m in request.messages if m.get("role") == "assistant")
        self._next += 1
        if position >= len(self._responses):
            raise ScriptExhaustedError(
                f"PositionalScriptedModel has {len(self._responses)} response(s), but the "
                f"conversation already holds {position} assistant turn(s): add replies for "
                "the turns after them"
            )
        return self._responses[position]


def _script_item(index: int, item: object) -> ScriptItem:
    """One response of a script, checked when the model is built.

    The parameter takes `object`s: a script literal mixes text and message dicts, and a type
    checker joins those to their common base (mypy: `Collection[str]`), which no union of
    the item types accepts. Each item is checked here instead, before any call.
    """
    if isinstance(item, dict):
        _as_message(item)  # raises for anything but an assistant Converse message
        return cast(dict[str, Any], item)
    if isinstance(item, str | Exception) or callable(item):
        return cast(ScriptItem, item)
    raise TypeError(
        f"ScriptedModel response {index} must be a str, an assistant Converse message dict, "
        f"an exception or a callable, got {type(item).__name__}"
    )


def _as_message(item: str | dict[str, Any]) -> Message:
    if isinstance(item, str):
        return {"role": "assistant", "content": [{"text": item}]}
    if item.get("role") != "assistant" or not isinstance(item.get("content"), list):
        raise ValueError(
            f"ScriptedModel responses must be str or assistant Converse messages, got {item!r}"
        )
    return {"role": "assistant", "content": copy.deepcopy(item["content"])}
