"""Review mode: risk tiers, the veto and who may use it, abstain and quorum (seed 004)."""

from __future__ import annotations

import pytest

from magi.core.council.review import Ballot, review_verdict


def ballots(*votes, veto_seat=None, claims=(), critical=()):
    out = []
    for i, vote in enumerate(votes, start=1):
        seat = f"sage-{i}"
        out.append(
            Ballot(
                seat=seat,
                weight=1,
                vote=vote,
                may_veto=seat == veto_seat,
                veto=seat in claims,
                critical=seat in critical,
            )
        )
    return out


@pytest.mark.parametrize(
    ("votes", "verdict"),
    [
        (("APPROVE", "APPROVE", "ABSTAIN"), "passed"),  # 2A + 1AB -> 2:0
        (("APPROVE", "REJECT", "ABSTAIN"), "rejected"),  # 1:1 tie -> reject
        (("APPROVE", "ABSTAIN", "ABSTAIN"), "inconclusive"),  # quorum
        (("REJECT", "ABSTAIN", "ABSTAIN"), "inconclusive"),
        (("APPROVE", None, None), "inconclusive"),  # lost answers leave the denominator too
        (("APPROVE", "APPROVE", "REJECT"), "passed"),
        (("APPROVE", "REJECT", "REJECT"), "rejected"),
    ],
)
def test_seed_abstain_table_at_low_risk(votes, verdict):
    """Abstain leaves the denominator; fewer than two counted votes is inconclusive."""
    assert review_verdict(ballots(*votes), "low").verdict == verdict


def test_medium_records_the_dissent():
    """At medium risk a 2:1 approval passes and names the dissenting seat."""
    r = review_verdict(ballots("APPROVE", "APPROVE", "REJECT"), "medium")
    assert r.verdict == "passed"
    assert r.dissent == ("sage-3",)


@pytest.mark.parametrize("tier", ["high", "critical"])
def test_high_and_critical_need_unanimity(tier):
    """One rejection fails a high or critical review."""
    assert review_verdict(ballots("APPROVE", "APPROVE", "REJECT"), tier).verdict == "rejected"


def test_critical_needs_the_veto_holders_approval():
    """Unanimity among the others is not enough when the veto holder abstained."""
    r = review_verdict(ballots("APPROVE", "APPROVE", "ABSTAIN", veto_seat="sage-3"), "critical")
    assert r.verdict == "rejected"
    assert "did not approve" in r.reason
    ok = review_verdict(ballots("APPROVE", "APPROVE", "APPROVE", veto_seat="sage-3"), "critical")
    assert ok.verdict == "passed"


def test_a_valid_veto_rejects_even_a_majority():
    """The veto holder with a critical finding of its own stops a 2:1 approval."""
    r = review_verdict(
        ballots(
            "APPROVE",
            "APPROVE",
            "REJECT",
            veto_seat="sage-3",
            claims={"sage-3"},
            critical={"sage-3"},
        ),
        "low",
    )
    assert r.verdict == "rejected"
    assert r.vetoed_by == ("sage-3",)


def test_a_veto_without_the_right_is_ignored_and_recorded():
    """A seat the config gives no veto cannot veto; the claim is recorded as ignored."""
    r = review_verdict(
        ballots(
            "APPROVE",
            "APPROVE",
            "REJECT",
            veto_seat="sage-1",
            claims={"sage-3"},
            critical={"sage-3"},
        ),
        "low",
    )
    assert r.verdict == "passed"
    assert r.vetoed_by == ()
    assert r.ignored_vetoes == ("sage-3: the config gives it no veto",)


def test_a_veto_without_a_critical_finding_is_ignored():
    """Even the veto holder cannot veto without a critical finding."""
    r = review_verdict(
        ballots("APPROVE", "APPROVE", "REJECT", veto_seat="sage-3", claims={"sage-3"}), "low"
    )
    assert r.verdict == "passed"
    assert "critical finding" in r.ignored_vetoes[0]


