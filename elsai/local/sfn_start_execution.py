"""Make moto's ``states:startExecution`` task start the execution the ASL asks for.

A continuation (single-agent or Graph/Swarm) is a ``states:startExecution`` task of the job's
own machine. moto 5.2's port of that service integration hands the ASL parameter names
(``StateMachineArn``, ``Input``, ``Name``) to botocore unchanged, but botocore wants
``stateMachineArn``/``input``/``name`` (AWS maps them itself), so on moto every continuation
fails with ``States.Runtime``. The local runtime installs this rename while it runs; nothing
else about the integration changes.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

#: The ASL parameter names AWS maps to startExecution's botocore names.
ASL_NAMES = ("StateMachineArn", "Input", "Name")


def renaming(original: Callable[..., None]) -> Callable[..., None]:
    """`original` (moto's parameter normaliser), then the ASL names in botocore's spelling."""

    def normalise(self: Any, parameters: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        original(self, parameters, *args, **kwargs)
        for key in [k for k in parameters if k in ASL_NAMES]:
            parameters[key[0].lower() + key[1:]] = parameters.pop(key)

    return normalise


_installed: list[Any] = []  # the original normaliser, once per active holder
_lock = threading.Lock()


@contextlib.contextmanager
def botocore_names_for_start_execution() -> Iterator[None]:
    """Install the rename on moto's startExecution integration (process-wide) while inside.

    Nestable (two runtimes in one process, or a test's moto inside a runtime): the rename is
    installed once, and moto's own normaliser is back when the last holder leaves.
    """
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_sfn,
    )

    service = state_task_service_sfn.StateTaskServiceSfn
    with _lock:
        current = service.__dict__["_normalise_parameters"]
        if not _installed:
            service._normalise_parameters = renaming(current)  # type: ignore[method-assign]
        _installed.append(_installed[0] if _installed else current)
    try:
        yield
    finally:
        with _lock:
            original = _installed.pop()
            if not _installed:
                service._normalise_parameters = original  # type: ignore[method-assign]
