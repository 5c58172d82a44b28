"""The mechanical tally: counting, fallbacks, quorum, tie-breaks, split detection."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from magi.core.compete.tally import count_votes, first_choices_split, uncontested
from magi.model.run import Tally

ABC = ["A", "B", "C"]


def tally(
    votes: Mapping[str, str | None],
    first: Mapping[str, Sequence[str] | None] | None = None,
    *,
    viable: Sequence[str] = ABC,
    judges: int = 3,
) -> Tally:
    return count_votes(
        labels=ABC, viable=viable, judges=judges, first_rankings=first or {}, votes=votes
    )


def test_majority_wins() -> None:
    """Two votes of three elect the candidate."""
    t = tally({"judge-1": "B", "judge-2": "B", "judge-3": "A"})
    assert t.winner == "B"
    assert t.counts == {"A": 1, "B": 2, "C": 0}
    assert (t.answered, t.judges, t.quorum, t.tie_break) == (3, 3, True, None)
    assert "B won with 2 of 3" in t.reason


def test_counts_list_every_viable_label() -> None:
    """A viable label nobody voted for is in the counts with 0."""
    assert tally({"judge-1": "A", "judge-2": "A"}).counts == {"A": 2, "B": 0, "C": 0}


def test_lost_vote_falls_back_to_first_ranking() -> None:
    """A judge whose vote was lost counts with the first viable label it ranked."""
    t = tally(
        {"judge-1": "A", "judge-2": None},
        {"judge-1": ["A", "B", "C"], "judge-2": ["C", "A", "B"], "judge-3": ["A", "C", "B"]},
    )
    assert t.winner == "A"
    assert [(c.seat, c.label, c.source) for c in t.counted] == [
        ("judge-1", "A", "vote"),
        ("judge-2", "C", "first_ranking"),
        ("judge-3", "A", "first_ranking"),
    ]


def test_fallback_skips_labels_that_are_not_viable() -> None:
    """The fallback is the first VIABLE label of the ranking."""
    t = tally({}, {"judge-1": ["C", "B", "A"], "judge-2": ["C", "A", "B"]}, viable=["A", "B"])
    assert [c.label for c in t.counted] == ["B", "A"]


def test_vote_for_a_non_viable_label_is_ignored() -> None:
    """A vote naming a disqualified candidate falls back to the judge's first ranking."""
    t = tally(
        {"judge-1": "C", "judge-2": "A", "judge-3": "C"},
        {"judge-1": ["C", "B", "A"]},
        viable=["A", "B"],
    )
    assert t.counts == {"A": 1, "B": 1}
    assert t.answered == 2
    assert "C" not in t.counts


def test_judge_with_neither_vote_nor_ranking_is_not_counted() -> None:
    """A judge that gave nothing usable does not count toward the answers."""
    t = tally({"judge-1": "A", "judge-2": "A", "judge-3": None}, {"judge-3": None})
    assert t.answered == 2
    assert t.winner == "A"


def test_quorum_lost_means_no_winner() -> None:
    """One counted judge of three is not a majority: nobody wins, and the reason says why."""
    t = tally({"judge-1": "A", "judge-2": None, "judge-3": "Z"})
    assert t.winner is None
    assert t.quorum is False
    assert t.answered == 1
    assert "no quorum" in t.reason
    assert "1 of 3" in t.reason


def test_quorum_needs_a_strict_majority() -> None:
    """Two of four judges is half, not a majority."""
    t = tally({"judge-1": "A", "judge-2": "B"}, judges=4)
    assert t.quorum is False
    assert t.winner is None


def test_tie_broken_by_borda_on_first_rankings() -> None:
    """A 2-2 tie goes to the label with more Borda points over the first rankings."""
    t = tally(
        {"judge-1": "A", "judge-2": "B", "judge-3": "B", "judge-4": "A"},
        {
            "judge-1": ["A", "B", "C"],
            "judge-2": ["B", "C", "A"],
            "judge-3": ["A", "B", "C"],
            "judge-4": ["C", "A", "B"],
        },
        judges=4,
    )
    # Borda, 3 viable labels: A = 2 + 0 + 2 + 1 = 5, B = 1 + 2 + 1 + 0 = 4.
    assert t.winner == "A"
    assert t.tie_break == "tie 2-2 between A and B; Borda on first rankings A=5 B=4"
    assert "Borda" in t.reason


