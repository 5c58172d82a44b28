"""The report's review, gate and merge sections, and the follow-ups that close it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from magi import report
from magi.model.review import (
    E2eResult,
    FindingRecord,
    FixReport,
    Gate,
    MergeRecord,
    Review,
    ReviewRound,
    ReviewSeat,
)
from magi.model.run import Run

FIXTURE = Path(__file__).parents[1] / "fixtures" / "report" / "run.json"
AT = datetime(2026, 12, 1, tzinfo=UTC)


def reviewed() -> Run:
    run = Run.model_validate_json(FIXTURE.read_text(encoding="utf-8"))
    rnd = ReviewRound(
        round=1,
        head="a" * 40,
        seats=[
            ReviewSeat(seat="review-1", agent="x", status="ok"),
            ReviewSeat(seat="review-2", agent="y", status="timeout"),
        ],
        findings=[
            FindingRecord(
                id="R1-1-1",
                round=1,
                seat="review-1",
                severity="minor",
                title="Name it",
                file="a.py",
                line=3,
            )
        ],
        e2e=E2eResult(head="a" * 40, at=AT, passed=True, exit_code=0),
        fix=FixReport(seat="impl-A", agent="x", status="ok"),
        closed=True,
    )
    return run.model_copy(
        update={
            "review": Review(label="A", branch="b", rounds=[rnd], outcome="clean", reason="ok"),
            "gate": Gate(ran=True, head="a" * 40, at=AT, passed=True),
            "merge": MergeRecord(mode="none", result="printed", command="git merge --squash b"),
        }
    )


def text(run: Run) -> str:
    from rich.console import Console

    out = Console(width=160, record=True)
    out.print(report.render(run))
    return out.export_text()


def test_report_shows_rounds_incomplete_gate_and_merge() -> None:
    """An incomplete round names its missing seat; e2e names its commit; gate says it ran."""
    out = text(reviewed())
    assert "1 of 2 reviewers answered, INCOMPLETE: review-2 never answered" in out
    assert "e2e green on aaaaaaaaaaaa" in out
    assert "passed on aaaaaaaaaaaa (no commands configured)" in out
    assert "git merge --squash b" in out


def test_unadopted_minor_findings_close_the_report_as_follow_ups() -> None:
    """Follow-ups come last, attributed to the run and the finding id."""
    run = reviewed()
    out = text(run)
    assert out.rstrip().endswith(f"{run.id} R1-1-1: Name it (a.py:3)")
    data = report.report_json(run)
    assert [(f["id"], f["run"]) for f in data["follow_ups"]] == [("R1-1-1", run.id)]
    assert data["gate"]["ran"] is True
    assert data["review"]["rounds"][0]["seats"][1]["status"] == "timeout"


def test_show_markdown_carries_the_review_the_pr_will_carry() -> None:
    """`magi show --markdown` renders the review sections publish posts, not a placeholder."""
    out = report.render_markdown(reviewed())
    assert "has not run yet" not in out
    assert "Outcome: clean" in out
    assert "1 of 2 reviewers answered; **incomplete**: review-2 never answered" in out
    assert "**R1-1-1** (minor) `a.py:3`: Name it — open" in out
    assert "e2e: passed on `aaaaaaaaaaaa`" in out
    assert "Gate: passed on aaaaaaaaaaaa" in out
    assert "Follow-ups (minor findings nobody adopted)" in out


def test_the_terminal_report_reads_in_pipeline_order() -> None:
    """The winner's road comes after the tally and before the time and costs; one merge line."""
    out = text(reviewed())
    assert out.index("tally") < out.index("review, gate and merge") < out.index("time per node")
    assert out.count("git merge --squash b") == 1


def test_a_lost_fixer_turn_says_how_it_was_lost() -> None:
    """A fix turn lost to quota reads as lost, in the text and the markdown, not as no work."""
    run = reviewed()
    assert run.review is not None
    run.review.rounds[0].fix = FixReport(seat="impl-A", agent="x", status="quota")
    assert "turn quota; adopted none" in text(run)
    assert "turn quota, no new tree" in report.render_markdown(run)
