"""Message segments: a derived read accelerator, so resume cost does not grow with history.

The spec's `messages/message_<N>.json` stay the source of truth. Beside them, a segment file
holds copies of messages [a, b) (`keys.segment_key`), written once, never replaced:

- a block of `SEGMENT_SIZE` messages gets its segment as soon as the message after it exists
  (only the last message is ever replaced, so a block that is not last never changes again);
- two neighbouring segments of the same size are merged into one of twice that size, so the
  immutable prefix of any history of n messages is covered by at most log2(n / SEGMENT_SIZE)
  + 1 segments (its binary decomposition, `covering`), whatever n is.

A reader uses a segment only when it verifies: the name, range and message ids agree, a
digest of its records matches, its end lies before the last stored message, and any message
file read anyway holds the same message. Anything else (missing, corrupt, stale) is ignored
with a warning and the message files are read instead. A message file rewritten after its
segment was written is not detected by a resume (that would cost a read per message): rewrite
messages with `elsai sessions redact` (elsai.session.write.redact), which rewrites the segments
copying them too; `elsai sessions check` reports a segment whose copy differs from its file.
`elsai sessions show` reads the message files only.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from elsai.session.layout.records import MessageRecord, parse_json

logger: logging.Logger = logging.getLogger("elsai.session")

#: Messages in the smallest segment; bigger ones are powers of two times this.
SEGMENT_SIZE = 64


class SegmentInvalid(ValueError):
    """A segment that must not be used (the reason says why); the message files are read."""


class MessageSegment(BaseModel):
    """The stored form of one segment: copies of the message records [start, end)."""

    # Its validator is built when the first segment is read.
    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["elsai.message_segment"] = "elsai.message_segment"
    schema_version: Literal["1"] = "1"
    start: int
    end: int
    digest: str
    records: list[dict[str, Any]]


def _digest(records: Sequence[dict[str, Any]]) -> str:
    canonical = json.dumps(list(records), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def covering(start: int, count: int) -> list[tuple[int, int]]:
    """The segments a reader of messages [start, count) may use, in order.

    The binary decomposition of the full blocks before the last message (which may still be
    replaced), keeping those that lie wholly inside [start, count).
    """
    if count <= 0:
        return []
    blocks = (count - 1) // SEGMENT_SIZE
    out: list[tuple[int, int]] = []
    position = 0
    for level in range(blocks.bit_length() - 1, -1, -1):
        size = 1 << level
        if blocks & size:
            a, b = position * SEGMENT_SIZE, (position + size) * SEGMENT_SIZE
            if a >= start:
                out.append((a, b))
            position += size
    return out


def merges_after(block: int) -> list[tuple[int, int]]:
    """Segments to write once block number `block` is complete: itself, then its merges."""
    out = [(block * SEGMENT_SIZE, (block + 1) * SEGMENT_SIZE)]
    size = 2
    while (block + 1) % size == 0:
        out.append(((block + 1 - size) * SEGMENT_SIZE, (block + 1) * SEGMENT_SIZE))
        size *= 2
    return out


def encode(start: int, records: Sequence[dict[str, Any]]) -> bytes:
    """The bytes of the segment holding `records` (message files as parsed JSON) from `start`."""
    segment = MessageSegment(
        start=start, end=start + len(records), digest=_digest(records), records=list(records)
    )
    return segment.model_dump_json().encode()


def parse(data: bytes, start: int, end: int) -> list[dict[str, Any]]:
    """The raw records of a segment [start, end), checked; raises SegmentInvalid."""
    try:
        segment = MessageSegment.model_validate_json(data)
    except ValidationError as exc:
        raise SegmentInvalid(f"not a readable segment ({exc.error_count()} problems)") from exc
    if (segment.start, segment.end) != (start, end) or len(segment.records) != end - start:
        raise SegmentInvalid(
            f"holds {len(segment.records)} records for [{segment.start}, {segment.end})"
        )
    if _digest(segment.records) != segment.digest:
        raise SegmentInvalid("its digest does not match its records")
    if [r.get("message_id") for r in segment.records] != list(range(start, end)):
        raise SegmentInvalid("its message ids are not consecutive from its start")
    return segment.records


def decode(data: bytes, start: int, end: int, count: int) -> list[MessageRecord]:
    """The records of a stored segment [start, end) of a history of `count` messages."""
    if end >= count:
        raise SegmentInvalid(f"reaches message {end - 1}, but only {count} messages are stored")
    parse(data, start, end)
    try:
        # Parsed again through the records' decoder, so bytes values come back as bytes.
        raw = parse_json(data)["records"]
        return [MessageRecord.model_validate(r) for r in raw]
    except (ValueError, ValidationError) as exc:
        raise SegmentInvalid("a record is not a valid message record") from exc


def warn_ignored(where: str, reason: str) -> None:
    """Say that a segment was ignored (the message files are read instead)."""
    logger.warning("ignoring message segment %s (%s); reading the message files", where, reason)
