"""The review loop's pure decisions: ids, open findings, endings, unique finds, seating."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from magi.core.review.loop import (
    closed_ids,
    decide,
    defer_e2e,
    finding_id,
    follow_ups,
    normalise_title,
    number_findings,
    open_blocking,
    reviewer_agents,
    same_find,
    unique_findings,
)
from magi.core.text.answers import Finding
from magi.model.review import (
    E2eResult,
    FindingRecord,
    FixReport,
    OperatorFix,
    Rejected,
    Review,
    ReviewRound,
    ReviewSeat,
)

AT = datetime(2026, 12, 1, tzinfo=UTC)


def green(head: str) -> E2eResult:
    return E2eResult(head=head, at=AT, passed=True, exit_code=0)


def red(head: str) -> E2eResult:
    return E2eResult(head=head, at=AT, passed=False, exit_code=1)


def finding(fid: str, severity: str = "blocking", **kw: object) -> FindingRecord:
    rnd, seat = int(fid[1]), f"review-{fid.split('-')[1]}"
    data: dict[str, object] = {"title": fid, "detail": "d", **kw}
    return FindingRecord(id=fid, round=rnd, seat=seat, severity=severity, **data)  # type: ignore[arg-type]


def rnd(
    n: int,
    head: str,
    *,
    findings: list[FindingRecord] | None = None,
    e2e: E2eResult | None = None,
    fix: FixReport | None = None,
    seats: dict[str, str] | None = None,
) -> ReviewRound:
    seats = seats if seats is not None else {"review-1": "ok", "review-2": "ok"}
    return ReviewRound(
        round=n,
        head=head,
        seats=[ReviewSeat(seat=s, agent="a", status=st) for s, st in seats.items()],  # type: ignore[arg-type]
        findings=findings or [],
        e2e=e2e,
        fix=fix,
        progressed=None if fix is None else fix.progressed,
        closed=True,
    )


def review(*rounds: ReviewRound) -> Review:
    return Review(label="A", branch="magi/x/A", rounds=list(rounds))


def fixed(*adopted: str, progressed: bool = True, rejected: tuple[str, ...] = ()) -> FixReport:
    return FixReport(
        seat="impl-A",
        agent="a",
        status="ok",
        adopted=list(adopted),
        rejected=[Rejected(id=r, reason="because") for r in rejected],
        progressed=progressed,
    )


def test_ids_are_assigned_by_magi_in_listed_order() -> None:
    """R<round>-<reviewer>-<n>, n counting the reviewer's findings from 1."""
    answer = [
        Finding(severity="blocking", title="t1", detail="d"),
        Finding(severity="minor", title="t2", detail="d", file="x.py", line=3),
    ]
    recs = number_findings(2, "review-3", answer)
    assert [r.id for r in recs] == ["R2-3-1", "R2-3-2"]
    assert (recs[1].file, recs[1].line, recs[1].seat) == ("x.py", 3, "review-3")
    with pytest.raises(ValueError, match="count from 1"):
        finding_id(0, 1, 1)
    with pytest.raises(ValueError, match="not a reviewer seat"):
        number_findings(1, "judge-1", answer)


def test_clean_round_gates() -> None:
    """No blocking finding and e2e green on the reviewed head: clean."""
    d = decide(review(rnd(1, "h1", e2e=green("h1"))), max_rounds=3, incomplete="block")
    assert (d.verdict, d.outcome) == ("clean", "clean")


def test_green_on_another_commit_is_not_green() -> None:
    """An e2e result about a different commit never makes this head green."""
    d = decide(review(rnd(1, "h1", e2e=green("h0"))), max_rounds=1, incomplete="block")
    assert (d.verdict, d.outcome) == ("blocked", "rounds")
    assert "not green" in d.reason


def test_blocking_then_fixed_continues_then_clean() -> None:
    """A progressed fix goes on to the next round; that round clean ends the loop."""
    r1 = rnd(
        1, "h1", findings=[finding("R1-1-1")], e2e=E2eResult(deferred=True), fix=fixed("R1-1-1")
    )
    assert decide(review(r1), max_rounds=3, incomplete="block").verdict == "continue"
    r2 = rnd(2, "h2", e2e=green("h2"))
    assert decide(review(r1, r2), max_rounds=3, incomplete="block").outcome == "clean"


def test_stagnant_fixer_blocks() -> None:
    """A fixer that produced no new tree ends the loop blocked as stagnant."""
    r1 = rnd(1, "h1", findings=[finding("R1-1-1")], e2e=red("h1"), fix=fixed(progressed=False))
    d = decide(review(r1), max_rounds=5, incomplete="block")
    assert (d.verdict, d.outcome) == ("blocked", "stagnant")


def test_rejecting_every_finding_is_not_stagnant() -> None:
    """A fixer that rejects all it was asked, with reasons, owes no tree: re-review follows."""
    rejected = fixed(progressed=False, rejected=("R1-1-1",))
    rejected.asked = ["R1-1-1"]
    r1 = rnd(1, "h1", findings=[finding("R1-1-1")], e2e=E2eResult(deferred=True), fix=rejected)
    assert decide(review(r1), max_rounds=3, incomplete="block").verdict == "continue"
    r1.e2e = red("h1")
    assert decide(review(r1), max_rounds=3, incomplete="block").outcome == "stagnant"


