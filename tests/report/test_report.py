"""The run report: what a person reads after a run, and what a script reads with --json."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console

from magi import report
from magi.model.config import AgentConfig
from magi.model.run import (
    Candidate,
    CountedVote,
    Event,
    FileStat,
    JudgeSeat,
    Leak,
    NodeTiming,
    Ranking,
    Run,
    RunStatus,
    Seat,
    Tally,
    Task,
    Turn,
    Usage,
    Verification,
    Vote,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "report" / "run.json"
T0 = datetime(2026, 8, 30, 15, 30, 12, tzinfo=UTC)
RUN_ID = "20260830-153012-a1b2"


def _turn(seat: str, agent: str, seconds: float, cost: float | None, tokens: int) -> Turn:
    return Turn(
        seat=seat,
        node=seat.split("-")[0],
        turn=1,
        agent=agent,
        status="ok",
        started_at=T0,
        duration_s=seconds,
        usage=Usage(input_tokens=tokens, output_tokens=tokens // 10, cost_usd=cost),
    )


def make_run(*, tallied: bool = True, status: RunStatus = RunStatus.READY) -> Run:
    """A three-candidate run, judged, split, deliberated and voted; tally optional."""
    files_a = [
        FileStat(path="src/up.py", added=40, deleted=2),
        FileStat(path="logo.png", added=None, deleted=None),
    ]
    candidates = [
        Candidate(
            label="A",
            seat="impl-A",
            branch=f"magi/{RUN_ID}/A",
            status="ok",
            head="a" * 40,
            files=files_a,
            commits=2,
            verification=Verification(passed=True, commands=["pytest"], exit_code=0),
        ),
        Candidate(
            label="B",
            seat="impl-B",
            branch=f"magi/{RUN_ID}/B",
            status="ok",
            head="b" * 40,
            commits=1,
            verified_noop=True,
            noop_evidence="already retries",
            protected_changed=[".github/workflows/ci.yml"],
            verification=Verification(passed=False, commands=["pytest"], exit_code=1),
        ),
        Candidate(
            label="C",
            seat="impl-C",
            branch=f"magi/{RUN_ID}/C",
            status="error",
            violations=["core.hooksPath changed"],
            disqualified="produced nothing",
        ),
    ]
    tally = Tally(
        winner="A",
        counts={"A": 2, "B": 1},
        counted=[
            CountedVote(seat="judge-1", label="A", source="vote"),
            CountedVote(seat="judge-2", label="A", source="vote"),
            CountedVote(seat="judge-3", label="B", source="first_ranking"),
        ],
        judges=3,
        answered=3,
        quorum=True,
        tie_break=None,
        reason="A has a majority",
    )
    return Run(
        id=RUN_ID,
        created_at=T0,
        repo="/src/uploader",
        base="main",
        base_sha="1234567890abcdef",
        seed=42,
        status=status,
        reason="elected A" if tallied else None,
        task=Task(original="add retries\n\nto the uploader", cleaned="add retries\n\nmore text"),
        config={"merge": {"mode": "none"}},
        labels=["A", "B", "C"],
        candidates=candidates,
        judges=[JudgeSeat(seat="judge-1", order=["B", "A", "C"])],
        seats={
            seat: Seat(name=seat, agent=agent)
            for seat, agent in {
                "impl-A": "opus-agent",
                "impl-B": "sonnet-agent",
                "impl-C": "oc-agent",
                "judge-1": "judge-agent-x",
            }.items()
        },
        judgements=[
            Ranking(seat="judge-1", status="ok", ranking=["A", "B"], text="A is simpler"),
            Ranking(seat="judge-2", status="ok", ranking=["B", "A"], text="B is safer"),
        ],
        deliberation=[
            Ranking(
                seat="judge-2",
                status="ok",
                ranking=["A", "B"],
                round=1,
                text="conceding: " + "long argument " * 40,
            )
        ],
        votes=[
            Vote(seat="judge-1", status="ok", vote="A", rationale="simplest correct"),
            Vote(seat="judge-3", status="timeout"),
        ],
        tally=tally if tallied else None,
        turns=[
            _turn("impl-A", "opus-agent", 90.0, 0.5, 1000),
            _turn("impl-A", "opus-agent", 10.0, None, 500),
            _turn("judge-1", "judge-agent-x", 30.0, 0.25, 2000),
        ],
        leaks=[Leak(label="B", where="patch", term="Claude", action="warned")],
        timings={
            "implement": NodeTiming(started_at=T0, finished_at=T0 + timedelta(seconds=93)),
            "judge": NodeTiming(started_at=T0, seconds=84.6),
        },
        events=[
            Event(at=T0, node="prep", message="tree is dirty", level="warn"),
            Event(at=T0, node="prep", message="worktrees ready", level="info"),
        ],
    )


def text_of(run: Run) -> str:
    buf = io.StringIO()
    Console(file=buf, width=200).print(report.render(run))
    return buf.getvalue()


def test_report_names_every_section() -> None:
    """The text report carries header, candidates, rankings, deliberation, votes and tally."""
    out = text_of(make_run())
    for needle in (
        "magi run 20260830-153012-a1b2",
        "main@1234567",
        "seed",
        "42",
        "add retries",
        "first rankings",
        "A > B",
        "deliberation",
        "votes",
        "simplest correct",
        "(timeout)",
        "counts",
        "A 2, B 1",
        "judge-3 B (first_ranking)",
        "yes (3 of 3 answered)",
        "A <- winner",
        "+40/-2",
        "pass",
        "fail",
    ):
        assert needle in out, needle


def test_report_flags_candidates() -> None:
    """No-op claims, protected paths, violations and disqualification show as flags."""
    out = text_of(make_run())
    assert "no-op claimed" in out
    assert "protected path changed: .github/workflows/ci.yml" in out
    assert "violations: core.hooksPath changed" in out
    assert "disqualified: produced nothing" in out
    assert "implementer error" in out


def test_author_hidden_until_tally() -> None:
    """Before the tally no author or judge identity appears, in text or JSON."""
    run = make_run(tallied=False, status=RunStatus.DELIBERATING)
    out = text_of(run)
    assert report.HIDDEN in out
    data = json.dumps(report.report_json(run))
    for agent in ("opus-agent", "sonnet-agent", "oc-agent", "judge-agent-x"):
        assert agent not in out
        assert agent not in data
    assert report.report_json(run)["authors_revealed"] is False


def test_author_shown_after_tally() -> None:
    """Once tallied, the authors are part of the record."""
    run = make_run()
    out = text_of(run)
    assert report.HIDDEN not in out
    assert "opus-agent" in out
    assert "sonnet-agent" in out
    assert report.report_json(run)["candidates"][0]["agent"] == "opus-agent"


def test_finished_run_without_tally_reveals() -> None:
    """A run that failed before judging can never be judged, so nothing is left to protect."""
    out = text_of(make_run(tallied=False, status=RunStatus.FAILED))
    assert "opus-agent" in out


def test_merge_hint_only_when_ready() -> None:
    """A ready run names the merge command; merge mode none says magi stops there."""
    out = text_of(make_run())
    assert f"git merge {'a' * 40}  # magi/{RUN_ID}/A, as judged" in out  # the judged sha
    assert "magi stops here" in out
    assert "git merge" not in text_of(make_run(status=RunStatus.BLOCKED))


def test_json_keys_and_shapes() -> None:
    """--json carries the documented keys with their documented shapes."""
    data = report.report_json(make_run())
    for key in (
        "id",
        "status",
        "reason",
        "base",
        "seed",
        "winner",
        "candidates",
        "judgements",
        "deliberation",
        "votes",
        "tally",
        "leaks",
        "timings",
        "usage",
        "task",
        "review",
        "operator_fixes",
        "gate",
        "merge_record",
        "follow_ups",
    ):
        assert key in data, key
    assert data["winner"] == "A"
    assert data["status"] == "ready"
    assert data["task"] == "add retries\n\nmore text"
    cand = data["candidates"][0]
    for key in (
        "label",
        "agent",
        "branch",
        "head",
        "files",
        "commits",
        "verified_noop",
        "verification",
    ):
        assert key in cand, key
    assert cand["files"][1] == {"path": "logo.png", "added": None, "deleted": None}
    assert cand["verification"]["passed"] is True
    assert data["timings"] == {"implement": 93.0, "judge": 84.6}
    json.dumps(data)  # every value is JSON-ready


def test_usage_sums_per_seat_and_total() -> None:
    """Usage adds up a seat's turns; an unreported cost stays unreported, not zero."""
    usage = report.report_json(make_run())["usage"]
    assert usage["impl-A"]["turns"] == 2
    assert usage["impl-A"]["input_tokens"] == 1500
    assert usage["impl-A"]["cost_usd"] == 0.5
    assert usage["impl-A"]["seconds"] == 100.0
    assert usage["impl-A"]["cached_tokens"] is None
    assert usage["total"]["cost_usd"] == 0.75
    assert usage["total"]["turns"] == 3


