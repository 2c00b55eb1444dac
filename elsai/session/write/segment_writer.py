"""Writing message segments (elsai.session.read.segments) in the background, off every boundary.

A segment is an accelerator: writing one never delays the loop and a failure only warns
(the reader then reads message files, as without segments). The writer sees every message
file the binding writes or loads; when the message after a full block is created, the block
can no longer change, and one worker thread writes its segment and the merges it completes.
`flush()` waits for that work, so nothing is left running when an invocation ends.
"""

from __future__ import annotations

import contextlib
import json
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from elsai.errors import SessionConflictError
from elsai.session.layout import keys
from elsai.session.read.segments import SEGMENT_SIZE, SegmentInvalid, encode, merges_after, parse
from elsai.session.storage.base import StorageBackend

logger: logging.Logger = logging.getLogger("elsai.session")


class SegmentWriter:
    """Turns completed blocks of message files into immutable segments, in the background."""

    def __init__(self, storage: StorageBackend, session_id: str, agent_id: str) -> None:
        self.storage: StorageBackend = storage
        self.session_id: str = session_id
        self.agent_id: str = agent_id
        #: Bytes of the message files of the open block (at most SEGMENT_SIZE + 1).
        self._files: dict[int, bytes] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._futures: list[Future[None]] = []
        #: The segment written last (start, records): the right half of the next merge.
        self._last: tuple[int, list[dict[str, Any]]] | None = None

    def loaded(self, index: int, data: bytes) -> None:
        """A message file read on load (it may fill the open block)."""
        self._files[index] = data

    def replaced(self, index: int, data: bytes) -> None:
        """The last message file was replaced in place (its block is still open)."""
        self._files[index] = data

    def written(self, index: int, data: bytes) -> None:
        """A message file was created; the block it completes gets its segment."""
        self._files[index] = data
        if index == 0 or index % SEGMENT_SIZE:
            return
        block = index // SEGMENT_SIZE - 1
        first = block * SEGMENT_SIZE
        files = {i: self._files[i] for i in range(first, index) if i in self._files}
        self._files = {i: d for i, d in self._files.items() if i >= index}
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="elsai-segments")
        self._futures.append(self._executor.submit(self._write_block, block, files))

    def flush(self) -> None:
        """Wait for the segment writes started so far (their failures were only logged)."""
        futures, self._futures = self._futures, []
        for future in futures:
            future.result()

    # -- the worker -----------------------------------------------------------------------

    def _write_block(self, block: int, files: dict[int, bytes]) -> None:
        try:
            first = block * SEGMENT_SIZE
            records = self._block_records(first, files)
            self._create(first, records)
            self._last = (first, records)
            for start, end in merges_after(block)[1:]:
                middle = (start + end) // 2
                left = self._read_segment(start, middle)
                if left is None or self._last[0] != middle:
                    return  # a missing half: this merge (and the bigger ones) wait for a rebuild
                merged = [*left, *self._last[1]]
                self._create(start, merged)
                self._last = (start, merged)
        except Exception as exc:  # an accelerator never fails the agent
            logger.warning(
                "could not write message segment for block %d of agent %r: %s: %s",
                block,
                self.agent_id,
                type(exc).__name__,
                exc,
            )

    def _block_records(self, first: int, files: dict[int, bytes]) -> list[dict[str, Any]]:
        missing = [i for i in range(first, first + SEGMENT_SIZE) if i not in files]
        if missing:  # e.g. written by an earlier process: read them back
            found = self.storage.read_many(
                [keys.message_key(self.session_id, self.agent_id, i) for i in missing]
            )
            for index, obj in zip(missing, found, strict=True):
                if obj is None:
                    raise SegmentInvalid(f"message file {index} is missing")
                files[index] = obj.data
        records = [json.loads(files[i]) for i in range(first, first + SEGMENT_SIZE)]
        if [r.get("message_id") for r in records] != list(range(first, first + SEGMENT_SIZE)):
            raise SegmentInvalid("message ids do not match their file names")
        return records

    def _read_segment(self, start: int, end: int) -> list[dict[str, Any]] | None:
        found = self.storage.read(keys.segment_key(self.session_id, self.agent_id, start, end))
        if found is None:
            return None
        try:
            return parse(found.data, start, end)
        except SegmentInvalid:
            return None

    def _create(self, start: int, records: list[dict[str, Any]]) -> None:
        key = keys.segment_key(self.session_id, self.agent_id, start, start + len(records))
        # A conflict: already written (a retry, or another copy of the same immutable messages).
        with contextlib.suppress(SessionConflictError):
            self.storage.create(key, encode(start, records))
