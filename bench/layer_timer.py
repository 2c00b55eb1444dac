"""Time spent inside an SDK's session layer, measured directly.

Wraps the methods through which an agent hands work to its session manager (elsai: the
`LoopPersistence` methods of its SessionBinding; strands: the `append_message` / `sync_agent`
callbacks of its session manager) on one instance, and adds up the wall time spent in them.
Nested calls (a wrapped method calling another) are counted once, at the outermost level.
"""

from __future__ import annotations

import collections
import functools
import time
from collections.abc import Iterable
from typing import Any


class LayerTimer:
    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls: collections.Counter[str] = collections.Counter()
        #: outermost-level seconds per method (sums to `seconds`)
        self.seconds_by_method: collections.Counter[str] = collections.Counter()
        self._depth = 0

    def wrap(self, obj: Any, names: Iterable[str]) -> LayerTimer:
        for name in names:
            original = getattr(obj, name)

            @functools.wraps(original)
            def timed(
                *args: Any, __original: Any = original, __name: str = name, **kwargs: Any
            ) -> Any:
                self.calls[__name] += 1
                if self._depth:
                    return __original(*args, **kwargs)
                self._depth += 1
                start = time.perf_counter()
                try:
                    return __original(*args, **kwargs)
                finally:
                    elapsed = time.perf_counter() - start
                    self.seconds += elapsed
                    self.seconds_by_method[__name] += elapsed
                    self._depth -= 1

            setattr(obj, name, timed)
        return self