def test_a_lost_turn_whose_findings_magi_fix_rejected_is_not_stagnant() -> None:
    """The round's fixer was lost to quota; ``magi fix`` rejected what it was asked: re-review."""
    lost = FixReport(seat="impl-A", agent="a", status="quota", asked=["R1-1-1"])
    r1 = rnd(1, "h1", findings=[finding("R1-1-1")], e2e=E2eResult(deferred=True), fix=lost)
    assert decide(review(r1), max_rounds=3, incomplete="block").outcome == "stagnant"
    op = OperatorFix(
        at=AT, findings=[finding("R1-1-1")], report=fixed(progressed=False, rejected=("R1-1-1",))
    )
    d = decide(review(r1), max_rounds=3, incomplete="block", operator_fixes=[op])
    assert d.verdict == "continue"


def test_out_of_rounds_names_open_findings() -> None:
    """The last round with a blocking finding open ends blocked, naming the id."""
    r1 = rnd(1, "h1", findings=[finding("R1-2-1")], e2e=red("h1"))
    d = decide(review(r1), max_rounds=1, incomplete="block")
    assert (d.verdict, d.outcome) == ("blocked", "rounds")
    assert "R1-2-1" in d.reason


def test_incomplete_round_under_block_is_rereviewed_then_blocked() -> None:
    """A silent seat under block: never clean; re-reviewed; out of rounds: blocked."""
    seats = {"review-1": "ok", "review-2": "timeout"}
    r1 = rnd(1, "h1", e2e=green("h1"), seats=seats)
    assert decide(review(r1), max_rounds=2, incomplete="block").verdict == "continue"
    r2 = rnd(2, "h1", e2e=green("h1"), seats=seats)
    d = decide(review(r1, r2), max_rounds=2, incomplete="block")
    assert (d.verdict, d.outcome) == ("blocked", "incomplete")
    assert "review-2" in d.reason


def test_incomplete_round_under_warn_gates_on_who_answered() -> None:
    """warn: the round gates on the seats that did answer, and the gap is named."""
    r1 = rnd(1, "h1", e2e=green("h1"), seats={"review-1": "ok", "review-2": "invalid"})
    d = decide(review(r1), max_rounds=2, incomplete="warn")
    assert d.outcome == "clean"
    assert "review-2" in d.reason
    nobody = rnd(1, "h1", e2e=green("h1"), seats={"review-1": "timeout"})
    assert decide(review(nobody), max_rounds=1, incomplete="warn").verdict == "blocked"


def test_round_in_progress_continues() -> None:
    """A round whose nodes have not all recorded their part decides nothing yet."""
    r1 = rnd(1, "h1", e2e=green("h1"))
    r1.closed = False
    assert decide(review(r1), max_rounds=1, incomplete="block").verdict == "continue"


def test_e2e_deferred_only_while_rounds_are_left() -> None:
    """Blocking findings and rounds left: defer; the last round always runs e2e."""
    open_round = review(rnd(1, "h1", findings=[finding("R1-1-1")]))
    assert defer_e2e(open_round, max_rounds=2)
    assert not defer_e2e(open_round, max_rounds=1)
    assert not defer_e2e(review(rnd(1, "h1")), max_rounds=3)


def test_adopted_and_rejected_stay_closed_including_operator_fixes() -> None:
    """Closed ids come from every stored fix report, the rounds' and `magi fix`'s."""
    r1 = rnd(
        1,
        "h1",
        findings=[finding("R1-1-1"), finding("R1-1-2"), finding("R1-2-1")],
        fix=fixed("R1-1-1", rejected=("R1-1-2",)),
    )
    assert closed_ids(review(r1)) == {"R1-1-1", "R1-1-2"}
    assert [f.id for f in open_blocking(review(r1))] == ["R1-2-1"]
    op = OperatorFix(at=AT, findings=[finding("R1-2-1")], report=fixed("R1-2-1"))
    assert open_blocking(review(r1), [op]) == []


def test_unique_finds_by_title_or_nearby_line() -> None:
    """Same normalised title, or same file within five lines, is the same find."""
    a = finding("R1-1-1", title="Off-by-one in pager!", file="p.py", line=10)
    b = finding("R1-2-1", title="off by one in PAGER", file="q.py", line=90)
    c = finding("R1-2-2", title="Leaks a handle", file="p.py", line=15)
    d = finding("R1-1-2", title="Slow loop", file="p.py", line=40)
    assert normalise_title("Off-by-one  in pager!") == "off by one in pager"
    assert same_find(a, b)
    assert same_find(a, c)
    assert not same_find(a, d)
    assert [f.id for f in unique_findings(rnd(1, "h", findings=[a, b, c, d]))] == ["R1-1-2"]


def test_follow_ups_are_minor_findings_nobody_adopted() -> None:
    """Minor findings left unadopted are listed; adopted ones and blocking ones are not."""
    r1 = rnd(
        1,
        "h1",
        findings=[finding("R1-1-1", "minor"), finding("R1-1-2", "minor"), finding("R1-2-1")],
        fix=fixed("R1-1-2"),
    )
    assert [f.id for f in follow_ups(review(r1))] == ["R1-1-1"]
    assert follow_ups(None) == []


def test_author_never_reviews_its_own_candidate_when_another_can_sit() -> None:
    """The winner's author is swapped for an unseated agent, then any other; alone, it sits."""
    assert reviewer_agents(["opus", "oc"], ["opus", "sonnet", "oc"], "opus") == ["sonnet", "oc"]
    assert reviewer_agents(["opus", "opus"], ["opus", "oc"], "opus") == ["oc", "oc"]
    assert reviewer_agents(["opus"], ["opus"], "opus") == ["opus"]


def test_review_rounds_zero_skips_the_loop() -> None:
    """review_rounds = 0 is a decision to skip, recorded as such."""
    assert decide(review(), max_rounds=0, incomplete="block").outcome == "skipped"
