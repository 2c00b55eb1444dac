"""`quiet_gc`: collection paused for the block, resumed as it was, the block's objects frozen."""

from __future__ import annotations

import gc

import pytest

from elsai_lambdas.startup import quiet_gc


@pytest.fixture(autouse=True)
def _restore_gc() -> object:
    enabled = gc.isenabled()
    yield None
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_collection_is_paused_in_the_block_and_resumed_after() -> None:
    gc.enable()
    with quiet_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collection_stays_off_when_the_caller_had_turned_it_off() -> None:
    gc.disable()
    with quiet_gc():
        pass
    assert not gc.isenabled()


def test_what_the_block_built_is_frozen_even_when_the_block_fails() -> None:
    gc.unfreeze()
    kept: list[list[int]] = []
    with pytest.raises(RuntimeError), quiet_gc():
        kept.extend([i] for i in range(1000))
        raise RuntimeError("init failed")
    assert gc.get_freeze_count() >= len(kept)
    assert gc.isenabled()
