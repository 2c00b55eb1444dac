"""The manager's write knobs reach a binding as one frozen BindingSettings, taken at bind time."""

from __future__ import annotations

from pathlib import Path

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.session.write.binding import SessionBinding
from elsai.session.write.settings import BindingSettings


def _bind(manager: FileSessionManager) -> SessionBinding:
    agent = Agent(
        model=ScriptedModel(["done"]), config=AgentConfig(agent_id="a", session_manager=manager)
    )
    binding = manager.bind_agent(agent)
    assert isinstance(binding, SessionBinding)
    return binding


def test_defaults_overlap_only_the_after_tools_bookmark_and_take_a_lease(tmp_path: Path) -> None:
    """No tool starts before its after_model bookmark is durable unless the user opts in."""
    settings = _bind(FileSessionManager("s", str(tmp_path))).settings
    assert settings == BindingSettings()
    assert settings.lease_seconds == 30.0
    assert settings.overlaps("after_tools") and not settings.overlaps("after_model")


def test_manager_knobs_are_frozen_into_the_binding(tmp_path: Path) -> None:
    manager = FileSessionManager("s", str(tmp_path))
    manager.lease_seconds = None
    manager.overlap_after_model = True  # the opt-in
    binding = _bind(manager)
    assert binding.settings == BindingSettings(lease_seconds=None, overlap_after_model=True)
    assert binding.lease is None
    assert binding.settings.overlaps("after_tools")
    assert binding.settings.overlaps("after_model")
    manager.overlap_bookmark = False  # a later change is for the next binding only
    assert binding.settings.overlap_bookmark
    with pytest.raises(AttributeError):  # immutable
        binding.settings.overlap_bookmark = False  # type: ignore[misc]


def test_no_overlap_writes_every_bookmark_in_line(tmp_path: Path) -> None:
    manager = FileSessionManager("s", str(tmp_path))
    manager.overlap_bookmark = False
    manager.overlap_after_model = True  # needs overlap_bookmark
    settings = _bind(manager).settings
    assert not settings.overlaps("after_tools") and not settings.overlaps("after_model")


def test_without_fsync_bookmarks_are_written_in_line_unless_asked(tmp_path: Path) -> None:
    """Without fsync a bookmark write holds the GIL throughout: a background thread gains nothing."""
    manager = FileSessionManager("s", str(tmp_path), fsync=False)
    settings = _bind(manager).settings
    assert not settings.overlaps("after_tools") and not settings.overlaps("after_model")
    manager.overlap_bookmark = True  # still the user's to choose
    assert _bind(manager).settings.overlaps("after_tools")
    assert FileSessionManager("s", str(tmp_path), fsync=True).overlap_bookmark
