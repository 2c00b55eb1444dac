"""Rewriting a stored message (e.g. redacting it) and what derives from it.

Message files are the source of truth, and message segments (elsai.session.read.segments) are
copies of them that a resume reads instead. A rewrite therefore replaces the message file
(conditionally on the version read) and then every segment holding a copy of that message,
so a rebuilt agent is fed what the file now says. Run it on an agent that is not running: a
live writer holds the messages of its open block in memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from elsai.session.layout import keys
from elsai.session.layout.records import MessageRecord, SessionCorruptError, dump, load
from elsai.session.read.segments import SegmentInvalid, encode, parse
from elsai.session.storage.base import StorageBackend

Rewrite = Callable[[dict[str, Any]], dict[str, Any]]


def redact_text(text: str) -> Rewrite:
    """A rewrite that replaces every text of a message (tool results' included) with `text`."""

    def blocks(content: Any) -> Any:
        if not isinstance(content, list):
            return content
        out = []
        for block in content:
            if isinstance(block, dict) and "text" in block:
                block = {**block, "text": text}
            elif isinstance(block, dict) and isinstance(block.get("toolResult"), dict):
                result = block["toolResult"]
                block = {
                    **block,
                    "toolResult": {**result, "content": blocks(result.get("content"))},
                }
            out.append(block)
        return out

    return lambda message: {**message, "content": blocks(message.get("content"))}


def rewrite_message(
    storage: StorageBackend, session_id: str, agent_id: str, index: int, rewrite: Rewrite
) -> list[str]:
    """Rewrite message `index` of an agent, then the segments copying it; those segments' keys.

    Raises SessionCorruptError if there is no such message (or it is unreadable), and
    SessionConflictError if a writer changed the file or a segment meanwhile.
    """
    key = keys.message_key(session_id, agent_id, index)
    found = storage.read(key)
    if found is None:
        raise SessionCorruptError(f"no message {index}: {storage.describe(key)} does not exist")
    record = load(MessageRecord, found.data, storage.describe(key))
    updated = record.model_copy(update={"message": rewrite(dict(record.message))})
    data = dump(updated)
    storage.replace(key, data, expected_version=found.version)
    copy = json.loads(data)
    rewritten = []
    for segment_key in sorted(storage.list(keys.segments_prefix(session_id, agent_id))):
        span = keys.segment_range(segment_key)
        if span is None or not span[0] <= index < span[1]:
            continue
        segment = storage.read(segment_key)
        if segment is None:
            continue
        try:
            records = parse(segment.data, *span)
        except SegmentInvalid:
            continue  # never used by a reader anyway
        records[index - span[0]] = copy
        storage.replace(segment_key, encode(span[0], records), expected_version=segment.version)
        rewritten.append(segment_key)
    return rewritten