def test_report_lists_warnings_leaks_and_time() -> None:
    """Warning events, leaks, node time and per-seat cost are in the text; info events are not."""
    out = text_of(make_run())
    assert "tree is dirty" in out
    assert "worktrees ready" not in out
    assert "'Claude' warned" in out
    assert "93.0s" in out
    assert "$0.7500" in out


def test_long_argument_is_trimmed() -> None:
    """A deliberation argument is trimmed to one readable line."""
    out = text_of(make_run())
    assert "long argument " * 40 not in out
    assert "…" in out


def test_agent_text_is_never_markup() -> None:
    """Brackets in an agent's words print as written, not as rich styling."""
    run = make_run()
    run.votes[0].rationale = "[bold]bad[/] and [/red] [[agents]]"
    out = text_of(run)
    assert "[bold]bad[/] and [/red] [[agents]]" in out


def test_frozen_fixture_still_loads_and_renders() -> None:
    """The committed sample record validates against today's model and renders."""
    run = Run.model_validate_json(FIXTURE.read_text(encoding="utf-8"))
    assert run.id == RUN_ID
    assert "A <- winner" in text_of(run)
    assert report.report_json(run) == report.report_json(make_run())


def test_a_stalled_run_keeps_its_authors_hidden() -> None:
    """A tally without quorum elected nobody; its judges will be asked again, blind."""
    run = make_run(status=RunStatus.STALLED)
    assert run.tally is not None
    run.tally = run.tally.model_copy(update={"winner": None, "quorum": False})
    assert not report.revealed(run)
    assert "hidden until the tally" in text_of(run)
    run.tally = run.tally.model_copy(update={"winner": "A", "quorum": True})
    assert report.revealed(run)


