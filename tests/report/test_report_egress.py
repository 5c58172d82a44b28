"""Egress refusals in the report: counted per seat in every cost table, pooled before the tally."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from magi import report
from magi.model.run import Candidate, Run, Task, Turn, Usage
from magi.report.before_tally import public_copy

T0 = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


def _turn(seat: str, refused: list[str]) -> Turn:
    return Turn(
        seat=seat,
        node="implement",
        turn=1,
        agent="x",
        status="ok",
        started_at=T0,
        duration_s=10.0,
        usage=Usage(cost_usd=0.01),
        refused=refused,
    )


def _run(*turns: Turn) -> Run:
    return Run(
        id="20261129-120000-abcd",
        created_at=T0,
        repo="/r",
        base="main",
        seed=1,
        task=Task(original="t", cleaned="t"),
        turns=list(turns),
    )


REFUSING = (_turn("impl-A", ["evil.example:443", "evil.example:443"]), _turn("impl-B", []))


def test_each_seats_refusals_are_counted_in_its_row() -> None:
    run = _run(*REFUSING)
    usage = report.report_json(run)["usage"]
    assert (usage["impl-A"]["refused"], usage["impl-B"]["refused"]) == (2, 0)
    assert usage["total"]["refused"] == 2
    md = report.render_markdown(run)
    assert "| seat | turns | seconds | in | out | cached | cost | refused |" in md
    assert "| impl-A | 1 | 10.0 | - | - | - | $0.0100 | 2 |" in md
    assert "| total | 2 | 20.0 | - | - | - | $0.0200 | 2 |" in md
    buf = io.StringIO()
    Console(file=buf, width=250).print(report.render(run))
    assert "refused" in buf.getvalue()


def test_a_run_nothing_was_refused_in_keeps_its_table() -> None:
    md = report.render_markdown(_run(_turn("impl-A", []), _turn("impl-B", [])))
    assert "| seat | turns | seconds | in | out | cached | cost |\n" in md
    assert "refused" not in md


def test_before_the_tally_the_implementers_refusals_are_pooled() -> None:
    """Which candidate's seat tried a host could name its author: the hosts are pooled on
    the first implementer's turn, as its spend is, and counted in the total all the same."""
    run = _run(_turn("impl-B", ["b.example:443"]), _turn("impl-A", ["a.example:443"]))
    run.candidates = [Candidate(label=x, seat=f"impl-{x}", branch=f"magi/r/{x}") for x in "AB"]
    out = public_copy(run)
    by_seat = {t.seat: t.refused for t in out.turns}
    assert by_seat == {"impl-A": ["a.example:443", "b.example:443"], "impl-B": []}
