"""A fixer turn lost to quota, a timeout or a crash: the run stops resumable, the round re-asked."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from graph_helpers import calls, config, scratch_repo, start
from magi import engine
from magi.engine.review import operator_fix
from magi.errors import UsageError
from magi.model.run import Run, RunStatus
from magi.state.store import Store

AUTHOR = "zed-author"
REVIEWERS = {"rev-one": "evidence+blocker", "rev-two": "minimal"}


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    sd = tmp_path / "scripted"
    sd.mkdir()
    return sd, scratch_repo(tmp_path), tmp_path / "home"


def solo(world: tuple[Path, Path, Path], author: str, **graph: Any) -> Run:
    """One candidate through the review road; no failover, so the lost seat stays lost."""
    sd, repo, home = world
    g = {"review_rounds": 3, "failover": False, **graph}
    cfg = config(sd, {AUTHOR: author}, judges={}, reviewers=REVIEWERS, graph=g)
    return start(repo, home, cfg)


def resume(home: Path, run: Run, *, retry_failed: bool = False) -> Run:
    return engine.resume(
        Store(home), run.id, environ=dict(os.environ), retry_failed=retry_failed
    ).run


def seats_asked(sd: Path, node: str) -> Counter[str]:
    return Counter(c["seat"] for c in calls(sd) if c["node"] == node)


def assert_stopped_in_round_one(run: Run, status: RunStatus, lost: str) -> None:
    assert run.status is status, run.reason
    assert "fixer" in (run.reason or "")
    assert "--resume" in (run.reason or "")
    assert run.review is not None
    assert run.review.outcome is None  # not stagnant, not blocked: not decided at all
    (r1,) = run.review.rounds
    assert not r1.closed
    assert r1.fix is not None
    assert r1.fix.status == lost
    assert [f.id for f in r1.findings] == ["R1-1-1", "R1-1-2"]


def assert_fixed_in_round_one(run: Run) -> None:
    assert run.status is RunStatus.READY, run.reason
    assert run.review is not None
    r1, r2 = run.review.rounds
    assert [f.id for f in r1.findings] == ["R1-1-1", "R1-1-2"]
    assert r1.fix is not None
    assert (r1.fix.status, r1.fix.adopted, r1.progressed) == ("ok", ["R1-1-1"], True)
    assert r1.fix.head_before == r1.head
    assert r2.head == r1.fix.head_after != r1.head


def test_quota_at_fix_stalls_and_resume_asks_the_fixer_again_in_the_same_round(world):
    """Stalled, not stagnant; --resume re-asks the fixer only, and round 2 reviews its work."""
    sd, _, home = world
    stalled = solo(world, "quota-at-fix:right")
    assert_stopped_in_round_one(stalled, RunStatus.STALLED, "quota")
    assert seats_asked(sd, "review") == {"review-1": 1, "review-2": 1}
    (sd / "unlock").write_text("")
    done = resume(home, stalled)
    assert_fixed_in_round_one(done)
    # Round 1's reviewers were not asked again: one turn each in round 1, one in round 2.
    assert seats_asked(sd, "review") == {"review-1": 2, "review-2": 2}
    assert seats_asked(sd, "fix") == {"impl-A": 2}


def test_timeout_at_fix_stalls_and_plain_resume_retries(world):
    """A fixer that hangs past timeout_fix: stalled; --resume (no flag) asks it again."""
    sd, _, home = world
    stalled = solo(world, "hang-at-fix:right", timeout_fix=10)
    assert_stopped_in_round_one(stalled, RunStatus.STALLED, "timeout")
    done = resume(home, stalled)
    assert_fixed_in_round_one(done)
    assert seats_asked(sd, "review") == {"review-1": 2, "review-2": 2}
    assert seats_asked(sd, "fix") == {"impl-A": 2}


def test_crashed_fixer_fails_and_retry_failed_asks_again(world):
    """A crash is failed, not stagnant; plain --resume refuses, --retry-failed re-asks."""
    sd, _, home = world
    failed = solo(world, "crash-at-fix:right")
    assert_stopped_in_round_one(failed, RunStatus.FAILED, "error")
    assert "--retry-failed" in (failed.reason or "")
    with pytest.raises(UsageError):
        resume(home, failed)
    (sd / "unlock").write_text("")
    done = resume(home, failed, retry_failed=True)
    assert_fixed_in_round_one(done)
    assert seats_asked(sd, "review") == {"review-1": 2, "review-2": 2}


def test_magi_fix_after_a_lost_turn_then_resume_goes_on_from_its_work(world):
    """magi fix on the stalled run closes R1-1-1; --resume asks no fixer, round 2 reviews."""
    sd, _, home = world
    stalled = solo(world, "quota-at-fix:right")
    assert_stopped_in_round_one(stalled, RunStatus.STALLED, "quota")
    (sd / "unlock").write_text("")
    run, op = operator_fix(Store(home), stalled.id, ["R1-1-1"], environ=dict(os.environ))
    assert run.status is RunStatus.STALLED  # magi fix does not end or resume the run
    assert (op.report.status, op.report.adopted, op.report.progressed) == (
        "ok",
        ["R1-1-1"],
        True,
    )
    done = resume(home, stalled)
    assert done.status is RunStatus.READY, done.reason
    assert done.review is not None
    r1, r2 = done.review.rounds
    assert r1.fix is not None
    assert r1.fix.status == "quota"  # the lost turn stays on record
    assert r1.progressed is True  # measured with git: magi fix's commit
    assert r2.head == op.report.head_after
    assert seats_asked(sd, "fix") == {"impl-A": 2}  # the lost turn and magi fix: no third
    assert seats_asked(sd, "review") == {"review-1": 2, "review-2": 2}


def test_a_reviewer_lost_to_a_rate_limit_stalls_and_resume_asks_only_it_again(world):
    """Under incomplete_review = "block" the round stays open (not blocked for good): the
    run stalls, and --resume asks review-1 alone; review-2's findings and ids stand."""
    sd, repo, home = world
    reviewers = {"rev-one": "quota-at-review:evidence+blocker", "rev-two": "minimal"}
    g = {"review_rounds": 3, "failover": False}
    cfg = config(sd, {AUTHOR: "right"}, judges={}, reviewers=reviewers, graph=g)
    stalled = start(repo, home, cfg)
    assert stalled.status is RunStatus.STALLED, stalled.reason
    assert "review-1 lost to a rate limit" in (stalled.reason or "")
    assert "--resume" in (stalled.reason or "")
    assert stalled.review is not None
    (r1,) = stalled.review.rounds
    assert not r1.closed
    assert {s.seat: s.status for s in r1.seats} == {"review-1": "quota", "review-2": "ok"}
    assert seats_asked(sd, "fix") == {}
    (sd / "unlock").write_text("")
    done = resume(home, stalled)
    assert done.status is RunStatus.READY, done.reason
    assert done.review is not None
    assert {s.seat: s.status for s in done.review.rounds[0].seats} == {
        "review-1": "ok",
        "review-2": "ok",
    }
    assert seats_asked(sd, "review")["review-2"] == len(done.review.rounds)  # once a round
    assert seats_asked(sd, "review")["review-1"] == len(done.review.rounds) + 1


def test_under_warn_a_reviewer_lost_to_a_rate_limit_does_not_stop_the_round(world):
    sd, repo, home = world
    reviewers = {"rev-one": "quota-at-review:evidence+blocker", "rev-two": "minimal"}
    g = {"review_rounds": 1, "failover": False, "incomplete_review": "warn"}
    cfg = config(sd, {AUTHOR: "right"}, judges={}, reviewers=reviewers, graph=g)
    run = start(repo, home, cfg)
    assert run.status is not RunStatus.STALLED, run.reason
    assert run.review is not None
    assert run.review.rounds[0].closed
