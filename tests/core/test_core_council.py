"""The council's counting rules: weights, threshold, grouping, debate limits, verdict mappings."""

from __future__ import annotations

from typing import get_args

import pytest

from magi.core.council.rules import (
    CHECK_CONCLUSION,
    EXIT_CODES,
    PanelSeat,
    change_outcome,
    check_conclusion,
    count_positions,
    debate_limit,
    degrade,
    detect_language,
    exit_code,
    grouping,
    sage_aliases,
)
from magi.state.council import Verdict as RecordedVerdict

THREE = [PanelSeat(f"sage-{i}", f"a{i}") for i in (1, 2, 3)]


def count(panel, positions, groups, threshold=0.5):
    return count_positions(panel, positions, groups, threshold)


def test_two_of_three_pass_with_equal_weights():
    """Equal weights, threshold 0.5: a pair passes over a single."""
    c = count(
        THREE,
        {"sage-1": "TOML", "sage-2": "toml!", "sage-3": "JSON"},
        [["sage-1", "sage-2"], ["sage-3"]],
    )
    assert c.passed is not None
    assert c.passed.seats == ("sage-1", "sage-2")
    assert c.passed.text == "TOML"
    assert c.total == 3


def test_all_different_passes_nothing():
    """Three positions, one supporter each: no position passes."""
    c = count(
        THREE, {"sage-1": "a", "sage-2": "b", "sage-3": "c"}, [["sage-1"], ["sage-2"], ["sage-3"]]
    )
    assert c.passed is None


def test_a_failed_seat_counts_zero_and_stays_in_the_total():
    """With threshold 0.7, two of three agreeing while the third failed is 2 of 3, short of 0.7."""
    c = count(THREE, {"sage-1": "x", "sage-2": "x"}, [["sage-1", "sage-2"]], threshold=0.7)
    assert c.total == 3
    assert c.passed is None
    assert "2.1 of 3" in c.reason


def test_weights_decide_not_heads():
    """A heavy pair passes; a light pair does not reach the threshold, and loses to the one
    seat that holds more weight than both."""
    panel = [
        PanelSeat("sage-1", "a", 60),
        PanelSeat("sage-2", "b", 20),
        PanelSeat("sage-3", "c", 20),
    ]
    light = count(
        panel,
        {"sage-1": "x", "sage-2": "y", "sage-3": "y"},
        [["sage-1"], ["sage-2", "sage-3"]],
        threshold=0.5,
    )
    assert light.passed is not None
    assert light.passed.seats == ("sage-1",)
    heavy = count(
        panel,
        {"sage-1": "x", "sage-2": "x", "sage-3": "y"},
        [["sage-1", "sage-2"], ["sage-3"]],
        threshold=0.5,
    )
    assert heavy.passed is not None
    assert heavy.passed.weight == 80


def test_the_weights_decide_a_heavy_seat_passes_alone():
    """Seats weighted 80, 10, 10 (threshold 0.5): the 80 seat's position passes; a user who
    weights a seat expects the weight to count (seed 002)."""
    panel = [
        PanelSeat("sage-1", "a", 80),
        PanelSeat("sage-2", "b", 10),
        PanelSeat("sage-3", "c", 10),
    ]
    positions = {"sage-1": "x", "sage-2": "y", "sage-3": "z"}
    c = count_positions(panel, positions, [["sage-1"], ["sage-2"], ["sage-3"]], 0.5)
    assert c.passed is not None
    assert c.passed.seats == ("sage-1",)
    assert "passed with 80 of 100" in c.reason


def test_min_supporters_two_is_seed_001s_rule_on_top():
    """A panel that sets min_supporters = 2: one model is not a council, however heavy."""
    panel = [PanelSeat("sage-1", "a", 90), PanelSeat("sage-2", "b", 5), PanelSeat("sage-3", "c", 5)]
    positions = {"sage-1": "x", "sage-2": "y", "sage-3": "z"}
    groups = [["sage-1"], ["sage-2"], ["sage-3"]]
    c = count_positions(panel, positions, groups, 0.5, min_supporters=2)
    assert c.passed is None
    assert "1 supporter(s)" in c.reason
    assert "min_supporters" in c.reason


def test_equal_weights_need_two_of_three_either_way():
    """For three equal seats the threshold already asks two supporters: the rule is moot."""
    panel = [PanelSeat(f"sage-{i}", str(i), 1) for i in (1, 2, 3)]
    groups = [["sage-1"], ["sage-2"], ["sage-3"]]
    for floor in (1, 2):
        c = count_positions(
            panel, {"sage-1": "x", "sage-2": "y", "sage-3": "z"}, groups, 0.5, floor
        )
        assert c.passed is None


def test_a_tie_at_the_threshold_passes_nothing():
    """Four seats split 2-2 at threshold 0.5: both reach it, neither passes."""
    four = [*THREE, PanelSeat("sage-4", "a4")]
    c = count(four, {s.seat: "x" for s in four}, [["sage-1", "sage-2"], ["sage-3", "sage-4"]])
    assert c.passed is None
    assert "tie" in c.reason


