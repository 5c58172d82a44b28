"""Reviewer prompts obey ``blind.on_leak``: warn records, redact redacts, fail asks no reviewer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graph_helpers import calls, config, prompts, scratch_repo, start
from magi.core.compete.blind import leak_terms, scan_leaks
from magi.model.run import Run, RunStatus

AUTHOR = "zed-author"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    sd = tmp_path / "scripted"
    sd.mkdir()
    return sd, scratch_repo(tmp_path), tmp_path / "home"


def solo(world: tuple[Path, Path, Path], author: str, reviewer: str, on_leak: str) -> Run:
    """One candidate (uncontested: no judge ever scanned it) through the review road."""
    sd, repo, home = world
    tables: dict[str, Any] = {"graph": {"review_rounds": 3}, "blind": {"on_leak": on_leak}}
    cfg = config(sd, {AUTHOR: author}, judges={}, reviewers={"rev-one": reviewer}, **tables)
    return start(repo, home, cfg)


def leaked(run: Run, text: str) -> list[str]:
    return scan_leaks(text, leak_terms(run.config.agents))


def test_warn_keeps_the_text_records_and_reports_the_leak(world):
    """The patch names its vendor: the reviewer sees it, the record and an event say so."""
    _sd, _, home = world
    run = solo(world, "leaky", "evidence", "warn")
    assert run.status is RunStatus.READY, run.reason
    texts = prompts(home, run, "review")
    assert texts
    assert all(leaked(run, t) == ["claude"] for t in texts)
    leaks = [(lk.label, lk.where, lk.term, lk.action) for lk in run.leaks]
    assert ("A", "review patch", "claude", "warned") in leaks
    assert any("claude" in e.message and e.level == "warn" for e in run.events)


def test_redact_removes_the_identity_from_every_reviewer_prompt(world):
    """With redact no reviewer prompt names a vendor or a roster id; the redaction is recorded."""
    _sd, _, home = world
    run = solo(world, "leaky", "evidence", "redact")
    assert run.status is RunStatus.READY, run.reason
    texts = prompts(home, run, "review")
    assert texts
    for text in texts:
        assert leaked(run, text) == []
        assert "# Written by [redacted] for the demo." in text
    assert ("review patch", "claude", "redacted") in [
        (lk.where, lk.term, lk.action) for lk in run.leaks
    ]


def test_fail_stops_blocked_before_any_reviewer_is_asked(world):
    """fail: blocked with the leak named, no reviewer invoked, the candidate and leak kept."""
    sd, _, home = world
    run = solo(world, "leaky", "evidence", "fail")
    assert run.status is RunStatus.BLOCKED
    assert "'claude'" in (run.reason or "")
    assert "patch" in (run.reason or "")
    assert not [c for c in calls(sd) if c["node"] == "review"]
    assert prompts(home, run, "review") == []
    assert run.review is not None
    assert run.review.rounds == []
    assert ("review patch", "claude", "failed") in [
        (lk.where, lk.term, lk.action) for lk in run.leaks
    ]
    assert run.candidates[0].head is not None


def test_redact_covers_the_fixers_answers_handed_to_round_two(world):
    """The author signs its rejection: round 2's reviewer reads it redacted."""
    _sd, _, home = world
    run = solo(world, "right+reject-leaky", "evidence+blocker", "redact")
    assert run.status is RunStatus.READY, run.reason
    assert run.review is not None
    assert len(run.review.rounds) == 2
    second = [t for t in prompts(home, run, "review") if "round 2 of" in t]
    assert second
    for text in second:
        assert "R1-1-1" in text
        assert leaked(run, text) == []
        assert "As [redacted], I checked" in text
    assert ("review fixer answer", "claude", "redacted") in [
        (lk.where, lk.term, lk.action) for lk in run.leaks
    ]


def test_fail_on_a_signed_rejection_keeps_round_one(world):
    """fail: round 2 is never asked; round 1 (findings, the fixer's report) stays recorded."""
    sd, _, home = world
    run = solo(world, "right+reject-leaky", "evidence+blocker", "fail")
    assert run.status is RunStatus.BLOCKED
    assert "fixer answer" in (run.reason or "")
    assert "round 2" in (run.reason or "")
    assert run.review is not None
    (r1,) = run.review.rounds
    assert [f.id for f in r1.findings] == ["R1-1-1", "R1-1-2"]
    assert r1.fix is not None
    assert [r.id for r in r1.fix.rejected] == ["R1-1-1"]
    assert len([c for c in calls(sd) if c["node"] == "review"]) == 1
    assert all("round 1 of" in t for t in prompts(home, run, "review"))
