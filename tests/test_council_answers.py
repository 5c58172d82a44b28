"""The council's answer shapes parse like every structured answer and check the ids they owe."""

from __future__ import annotations

import json

import pytest

from magi.core.answers import parse_answer, reask_text
from magi.core.council_answers import (
    COUNCIL_EXAMPLES,
    COUNCIL_SHAPES,
    ClerkAnswer,
    DebateAnswer,
    DeliberationVerdicts,
    PositionAnswer,
    ReviewVoteAnswer,
)
from magi.errors import AnswerError


def fenced(obj: object) -> str:
    return f"prose first\n```json\n{obj if isinstance(obj, str) else json.dumps(obj)}\n```\n"


@pytest.mark.parametrize("name", sorted(COUNCIL_EXAMPLES))
def test_every_example_parses_with_its_shape(name):
    """The examples prompts and README show are answers the parser accepts."""
    parsed = parse_answer(
        fenced(COUNCIL_EXAMPLES[name]),
        COUNCIL_SHAPES[name],
        labels=["P1", "P2", "P3"],
        finding_ids=["F2"] if name == "council_verdicts" else [],
    )
    assert parsed.model_dump(exclude_none=True, exclude_defaults=True) == {
        k: v for k, v in json.loads(COUNCIL_EXAMPLES[name]).items() if v is not False
    }


def test_the_issue_shapes_parse_as_written():
    """The shapes the issue lists, exactly, are valid answers."""
    parse_answer(fenced({"position": "p", "rationale": "r", "confidence": 0.8}), PositionAnswer)
    parse_answer(fenced({"stance": "switch", "position": "p", "rationale": "r"}), DebateAnswer)
    parse_answer(
        fenced({"verdict": "agree", "reason": "r"}), DeliberationVerdicts, finding_ids=["C1"]
    )
    parse_answer(
        fenced(
            {
                "vote": "APPROVE",
                "confidence": 0.7,
                "findings": [{"severity": "critical", "title": "t", "detail": "d"}],
                "veto": False,
            }
        ),
        ReviewVoteAnswer,
    )


@pytest.mark.parametrize(
    ("groups", "why"),
    [
        ([["P1", "P3"]], "leaves out P2"),
        ([["P1", "P2"], ["P2", "P3"]], "placed twice"),
        ([["P1", "P2", "P3", "P9"]], "not one of the items"),
        ([["P1", "P2", "P3"], []], "empty"),
    ],
)
def test_a_clerk_answer_must_place_every_position_once(groups, why):
    """An answer that does not partition the labels exactly is invalid."""
    with pytest.raises(AnswerError, match=why):
        parse_answer(fenced({"groups": groups}), ClerkAnswer, labels=["P1", "P2", "P3"])


def test_debate_must_answer_every_change_put_to_it():
    """A suggested change put to a seat is adopted or rejected, never skipped."""
    base = {"stance": "keep", "position": "p", "rationale": "r"}
    with pytest.raises(AnswerError, match="leaves out S1"):
        parse_answer(fenced(base), DebateAnswer, finding_ids=["S1"])
    ok = {**base, "changes": [{"id": "S1", "adopt": False, "reason": "too slow"}]}
    assert parse_answer(fenced(ok), DebateAnswer, finding_ids=["S1"]).changes[0].adopt is False
    with pytest.raises(AnswerError, match="not a suggested change"):
        parse_answer(
            fenced({**base, "changes": [{"id": "S7", "adopt": True, "reason": "x"}]}),
            DebateAnswer,
            finding_ids=["S1"],
        )


def test_single_verdict_only_for_a_single_finding():
    """With several findings put to a seat, each verdict must carry its id."""
    with pytest.raises(AnswerError, match="verdicts by id"):
        parse_answer(
            fenced({"verdict": "agree", "reason": "r"}),
            DeliberationVerdicts,
            finding_ids=["C1", "C2"],
        )
    with pytest.raises(AnswerError, match="leaves out C2"):
        parse_answer(
            fenced({"verdicts": [{"id": "C1", "verdict": "agree", "reason": "r"}]}),
            DeliberationVerdicts,
            finding_ids=["C1", "C2"],
        )


@pytest.mark.parametrize(
    "bad",
    [
        {"position": "p", "rationale": "r", "confidence": 1.5},
        {"position": "", "rationale": "r", "confidence": 0.5},
        {"position": "p", "rationale": "r", "confidence": 0.5, "x": 1},
    ],
)
def test_out_of_shape_positions_are_invalid(bad):
    """Confidence outside 0..1, an empty position or an extra key is not an answer."""
    with pytest.raises(AnswerError):
        parse_answer(fenced(bad), PositionAnswer)


def test_the_re_ask_knows_council_shapes():
    """The one re-ask quotes the council shape's example."""
    text = reask_text("council_groups", "groups leaves out P2")
    assert '"groups"' in text
    assert "leaves out P2" in text


def test_clerk_conflicts_name_known_items():
    """A conflict note keyed by an unknown label makes the clerk's answer invalid."""
    ok = {"groups": [["P1", "P2"], ["P3"]], "conflicts": {"P2": "the year"}}
    assert parse_answer(fenced(ok), ClerkAnswer, labels=["P1", "P2", "P3"]).conflicts
    bad = {"groups": [["P1", "P2"], ["P3"]], "conflicts": {"P9": "x"}}
    with pytest.raises(AnswerError, match="conflicts names"):
        parse_answer(fenced(bad), ClerkAnswer, labels=["P1", "P2", "P3"])