def test_two_seats_need_both():
    """Two-seat rules: 2-0 passes, 1-1 does not."""
    two = THREE[:2]
    assert count(two, {"sage-1": "x", "sage-2": "x"}, [["sage-1", "sage-2"]]).passed is not None
    assert count(two, {"sage-1": "x", "sage-2": "y"}, [["sage-1"], ["sage-2"]]).passed is None


def test_fewer_than_two_answers_count_nothing():
    """One answer is not a council's count."""
    c = count(THREE, {"sage-1": "x"}, [["sage-1"]])
    assert c.passed is None
    assert "1 seat(s) answered" in c.reason


@pytest.mark.parametrize(
    "groups",
    [
        None,
        [["P1", "P2"]],  # P3 missing
        [["P1", "P2"], ["P2", "P3"]],  # P2 twice
        [["P1", "P2", "P3", "P4"]],  # unknown label
        [["P1", "P2", "P3"], []],  # an empty group
    ],
)
def test_no_valid_grouping_leaves_every_position_alone(groups):
    """Code never guesses a merge: an invalid or missing grouping is every label alone."""
    assert grouping(["P1", "P2", "P3"], groups) == [["P1"], ["P2"], ["P3"]]


def test_a_valid_grouping_is_used_in_label_order():
    """A partition is taken as given, tidied into label order."""
    assert grouping(["P1", "P2", "P3"], [["P2"], ["P3", "P1"]]) == [["P1", "P3"], ["P2"]]


@pytest.mark.parametrize(
    ("answering", "configured", "limit"),
    [(3, 2, 2), (3, 5, 2), (9, 2, 2), (3, 1, 1), (2, 2, 1), (2, 0, 0), (1, 2, 0), (3, 0, 0)],
)
def test_debate_rounds_are_bounded(answering, configured, limit):
    """At most two debate rounds, one with two seats, never more than configured."""
    assert debate_limit(answering, configured) == limit


def test_aliases_are_per_recipient_and_skip_the_recipient():
    """Each recipient sees the others as Sage A, Sage B, in panel order, never itself."""
    seats = ["sage-1", "sage-2", "sage-3"]
    assert sage_aliases("sage-1", seats) == {"sage-2": "Sage A", "sage-3": "Sage B"}
    assert sage_aliases("sage-2", seats) == {"sage-1": "Sage A", "sage-3": "Sage B"}


def test_a_change_is_adopted_by_weight():
    """A suggested change needs the threshold of the total weight to adopt it."""
    assert (
        change_outcome(THREE, {"sage-1": True, "sage-2": True, "sage-3": False}, 0.5) == "adopted"
    )
    assert change_outcome(THREE, {"sage-1": True}, 0.5) == "rejected"


def test_degraded_councils():
    """Three seats sit; two make a two-seat council with a note; one is no council, with why."""
    seated, notes, why = degrade(THREE, {})
    assert len(seated) == 3
    assert why is None
    assert notes == []
    seated, notes, why = degrade(THREE, {"a3": "`grok` is not on PATH"})
    assert [s.seat for s in seated] == ["sage-1", "sage-2"]
    assert why is None
    assert any("two-seat council" in n for n in notes)
    assert any("`grok` is not on PATH" in n for n in notes)
    _, _, why = degrade(THREE, {"a2": "`codex` is not on PATH", "a3": "`grok` is not on PATH"})
    assert why is not None
    assert "codex" in why
    assert "grok" in why
    _, _, why = degrade(THREE[:1], {})
    assert why is not None
    assert "at least two" in why


@pytest.mark.parametrize(
    ("verdict", "conclusion", "code"),
    [
        ("passed", "success", 0),
        ("conditional", "action_required", 14),
        ("rejected", "failure", 1),
        ("no_consensus", "action_required", 13),
        ("inconclusive", "action_required", 13),
        ("no_council", "failure", 3),
    ],
)
def test_check_run_conclusion_and_exit_code_per_verdict(verdict, conclusion, code):
    """Every verdict maps to its check-run conclusion and its exit code."""
    assert check_conclusion(verdict) == conclusion
    assert exit_code(verdict) == code


def test_every_verdict_has_a_conclusion():
    """No verdict a record can hold is left without a check-run conclusion or an exit code."""
    assert set(CHECK_CONCLUSION) == set(get_args(RecordedVerdict)) == set(EXIT_CODES)


def test_only_a_pass_passes_a_required_check():
    """GitHub lets success, neutral and skipped pass a required check: only "passed" may."""
    passing = {"success", "neutral", "skipped"}
    assert [v for v, c in CHECK_CONCLUSION.items() if c in passing] == ["passed"]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Which is better?", "en"),
        ("設定ファイルの形式はどれがよいですか", "ja"),
        ("TOMLかYAMLか", "ja"),
    ],
)
def test_language_follows_the_question(text, lang):
    """Japanese text is detected; anything else is English."""
    assert detect_language(text) == lang
