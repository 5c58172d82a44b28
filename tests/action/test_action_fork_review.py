"""A forked review round: a seat job's answers, taken in only as its own seats' in this round."""

from __future__ import annotations

import pytest

from magi.action.agents_job.fork import _apply_review, _review_answers, _review_delta
from magi.errors import ActionError
from magi.model.review import FindingRecord, Review, ReviewRound, ReviewSeat
from magi.model.run import Run
from record_helpers import run as fixture_run

HEAD = "a" * 40


def _finding(seat: str, n: int, round: int = 1) -> FindingRecord:
    return FindingRecord(
        id=f"R{round}-{seat}-{n}", round=round, seat=seat, severity="minor", title=f"t{n}"
    )


def _forked(**round_: object) -> Run:
    rnd = ReviewRound(
        round=1,
        head=HEAD,
        seats=[ReviewSeat(seat="review-1", agent="a"), ReviewSeat(seat="review-2", agent="b")],
        **round_,  # type: ignore[arg-type]
    )
    review = Review(label="A", branch="magi/r/A", rounds=[rnd])
    return fixture_run("20261204-000000-beef", review=review, fork_node="review")


def test_a_review_seat_jobs_answers_replace_its_seats_and_keep_the_others() -> None:
    done = _forked(findings=[_finding("review-2", 1)])
    rnd = done.review.rounds[0] if done.review else None
    assert rnd is not None
    rnd.seats[1].status = "ok"
    data = _review_delta(done, {"review-2"})
    assert data is not None
    assert [s["seat"] for s in data["seats"]] == ["review-2"]
    target = _forked(findings=[_finding("review-1", 1), _finding("review-1", 2)])
    answers = _review_answers(target, data, {"review-2"}, "t")
    assert answers is not None
    _apply_review(answers, {"review-2"})
    got = target.review.rounds[0] if target.review else None
    assert got is not None
    assert [(s.seat, s.status) for s in got.seats] == [("review-1", "pending"), ("review-2", "ok")]
    assert [f.id for f in got.findings] == ["R1-review-1-1", "R1-review-1-2", "R1-2-1"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"head": "b" * 40}, "not the result of review round 1"),
        ({"round": 2}, "not the result of review round 1"),
        ({"findings": [_finding("review-1", 1).model_dump(mode="json")]}, "not its own"),
        ({"findings": [_finding("review-2", 1, 2).model_dump(mode="json")]}, "another round"),
        ({"seats": [{"seat": "review-2"}]}, "does not validate"),
    ],
)
def test_a_review_result_of_another_round_or_other_seats_is_refused(
    change: dict[str, object], said: str
) -> None:
    data = {"round": 1, "head": HEAD, "seats": [], "findings": [], **change}
    target = _forked()
    before = target.model_dump()
    with pytest.raises(ActionError, match=said):
        _review_answers(target, data, {"review-2"}, "t")
    assert target.model_dump() == before, "nothing taken from a refused result"


def test_review_answers_in_another_waves_result_are_refused() -> None:
    target = _forked().model_copy(update={"fork_node": "vote"})
    data = {"round": 1, "head": HEAD, "seats": [], "findings": []}
    with pytest.raises(ActionError, match="answers of a wave other than vote"):
        _review_answers(target, data, {"review-2"}, "t")


def test_a_review_results_findings_are_numbered_as_magi_numbers_them() -> None:
    """Whatever ids a result carries (another reviewer's, repeated), each seat's findings
    are numbered again from 1 in the order given: no id of another seat is taken."""
    forged = [
        _finding("review-2", 1).model_copy(update={"id": "R1-1-1"}),
        _finding("review-2", 2).model_copy(update={"id": "R1-1-1"}),
    ]
    data = {
        "round": 1,
        "head": HEAD,
        "seats": [],
        "findings": [f.model_dump(mode="json") for f in forged],
    }
    target = _forked(findings=[_finding("review-1", 1).model_copy(update={"id": "R1-1-1"})])
    answers = _review_answers(target, data, {"review-2"}, "t")
    assert answers is not None
    _apply_review(answers, {"review-2"})
    got = target.review.rounds[0] if target.review else None
    assert got is not None
    assert [f.id for f in got.findings] == ["R1-1-1", "R1-2-1", "R1-2-2"]


def test_a_review_result_taken_in_keeps_the_rounds_seat_order() -> None:
    """review-1's answers joined after review-2's are listed first, as the round lists
    its seats, not in the order the results came."""
    target = _forked(findings=[_finding("review-2", 1).model_copy(update={"id": "R1-2-1"})])
    data = {
        "round": 1,
        "head": HEAD,
        "seats": [{"seat": "review-1", "agent": "a", "status": "ok"}],
        "findings": [_finding("review-1", 1).model_dump(mode="json")],
    }
    answers = _review_answers(target, data, {"review-1"}, "t")
    assert answers is not None
    _apply_review(answers, {"review-1"})
    got = target.review.rounds[0] if target.review else None
    assert got is not None
    assert [f.id for f in got.findings] == ["R1-1-1", "R1-2-1"]
    assert [(s.seat, s.status) for s in got.seats] == [("review-1", "ok"), ("review-2", "pending")]
