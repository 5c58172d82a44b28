"""On a runner a configured ``[blind] seed`` is not used: the repository's readers hold it
and ``[roles] implementers``, which together name each label's author before the tally."""

from __future__ import annotations

from pathlib import Path

from action_helpers import make_world
from magi.engine import preflight
from magi.seats import SilentReporter


class Notes(SilentReporter):
    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []

    def note(self, message: str, level: str = "info") -> None:
        self.said.append((message, level))


def _seeded(tmp: Path) -> Path:
    world = make_world(tmp)
    config = world.repo / "magi.toml"
    config.write_text(config.read_text() + "\n[blind]\nseed = 42\n")
    return world.repo


def test_a_configured_seed_is_dropped_on_a_runner_and_said(tmp_path) -> None:
    repo = _seeded(tmp_path)
    notes = Notes()
    config = preflight(repo, None, {}, notes, auth_check=False, action=True)
    assert config.blind.seed is None, "drawn afresh by the run"
    (warned,) = [m for m, level in notes.said if level == "warn" and "[blind] seed" in m]
    assert "before the tally" in warned


def test_a_configured_seed_still_reproduces_a_local_run(tmp_path) -> None:
    repo = _seeded(tmp_path)
    config = preflight(repo, None, {}, Notes(), auth_check=False)
    assert config.blind.seed == 42
