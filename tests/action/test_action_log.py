"""The job log is public and written while the run is blind: an implementer seat's line says
how its turn ended, not its CLI's words, and a hand-on says only that a seat passed on."""

from __future__ import annotations

import io

from magi.action.agents_job.log import LogReporter
from magi.model.config import AgentConfig

ROSTER = [AgentConfig(id="claude-main", kind="claude"), AgentConfig(id="cx", kind="codex")]


def _log() -> tuple[LogReporter, io.StringIO]:
    out = io.StringIO()
    return LogReporter(out, ROSTER), out


def test_an_implementer_seats_error_is_not_in_the_log() -> None:
    log, out = _log()
    log.seat("impl-B", "error", "codex login required: run `codex login`")
    log.seat("judge-1", "error", "ProviderAuthError")
    text = out.getvalue()
    assert "an implementer seat: error (which, and its CLI's words: the run record" in text
    assert "impl-B" not in text, "when and in what order seats end would tell them apart"
    assert "codex login" not in text
    assert "ProviderAuthError" in text, "a judge is no author: its words may help"


def test_a_hand_on_says_only_that_a_seat_passed_on() -> None:
    log, out = _log()
    log.note("judge-2 held by cx, which auth: Not logged in; handed to claude-main", "warn")
    log.note("worktrees ready")
    lines = out.getvalue().splitlines()
    assert "Not logged in" not in lines[0]
    assert "a seat passed to the next agent" in lines[0]
    assert lines[0].split("] ", 1)[0].startswith("::warning::")
    assert lines[1].endswith("worktrees ready")


def test_the_runs_seed_is_not_in_the_log() -> None:
    """The seed with the committed ``[roles] implementers`` gives every label's author."""
    log, out = _log()
    log.note("run 20261203-120000-abcd: seed 1303096079, base main (0123456789)")
    assert "1303096079" not in out.getvalue()
    assert "seed withheld until the tally" in out.getvalue()


def test_a_staged_jobs_log_names_no_candidate_and_no_implementer_seat():
    """Its labels are public: which candidate it worked on would say who wrote it."""
    out = io.StringIO()
    log = LogReporter(out).in_stages()
    log.seat("impl-B", "asked")
    log.seat("judge-2", "asked")
    log.note("candidate B: uncommitted work committed under the neutral identity")
    log.note("candidates A and C: trees left by an earlier prep")
    log.note("winner: A (A won with 3 of 3 counted votes)")
    log.note("implement · B asked a person (question q1)")
    log.note("B: its tree was not sound; made again")
    text = out.getvalue()
    assert "impl-B" not in text
    assert "an implementer seat: asked" in text
    assert "judge-2: asked" in text
    assert "a candidate: uncommitted work" in text
    assert "a candidate: trees left" in text
    assert "winner: A" in text  # the tally names the winner, as it does everywhere
    assert "implement · B" not in text
    assert "B: its tree" not in text
