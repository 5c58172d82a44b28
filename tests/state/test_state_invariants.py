"""A record missing what the next node needs is refused before anything is spent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magi.errors import StateError
from magi.model.run import Candidate, JudgeSeat, Run, Seat, Task
from magi.state.invariants import problems, require_whole
from magi.state.store import Store

RUN_ID = "20261201-080000-0a0b"


def whole() -> Run:
    """A run as prep leaves it: two candidates, one judge."""
    return Run(
        id=RUN_ID,
        created_at="2026-12-01T08:00:00Z",
        repo="/r",
        base="main",
        base_sha="a" * 40,
        seed=1,
        task=Task(original="t", cleaned="t"),
        config={"graph": {"candidates": 2, "judges": 1}},
        worktree_root="/w",
        labels=["A", "B"],
        candidates=[
            Candidate(label=x, seat=f"impl-{x}", branch=f"magi/{RUN_ID}/{x}") for x in "AB"
        ],
        judges=[JudgeSeat(seat="judge-1", order=["B", "A"])],
        seats={s: Seat(name=s, agent="a") for s in ("impl-A", "impl-B", "judge-1")},
    )


def test_a_whole_record_has_no_problems() -> None:
    """The clean case passes, and a fresh run (nothing prepared) too."""
    assert problems(whole()) == []
    fresh = whole().model_copy(update={"labels": [], "candidates": [], "judges": [], "seats": {}})
    assert problems(fresh) == []


def test_a_record_that_lost_its_labels_on_disk_is_refused(tmp_path: Path) -> None:
    """labels deleted from run.json: it loads (with the default), and require_whole refuses."""
    store = Store(tmp_path)
    store.create(whole())
    path = store.run_dir(RUN_ID) / "run.json"
    data = json.loads(path.read_text())
    del data["labels"]
    path.write_text(json.dumps(data))
    loaded = store.load(RUN_ID)
    with pytest.raises(StateError) as err:
        require_whole(loaded)
    assert "labels: [] does not match" in err.value.message
    assert f"magi fold --force {RUN_ID}" in err.value.message


def test_a_recorded_config_with_an_absurd_timeout_is_a_state_error(tmp_path: Path) -> None:
    """A record made before the bound: every resume crashed in implement; now load refuses it."""
    store = Store(tmp_path)
    store.create(whole())
    path = store.run_dir(RUN_ID) / "run.json"
    data = json.loads(path.read_text())
    data["config"]["graph"]["timeout_implement"] = 99999999999999
    path.write_text(json.dumps(data))
    with pytest.raises(StateError, match="timeout_implement"):
        store.load(RUN_ID)


def test_votes_from_seats_that_are_not_judges_are_named() -> None:
    """A vote by judge-7 of a one-judge panel is an edited record."""
    run = whole()
    run.votes = [{"seat": "judge-7", "status": "ok", "vote": "A"}]
    assert problems(run) == ["votes: seats judge-7 are not judges of this run"]