def _codex_continued(*, tallied: bool) -> Run:
    """impl-A's agent is codex and its conversation was continued (a second turn in it)."""
    run = make_run(tallied=tallied, status=RunStatus.READY if tallied else RunStatus.STALLED)
    agents = [{"id": "opus-agent", "kind": "codex", "model": "gpt-5-codex"}]
    config = run.config.model_copy(update={"agents": [AgentConfig(**a) for a in agents]})
    first, second = (t.model_copy(update={"session_id": "019a-thread"}) for t in run.turns[:2])
    return run.model_copy(update={"config": config, "turns": [first, second, run.turns[2]]})


def test_a_continued_codex_seats_figures_are_said_to_err_high_once_authors_are_out() -> None:
    """codex may report a resumed thread's running total: the cost table says which seats'
    figures may count earlier turns again; before the tally it does not (it names a kind)."""
    from magi.report.markdown import comments

    shown = text_of(_codex_continued(tallied=True))
    assert "impl-A: codex may report a resumed thread's running total" in shown
    (review,) = [
        c for c in comments(report.build(_codex_continued(tallied=True))) if c.name == "review"
    ]
    assert "impl-A: codex may report" in review.body
    hidden = text_of(_codex_continued(tallied=False))
    assert "codex" not in hidden
    assert "running total" not in text_of(make_run())
