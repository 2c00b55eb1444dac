"""What a handler's init phase does once: its imports, without the garbage collector's passes.

Init builds tens of thousands of objects that live as long as the process (modules, classes,
validators, clients) and makes next to no garbage. CPython still counts every allocation, and
about 80 collections run while the agent handler is imported under 3.12, each scanning the
young objects again and finding almost nothing (about 16 ms of its cold start, measured with
``gc.callbacks``). `quiet_gc` pauses collection for the block and then freezes what the block
built (`gc.freeze`), so the requests' collections do not scan init's objects either.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_gc() -> Iterator[None]:
    """Run the block with collection paused; then freeze what exists and resume collecting.

    Freezing keeps init's few cyclic leftovers for the life of the process (a one-time cost of
    kilobytes). Collection is resumed only if it was on before, so a caller that turned it off
    keeps it off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
