"""A forked review round: a seat job's answers, taken in only as its own seats' in this round."""

from __future__ import annotations

import pytest

from magi.action.agents_job.fork import _absorb_review, _review_delta
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
    target = _forked(findings=[_finding("review-1", 1)])
    _absorb_review(target, data, {"review-2"}, "t")
    got = target.review.rounds[0] if target.review else None
    assert got is not None
    assert [(s.seat, s.status) for s in got.seats] == [("review-1", "pending"), ("review-2", "ok")]
    assert [f.id for f in got.findings] == ["R1-review-1-1", "R1-review-2-1"]


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
        _absorb_review(target, data, {"review-2"}, "t")
    assert target.model_dump() == before, "nothing taken from a refused result"


def test_review_answers_in_another_waves_result_are_refused() -> None:
    target = _forked().model_copy(update={"fork_node": "vote"})
    data = {"round": 1, "head": HEAD, "seats": [], "findings": []}
    with pytest.raises(ActionError, match="answers of a wave other than vote"):
        _absorb_review(target, data, {"review-2"}, "t")
