"""Make moto's ``states:startExecution`` task start the execution the ASL asks for.

A continuation (single-agent or Graph/Swarm) is a ``states:startExecution`` task of the job's
own machine. moto 5.2's port of that service integration hands the ASL parameter names
(``StateMachineArn``, ``Input``, ``Name``) to botocore unchanged, but botocore wants
``stateMachineArn``/``input``/``name`` (AWS maps them itself), so on moto every continuation
fails with ``States.Runtime``. The local runtime installs this rename while it runs; nothing
else about the integration changes.

This is the one place elsai reaches into moto's private code: moto offers no public hook for a
service integration's parameters, so the rename wraps ``StateTaskServiceSfn._normalise_parameters``
(``MOTO_PRIVATE``). Before wrapping it, `moto_normaliser` checks that the method still exists
with the shape wrapped here and fails with a message naming the moto version otherwise;
``tests/unit/cdk/test_sfn_start_execution.py`` also checks that moto still needs the rename
(a release that fixes the integration makes it fail, so this module can go).
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import Any

#: The ASL parameter names AWS maps to startExecution's botocore names.
ASL_NAMES = ("StateMachineArn", "Input", "Name")
#: moto's private method the rename wraps, and the parameters it is known to take.
MOTO_PRIVATE = "_normalise_parameters"
MOTO_PARAMETERS = ("self", "parameters", "boto_service_name", "service_action_name")


class MotoChangedError(RuntimeError):
    """The installed moto no longer has the private method this module wraps."""


def renaming(original: Callable[..., None]) -> Callable[..., None]:
    """`original` (moto's parameter normaliser), then the ASL names in botocore's spelling."""

    def normalise(self: Any, parameters: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        original(self, parameters, *args, **kwargs)
        for key in [k for k in parameters if k in ASL_NAMES]:
            parameters[key[0].lower() + key[1:]] = parameters.pop(key)

    return normalise


def sfn_task_service() -> type:
    """The ``states:startExecution`` service integration class of moto."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_sfn,
    )

    return state_task_service_sfn.StateTaskServiceSfn


def current_normaliser() -> Callable[..., None] | None:
    """What the integration class runs as its normaliser now (moto's own, or the rename)."""
    found = sfn_task_service().__dict__.get(MOTO_PRIVATE)
    return found if callable(found) else None


def moto_normaliser() -> Callable[..., None]:
    """The normaliser of moto itself, checked to be what the rename was written against.

    Raises `MotoChangedError` (with the moto version) when it is gone or takes other
    parameters: continuations on the local runtime would otherwise fail later and obscurely.
    """
    import moto

    found = current_normaliser()
    shape = tuple(inspect.signature(found).parameters) if found is not None else ()
    if shape != MOTO_PARAMETERS:
        raise MotoChangedError(
            f"moto {moto.__version__}: StateTaskServiceSfn.{MOTO_PRIVATE} is "
            f"{'missing' if found is None else f'{shape}, not {MOTO_PARAMETERS}'}; "
            "elsai.local.sfn_start_execution wraps it to rename startExecution's ASL "
            "parameters and must follow moto's change (or go, if moto maps them itself now)"
        )
    assert found is not None
    return found


_installed: list[Any] = []  # the original normaliser, once per active holder
_lock = threading.Lock()


@contextlib.contextmanager
def botocore_names_for_start_execution() -> Iterator[None]:
    """Install the rename on moto's startExecution integration (process-wide) while inside.

    Nestable (two runtimes in one process, or a test's moto inside a runtime): the rename is
    installed once, and moto's own normaliser is back when the last holder leaves.
    """
    service = sfn_task_service()
    with _lock:
        if _installed:
            original = _installed[0]
        else:
            original = moto_normaliser()
            setattr(service, MOTO_PRIVATE, renaming(original))
        _installed.append(original)
    try:
        yield
    finally:
        with _lock:
            original = _installed.pop()
            if not _installed:
                setattr(service, MOTO_PRIVATE, original)