def test_weights_count_in_review():
    """A heavy rejection outweighs two light approvals at low risk."""
    bs = [
        Ballot("sage-1", 10, "APPROVE"),
        Ballot("sage-2", 10, "APPROVE"),
        Ballot("sage-3", 50, "REJECT"),
    ]
    assert review_verdict(bs, "low").verdict == "rejected"


def test_unknown_tier_is_refused():
    """A tier outside the four is a programming error, not a verdict."""
    with pytest.raises(ValueError, match="risk tier"):
        review_verdict(ballots("APPROVE", "APPROVE"), "extreme")  # type: ignore[arg-type]


@pytest.mark.parametrize("tier", ["high", "critical"])
@pytest.mark.parametrize("third", ["ABSTAIN", None], ids=["abstained", "unreadable"])
def test_two_approvals_and_a_silent_third_do_not_pass_high_or_critical(tier, third):
    """Seed 004's 3:0: 2:0 beside an abstention or an unreadable answer has no quorum."""
    r = review_verdict(ballots("APPROVE", "APPROVE", third), tier, quorum=3)
    assert r.verdict == "inconclusive"
    assert "2 readable vote(s) of 3 seat(s)" in r.reason
    assert f"{tier} risk needs 3" in r.reason
    assert review_verdict(ballots("APPROVE", "APPROVE", "APPROVE"), tier, 3).verdict == "passed"


def test_the_quorum_is_what_the_caller_configured():
    """A quorum of two at high risk (chosen on purpose) lets 2:0 pass again."""
    r = review_verdict(ballots("APPROVE", "APPROVE", "ABSTAIN"), "high", quorum=2)
    assert (r.verdict, r.quorum) == ("passed", 2)


def test_a_quorum_below_two_is_a_programming_error():
    """Seed 004: nothing is decided on fewer than two votes."""
    with pytest.raises(ValueError, match="at least 2"):
        review_verdict(ballots("APPROVE", "APPROVE"), "low", quorum=1)


def conditional(*votes, conditions=("add a test",), veto_seat=None):
    return [
        Ballot(
            b.seat,
            b.weight,
            b.vote,
            may_veto=b.seat == veto_seat,
            conditions=conditions if b.vote == "CONDITIONAL" else (),
        )
        for b in ballots(*votes)
    ]


def test_a_conditional_vote_makes_a_passing_review_conditional():
    """CONDITIONAL approves with conditions: the review is conditional, each one listed."""
    r = review_verdict(conditional("APPROVE", "APPROVE", "CONDITIONAL"), "medium")
    assert r.verdict == "conditional"
    assert r.conditions == ("sage-3: add a test",)
    assert "1 condition(s)" in r.reason
    assert r.approve == 3


def test_conditional_counts_as_approving_weight_and_the_dissent_stays():
    """At low risk, APPROVE + CONDITIONAL outweigh one REJECT; the rejecter is the dissent."""
    r = review_verdict(conditional("APPROVE", "CONDITIONAL", "REJECT"), "low")
    assert r.verdict == "conditional"
    assert r.dissent == ("sage-3",)


def test_a_rejected_or_inconclusive_review_carries_no_conditions():
    """Conditions belong to an approval: a review that did not pass lists none."""
    rejected = review_verdict(conditional("APPROVE", "CONDITIONAL", "REJECT"), "high")
    assert (rejected.verdict, rejected.conditions) == ("rejected", ())
    quiet = review_verdict(conditional("CONDITIONAL", "ABSTAIN", "ABSTAIN"), "low")
    assert (quiet.verdict, quiet.conditions) == ("inconclusive", ())


def test_the_veto_holder_voting_conditional_has_approved_with_conditions():
    """At critical risk the veto holder's CONDITIONAL is its approval, with its conditions."""
    r = review_verdict(
        conditional("APPROVE", "APPROVE", "CONDITIONAL", veto_seat="sage-3"), "critical", 3
    )
    assert r.verdict == "conditional"
    assert r.conditions == ("sage-3: add a test",)
