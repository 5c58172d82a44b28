"""The council's answer shapes parse like every structured answer and check the ids they owe."""

from __future__ import annotations

import json

import pytest

from magi.core.council.answers import (
    COUNCIL_EXAMPLES,
    COUNCIL_SHAPES,
    ClerkAnswer,
    DebateAnswer,
    DeliberationVerdicts,
    PositionAnswer,
    ReviewVoteAnswer,
)
from magi.core.text.answers import parse_answer, reask_text
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
                "reason": "r",  # seed 004: every vote carries a reason
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


SEED_BLOCK = """## CASPER-3 report
### Analysis
The token is printed.

### Vote
**VOTE:** `REJECT`
CONFIDENCE: HIGH
REASON: the token reaches the log
  and nothing masks it.
VETO: NO
"""


@pytest.mark.parametrize(
    ("text", "vote", "reason"),
    [
        (SEED_BLOCK, "REJECT", "the token reaches the log and nothing masks it."),
        ("vote: approve\nreason: fine", "APPROVE", "fine"),
        ("- **Vote**: [ABSTAIN]\n- **Reason**: not my field", "ABSTAIN", "not my field"),
        ("`VOTE: APPROVE`\n`REASON: ok`", "APPROVE", "ok"),
        ("VOTE：APPROVE\nREASON：問題なし", "APPROVE", "問題なし"),
        ("VOTE: APPROVE\nREASON: r\nVOTE: **approve**", "APPROVE", "r"),
    ],
    ids=["seed-004", "lowercase", "bullets-bold-brackets", "backticks", "full-width", "repeat"],
)
def test_seed_004s_plain_vote_block_is_read(text, vote, reason):
    """A reviewer answering in seed 004's own format is read, not turned into an abstention."""
    answer = parse_answer(text, ReviewVoteAnswer)
    assert (answer.vote, answer.reason) == (vote, reason)


def test_a_plain_conditional_lists_its_conditions():
    """CONDITIONS: the list items below it become the vote's conditions."""
    text = "VOTE: CONDITIONAL\nREASON: fine once tested\nCONDITIONS:\n- add a test\n2. update docs"
    answer = parse_answer(text, ReviewVoteAnswer)
    assert answer.conditions == ["add a test", "update docs"]
    assert parse_answer(SEED_BLOCK, ReviewVoteAnswer).confidence == 0.9


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("VOTE: APPROVE\nREASON: a\n\nVOTE: REJECT\nREASON: b", "two different VOTE lines"),
        ("VOTE: APPROVE/REJECT\nREASON: r", "names no vote"),
        ("VOTE: APPROVE\n", "field 'reason' missing"),
        ("VOTE: APPROVE\nREASON: r\nVETO: maybe", "not YES or NO"),
        ("VOTE: APPROVE\nREASON: r\nCONFIDENCE: sure", "not HIGH, MEDIUM, LOW"),
        ("```\nVOTE: APPROVE\nREASON: r\n```", "no VOTE: line outside"),
        (fenced({"vote": "APPROVE", "reason": "r"}) + "VOTE: REJECT\n", "one answer holds one"),
    ],
    ids=["two-votes", "template", "no-reason", "veto", "confidence", "fenced", "json-disagrees"],
)
def test_an_ambiguous_or_broken_plain_vote_is_unreadable(text, why):
    """Two different votes are not the first one; a broken block is not half-read."""
    with pytest.raises(AnswerError, match=why):
        parse_answer(text, ReviewVoteAnswer)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"vote": "CONDITIONAL", "reason": "r"}, "lists its conditions"),
        ({"vote": "APPROVE", "reason": "r", "conditions": ["x"]}, "belong to a CONDITIONAL"),
        ({"vote": "CONDITIONAL", "reason": "r", "conditions": [" "]}, "condition is empty"),
        ({"vote": "APPROVE", "reason": "  "}, "reason is empty"),
        ({"vote": "APPROVE", "confidence": 0.5}, "field 'reason' missing"),
    ],
)
def test_a_review_vote_carries_a_reason_and_conditions_only_when_conditional(answer, why):
    """CONDITIONAL names its conditions, no other vote does, and every vote says why."""
    with pytest.raises(AnswerError, match=why):
        parse_answer(fenced(answer), ReviewVoteAnswer)


def test_a_json_vote_is_read_case_insensitively():
    """`"vote": "approve"` is APPROVE, as the plain block's is."""
    answer = parse_answer(fenced({"vote": "approve", "reason": "r"}), ReviewVoteAnswer)
    assert answer.vote == "APPROVE"
    ok = fenced({"vote": "CONDITIONAL", "reason": "r", "conditions": ["add a test"]})
    assert parse_answer(ok + "**VOTE:** CONDITIONAL\n", ReviewVoteAnswer).conditions == [
        "add a test"
    ]