def test_borda_uses_rankings_filtered_to_viable_labels() -> None:
    """A non-viable label in a ranking earns nothing and moves nobody down."""
    t = tally(
        {"judge-1": "A", "judge-2": "B", "judge-3": "B", "judge-4": "A"},
        {
            "judge-1": ["C", "A", "B"],
            "judge-2": ["C", "B", "A"],
            "judge-3": ["A", "B"],
            "judge-4": ["A", "C", "B"],
        },
        viable=["A", "B"],
        judges=4,
    )
    # Filtered: [A, B], [B, A], [A, B], [A, B] -> A = 1 + 0 + 1 + 1 = 3, B = 1.
    assert t.winner == "A"
    assert t.tie_break == "tie 2-2 between A and B; Borda on first rankings A=3 B=1"


def test_borda_ranks_labels_a_ranking_leaves_out_last() -> None:
    """A partial ranking gives its first label n-1 points and the missing ones 0."""
    t = tally(
        {"judge-1": "B", "judge-2": "C"},
        {"judge-1": ["B"], "judge-2": ["C", "B"]},
        judges=2,
        viable=ABC,
    )
    # n = 3: judge-1 B=2; judge-2 C=2 B=1 -> B=3, C=2.
    assert t.winner == "B"
    assert t.tie_break == "tie 1-1 between B and C; Borda on first rankings B=3 C=2"


def test_tie_left_by_borda_goes_to_label_order() -> None:
    """When Borda ties too, A beats B, and the record says so."""
    t = tally(
        {"judge-1": "B", "judge-2": "A"},
        {"judge-1": ["B", "A", "C"], "judge-2": ["A", "B", "C"]},
    )
    assert t.winner == "A"
    assert t.tie_break == (
        "tie 1-1 between A and B; Borda on first rankings A=3 B=3, still tied; label order: A"
    )
    assert "label order" in t.reason


def test_three_way_tie_is_described() -> None:
    """A three-way tie names all three labels and their points."""
    t = tally({"judge-1": "C", "judge-2": "B", "judge-3": "A"})
    assert t.winner == "A"
    assert t.tie_break is not None
    assert t.tie_break.startswith("tie 1-1-1 between A, B and C; Borda on first rankings A=0")


def test_seats_beyond_the_panel_are_refused() -> None:
    """More answering seats than the panel has is a caller bug, not a bigger quorum."""
    with pytest.raises(ValueError, match="panel"):
        tally({"judge-1": "A", "judge-2": "A"}, judges=1)


def test_viable_labels_must_be_candidates() -> None:
    """A viable label that is not a candidate is refused."""
    with pytest.raises(ValueError, match="not candidates"):
        tally({"judge-1": "A"}, viable=["A", "Q"])


def test_no_viable_candidate_elects_nobody() -> None:
    """With nothing viable there is nothing to count."""
    t = tally({"judge-1": "A"}, viable=[])
    assert (t.winner, t.counts, t.answered) == (None, {}, 0)


def test_uncontested_records_that_no_judge_sat() -> None:
    """A single viable candidate is elected with judges=0 and uncontested=True."""
    t = uncontested("B")
    assert (t.winner, t.judges, t.answered, t.quorum, t.uncontested) == ("B", 0, 0, True, True)
    assert "no judge sat" in t.reason


def test_split_when_first_choices_differ() -> None:
    """Two judges putting different labels first is a split."""
    assert first_choices_split({"judge-1": ["A", "B"], "judge-2": ["B", "A"]}, ABC)


def test_no_split_when_first_choices_agree() -> None:
    """Agreement on first place is not a split, whatever the rest of the rankings."""
    assert not first_choices_split({"judge-1": ["A", "B", "C"], "judge-2": ["A", "C", "B"]}, ABC)


def test_split_ignores_judges_that_did_not_answer_and_non_viable_labels() -> None:
    """Missing rankings are skipped, and a non-viable first place gives way to the next."""
    rankings = {"judge-1": ["C", "A"], "judge-2": ["A", "B"], "judge-3": None}
    assert not first_choices_split(rankings, ["A", "B"])
    assert not first_choices_split({"judge-1": ["A"], "judge-2": None}, ABC)
