"""Loading an agent's conversation window: how many messages exist, and the ones it needs.

Listing every message key costs one LIST page per 1,000 messages, and most resumes need
only the tail. The bookmark (and agent.json) record how many messages existed when they
were written; a few parallel GETs around that number confirm the true count, and only when
the hint is missing or disproved does the loader fall back to listing.

A long window (a whole history) is read mostly from message segments (elsai.session.read.segments):
at most log2(n / SEGMENT_SIZE) + 1 of them cover any history, so the requests of a resume are
bounded by a constant, that logarithm and the part of the window after the last segment,
instead of one GET per message. Each segment used is checked against the message file of
its last message (read in the same wave); a segment that is missing or does not verify is
ignored and its message files are read instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain, islice
from typing import NamedTuple

from elsai.session.layout import keys
from elsai.session.layout.records import MessageRecord, SessionCorruptError, load
from elsai.session.read.segments import SegmentInvalid, covering, decode, warn_ignored
from elsai.session.storage.base import StorageBackend, StoredObject

#: Messages a crash can leave after the last recorded count (assistant message, tool results
#: or a repair); more than that and the loader lists instead.
PROBES = 3
#: Message files the first wave may read on a count hint nobody has checked yet. The hint is
#: stored data (a bookmark may claim 10**12 messages): a wave sized by it is read only when it
#: is this small; otherwise the hint is confirmed first, with a wave of PROBES + 1 files.
HINTED_WAVE_FILES = 256

Range = tuple[int, int]


class Window(NamedTuple):
    """The stored messages a restore loaded, and where they sit in the full history."""

    total: int  # stored messages in total
    start: int  # index of the first loaded message
    records: list[MessageRecord]
    last_version: str | None
    #: The message files read (index -> bytes): the segment writer may need them.
    files: dict[int, bytes] | None = None


class _Reads:
    """What one load fetched so far: message files by index, segments by range."""

    def __init__(self, storage: StorageBackend, session_id: str, agent_id: str) -> None:
        self.storage, self.session_id, self.agent_id = storage, session_id, agent_id
        self.files: dict[int, StoredObject] = {}
        self.segments: dict[Range, StoredObject | None] = {}

    def key(self, index: int) -> str:
        return keys.message_key(self.session_id, self.agent_id, index)

    def fetch(self, indices: Sequence[int], ranges: Sequence[Range] = ()) -> dict[int, bool]:
        """One parallel wave of the files and segments not fetched yet; which files exist."""
        indices = [i for i in indices if i not in self.files]
        ranges = [r for r in ranges if r not in self.segments]
        wanted = [self.key(i) for i in indices] + [
            keys.segment_key(self.session_id, self.agent_id, a, b) for a, b in ranges
        ]
        found = self.storage.read_many(wanted) if wanted else []
        for index, obj in zip(indices, found[: len(indices)], strict=True):
            if obj is not None:
                self.files[index] = obj
        for span, obj in zip(ranges, found[len(indices) :], strict=True):
            self.segments[span] = obj
        return {i: i in self.files for i in indices}


def _file_indices(lo: int, hi: int, plan: Sequence[Range], limit: int | None = None) -> list[int]:
    """Message files to read for [lo, hi) when `plan` covers part of it (+ each one's last).

    `plan` is sorted and lies in [lo, hi); the work is bounded by the result (at most
    `limit` indices), never by the width of [lo, hi).
    """
    gaps: list[range] = []
    position = lo
    for a, b in plan:
        gaps.append(range(position, min(a, hi)))
        position = max(position, b - 1)
    gaps.append(range(position, hi))
    return list(islice(chain.from_iterable(gaps), limit))


def load_window(
    storage: StorageBackend,
    session_id: str,
    agent_id: str,
    count_hint: int | None,
    window_start: Callable[[int], int],
) -> Window:
    """Load the messages the conversation manager's window needs, in as few round trips as possible."""
    reads = _Reads(storage, session_id, agent_id)
    count = None
    if count_hint is not None:
        # One parallel wave: the window the hint implies, plus the probes past its end.
        first = min(window_start(count_hint), max(count_hint - 1, 0))
        plan = covering(first, count_hint)
        wave = _file_indices(first, count_hint + PROBES, plan, HINTED_WAVE_FILES + 1)
        if len(wave) > HINTED_WAVE_FILES:  # confirm the hint before a wave this wide
            plan, wave = [], list(range(max(count_hint - 1, 0), count_hint + PROBES))
        reads.fetch(wave, plan)
        if count_hint == 0 or (count_hint - 1) in reads.files:
            end = count_hint
            while end in reads.files:
                end += 1
            if end < count_hint + PROBES:
                count = end
    if count is None:
        count = _count_by_listing(storage, session_id, agent_id)

    start = min(window_start(count), count)
    plan = covering(start, count)
    reads.fetch(_file_indices(start, count, plan), plan)
    from_segments = _use_segments(reads, plan, count)
    reads.fetch([i for i in range(start, count) if i not in from_segments])
    records: list[MessageRecord] = []
    for index in range(start, count):
        record = from_segments.get(index)
        if record is None:
            obj = reads.files.get(index)
            if obj is None:
                raise SessionCorruptError(
                    f"message file missing: {storage.describe(reads.key(index))}"
                )
            record = load(MessageRecord, obj.data, storage.describe(reads.key(index)))
        records.append(record)
    last = reads.files.get(count - 1) if count else None
    return Window(
        total=count,
        start=start,
        records=records,
        last_version=last.version if last else None,
        files={i: obj.data for i, obj in reads.files.items() if start <= i < count},
    )


def _use_segments(reads: _Reads, plan: Sequence[Range], count: int) -> dict[int, MessageRecord]:
    """Records from the segments of `plan` that verify; the others are left to the files."""
    out: dict[int, MessageRecord] = {}
    for a, b in plan:
        obj = reads.segments.get((a, b))
        if obj is None:
            continue  # never written (an older session, or a failed write): read the files
        where = reads.storage.describe(keys.segment_key(reads.session_id, reads.agent_id, a, b))
        try:
            records = decode(obj.data, a, b, count)
            for index in range(a, b):
                stored = reads.files.get(index)
                if (
                    stored is not None
                    and load(MessageRecord, stored.data, reads.storage.describe(reads.key(index)))
                    != records[index - a]
                ):
                    raise SegmentInvalid(f"its copy of message {index} differs from the file")
        except (SegmentInvalid, SessionCorruptError) as exc:
            warn_ignored(where, str(exc))
            continue
        out.update(zip(range(a, b), records, strict=True))
    return out


def _count_by_listing(storage: StorageBackend, session_id: str, agent_id: str) -> int:
    prefix = keys.messages_prefix(session_id, agent_id)
    indices = sorted(
        i for i in (keys.message_index(k) for k in storage.list(prefix)) if i is not None
    )
    if indices != list(range(len(indices))):
        missing = sorted(set(range(indices[-1] + 1)) - set(indices))
        raise SessionCorruptError(
            f"messages of agent {agent_id!r} in session {session_id!r} have gaps "
            f"(missing message_{missing[0]}.json under {storage.describe(prefix)})"
        )
    return len(indices)
