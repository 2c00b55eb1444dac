"""Loading an agent's conversation window: how many messages exist, and the last few.

Listing every message key costs one LIST page per 1,000 messages, and most resumes need
only the tail. The bookmark (and agent.json) record how many messages existed when they
were written; a few parallel GETs around that number confirm the true count, and only when
the hint is missing or disproved does the loader fall back to listing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from elsai.session import keys
from elsai.session.records import MessageRecord, SessionCorruptError, load
from elsai.session.storage.base import StorageBackend, StoredObject

#: Messages a crash can leave after the last recorded count (assistant message, tool results
#: or a repair); more than that and the loader lists instead.
PROBES = 3


@dataclass
class Window:
    """The stored messages a restore loaded, and where they sit in the full history."""

    count: int  # stored messages in total
    start: int  # index of the first loaded message
    records: list[MessageRecord]
    last_version: str | None


def load_window(
    storage: StorageBackend,
    session_id: str,
    agent_id: str,
    count_hint: int | None,
    window_start: Callable[[int], int],
) -> Window:
    """Load the messages the conversation manager's window needs, in as few round trips as possible."""

    def key(index: int) -> str:
        return keys.message_key(session_id, agent_id, index)

    fetched: dict[int, StoredObject] = {}
    count = None
    if count_hint is not None:
        # One parallel wave: the window the hint implies, plus the probes past its end.
        first = min(window_start(count_hint), max(count_hint - 1, 0))
        probes = list(range(first, count_hint + PROBES))
        found = dict(zip(probes, storage.read_many([key(i) for i in probes]), strict=True))
        fetched = {i: obj for i, obj in found.items() if obj is not None}
        if count_hint == 0 or found[count_hint - 1] is not None:
            end = count_hint
            while found.get(end) is not None:
                end += 1
            if end < count_hint + PROBES:
                count = end
    if count is None:
        count = _count_by_listing(storage, session_id, agent_id)

    start = min(window_start(count), count)
    missing = [i for i in range(start, count) if i not in fetched]
    fetched.update(
        {
            i: obj
            for i, obj in zip(missing, storage.read_many([key(i) for i in missing]), strict=True)
            if obj
        }
    )
    records: list[MessageRecord] = []
    for index in range(start, count):
        obj = fetched.get(index)
        if obj is None:
            raise SessionCorruptError(f"message file missing: {storage.describe(key(index))}")
        records.append(load(MessageRecord, obj.data, storage.describe(key(index))))
    last = fetched.get(count - 1) if count else None
    return Window(
        count=count, start=start, records=records, last_version=last.version if last else None
    )


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
