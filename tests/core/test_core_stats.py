"""magi stats over stored runs with known answers, each figure with the runs it rests on."""

from __future__ import annotations

from typing import Any

from magi.core.figures.stats import as_json, compute, render
from magi.model.review import (
    E2eResult,
    FindingRecord,
    FixReport,
    Review,
    ReviewRound,
    ReviewSeat,
)
from magi.model.run import JudgeSeat, Run, Vote
from stats_helpers import AT, base, cand, tally


def one() -> Run:
    r1 = ReviewRound(
        round=1,
        head="h1",
        seats=[
            ReviewSeat(seat="review-1", agent="oc", status="ok"),
            ReviewSeat(seat="review-2", agent="sonnet", status="timeout"),
        ],
        findings=[
            FindingRecord(id="R1-1-1", round=1, seat="review-1", severity="blocking", title="x"),
            FindingRecord(id="R1-1-2", round=1, seat="review-1", severity="minor", title="y"),
        ],
        e2e=E2eResult(deferred=True),
        fix=FixReport(
            seat="impl-A", agent="opus", status="ok", adopted=["R1-1-1"], progressed=True
        ),
        progressed=True,
        closed=True,
    )
    r2 = ReviewRound(
        round=2,
        head="h2",
        seats=[
            ReviewSeat(seat="review-1", agent="oc", status="ok"),
            ReviewSeat(seat="review-2", agent="sonnet", status="ok"),
        ],
        e2e=E2eResult(head="h2", at=AT, passed=False, exit_code=1),
        closed=True,
    )
    seats = {"impl-A": "opus", "impl-B": "sonnet", "impl-C": "oc", "judge-1": "j1"}
    return base(
        "20261201-000000-0001",
        {**seats, "judge-2": "j2"},
        candidates=[cand("A"), cand("B"), cand("C", produced=False)],
        judges=[
            JudgeSeat(seat="judge-1", order=["B", "A"]),
            JudgeSeat(seat="judge-2", order=["A", "B"]),
        ],
        votes=[
            Vote(seat="judge-1", status="ok", vote="A"),
            Vote(seat="judge-2", status="ok", vote="A"),
        ],
        tally=tally("A"),
        review=Review(label="A", branch="b/A", rounds=[r1, r2]),
    )


def two() -> Run:
    return base(
        "20261201-000000-0002",
        {"impl-A": "sonnet", "impl-B": "opus"},
        candidates=[cand("A"), cand("B")],
        judges=[],
        votes=[],
        tally=tally("A"),
    )


def fig(d: dict[str, Any]) -> tuple[int, int, int]:
    return (d["count"], d["total"], d["runs"])


def test_stats_figures_from_known_runs() -> None:
    """Every figure matches the hand count and says how many runs it rests on."""
    s = as_json(compute([one(), two()]))
    impl, rev = s["implementation"], s["review"]
    assert s["runs"] == 2
    assert fig(impl["win_rate"]["opus"]) == (1, 2, 2)
    assert fig(impl["win_rate"]["oc"]) == (0, 1, 1)
    assert fig(impl["produced_nothing"]["oc"]) == (1, 1, 1)
    assert fig(impl["produced_nothing"]["opus"]) == (0, 2, 2)
    assert rev["findings_per_round"] == {"value": 1.0, "findings": 2, "rounds": 2, "runs": 1}
    assert fig(rev["precision"]["oc"]) == (1, 2, 1)
    assert fig(rev["unique_find_rate"]["oc"]) == (2, 2, 1)
    assert fig(rev["never_answered"]["sonnet"]) == (1, 2, 1)
    assert fig(rev["never_answered"]["oc"]) == (0, 2, 1)
    assert fig(s["verification"]["e2e_failed_while_reviews_clean"]) == (1, 1, 1)


def test_position_bias_and_same_vendor_votes() -> None:
    """Votes by the slot each judge saw the winner in, and votes for its own vendor."""
    s = as_json(compute([one(), two()]))["judging"]
    assert fig(s["vote_by_slot"]["j1"]["1"]) == (0, 1, 1)
    assert fig(s["vote_by_slot"]["j1"]["2"]) == (1, 1, 1)
    assert fig(s["vote_by_slot"]["j2"]["1"]) == (1, 1, 1)
    assert fig(s["same_vendor_vote"]["j1"]) == (1, 1, 1)
    assert fig(s["same_vendor_vote"]["j2"]) == (0, 1, 1)


def test_render_says_how_many_runs() -> None:
    """The text form carries the counts, and an empty store says there is no data."""
    text = render(compute([one(), two()]))
    assert "opus" in text
    assert "50% (1/2, 2 runs)" in text
    assert "(no data)" in render(compute([]))


def test_win_rates_split_by_the_cli_version_that_wrote_each_candidate() -> None:
    """The same agent id across runs may have run different CLI versions: its wins are
    split by version ("claude 2.1.197"); a seat with no version recorded counts under its
    kind alone, never under a guessed version. Shown in the text, the JSON and markdown."""
    old = two()  # opus (claude) wins A, sonnet (claude) loses B
    old.seats["impl-A"].cli_version = "2.1.190"
    new = base(
        "20261201-000000-0003",
        {"impl-A": "opus", "impl-B": "oc"},
        candidates=[cand("A"), cand("B")],
        judges=[],
        votes=[],
        tally=tally("B"),
    )
    new.seats["impl-A"].cli_version = "2.1.197"
    new.seats["impl-B"].cli_version = "1.18.33"
    s = compute([old, new])
    by_cli = as_json(s)["implementation"]["win_rate_by_cli_version"]
    assert {k: fig(v) for k, v in by_cli.items()} == {
        "claude 2.1.190": (1, 1, 1),
        "claude 2.1.197": (0, 1, 1),
        "claude": (0, 1, 1),
        "opencode 1.18.33": (1, 1, 1),
    }
    assert fig(as_json(s)["implementation"]["win_rate"]["opus"]) == (0, 2, 2)
    text = render(s)
    assert "win rate by CLI version" in text
    assert "claude 2.1.197" in text
