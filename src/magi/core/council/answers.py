"""The council's answer shapes: what a seat, a debater, a researcher, a reviewer and the clerk owe.

Each is parsed by ``magi.core.text.answers.parse_answer`` like every structured answer (one
fenced json block, strict, closed, never repaired). Ids a seat must answer about (the
positions a clerk groups, the findings a seat judges, the suggested changes put to it)
are passed as ``labels`` or ``finding_ids`` and checked here, so an answer that names an
unknown id, or leaves one out where all are owed, is invalid rather than half-counted.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, ClassVar, Literal, Self

from pydantic import Field, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

from magi.core.council.plain import VOTES, plain_vote, vote_words
from magi.core.text.answers import Answer, register_shape
from magi.core.text.payload import blocks, find_object, split_lines
from magi.errors import AnswerError

__all__ = [
    "COUNCIL_EXAMPLES",
    "COUNCIL_SHAPES",
    "ChangeVote",
    "ClerkAnswer",
    "CouncilFinding",
    "DebateAnswer",
    "DeliberationVerdicts",
    "PositionAnswer",
    "ResearchAnswer",
    "ResearchFinding",
    "ReviewVoteAnswer",
    "SoloVerdict",
]


def _fail(reason: str) -> PydanticCustomError:
    return PydanticCustomError("magi", "{reason}", {"reason": reason})


def _ctx(info: ValidationInfo, key: str) -> Any:
    return info.context.get(key) if isinstance(info.context, dict) else None


class ChangeVote(Answer):
    """A seat's answer on one suggested change put to it: adopt or reject, with a reason."""

    SHAPE: ClassVar[str] = "council_change_vote"
    id: str
    adopt: bool
    reason: str


def _check_change_votes(votes: Sequence[ChangeVote], known: Collection[str] | None) -> None:
    seen: set[str] = set()
    for v in votes:
        if known is not None and v.id not in known:
            raise _fail(f"changes names {v.id!r}, which is not a suggested change")
        if v.id in seen:
            raise _fail(f"change {v.id!r} is answered twice")
        seen.add(v.id)
    missing = sorted(set(known or ()) - seen)
    if missing:
        raise _fail(f"changes leaves out {', '.join(missing)}; adopt or reject every one")


class PositionAnswer(Answer):
    """Decision mode, round 1: one seat's position, alone."""

    SHAPE: ClassVar[str] = "council_position"
    position: str = Field(min_length=1)
    rationale: str
    confidence: float = Field(ge=0, le=1)
    suggestions: list[str] = Field(default_factory=list)  # suggested changes, optional


class DebateAnswer(Answer):
    """A debate turn: keep, switch or compromise, and the position held after it."""

    SHAPE: ClassVar[str] = "council_debate"
    stance: Literal["keep", "switch", "compromise"]
    position: str = Field(min_length=1)
    rationale: str
    confidence: float | None = Field(None, ge=0, le=1)
    changes: list[ChangeVote] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _changes(self, info: ValidationInfo) -> Self:
        _check_change_votes(self.changes, _ctx(info, "finding_ids"))
        return self


class ResearchFinding(Answer):
    SHAPE: ClassVar[str] = "council_finding"
    claim: str = Field(min_length=1)
    evidence: str
    source: str


class ResearchAnswer(Answer):
    """Research mode: what one seat found, each claim with its evidence and source."""

    SHAPE: ClassVar[str] = "council_research"
    findings: list[ResearchFinding]


class SoloVerdict(Answer):
    SHAPE: ClassVar[str] = "council_solo_verdict"
    id: str
    verdict: Literal["agree", "conditional", "reject"]
    reason: str


class DeliberationVerdicts(Answer):
    """Judgement of solo findings by the seats that did not report them.

    The issue's single form (``verdict`` and ``reason``) is accepted when the prompt held
    exactly one finding; with several, ``verdicts`` ties each to its id (seed 001: a
    verdict without its id cannot be tied back to the claim it judges).
    """

    SHAPE: ClassVar[str] = "council_verdicts"
    verdict: Literal["agree", "conditional", "reject"] | None = None
    reason: str | None = None
    verdicts: list[SoloVerdict] | None = None

    @model_validator(mode="after")
    def _one_form(self, info: ValidationInfo) -> Self:
        known: Collection[str] | None = _ctx(info, "finding_ids")
        single = self.verdict is not None or self.reason is not None
        if single == (self.verdicts is not None):
            raise _fail("give either verdict and reason, or verdicts, not both or neither")
        if single:
            if self.verdict is None or self.reason is None:
                raise _fail("a single verdict needs both verdict and reason")
            if known is not None and len(known) != 1:
                raise _fail("several findings were put to you: answer with verdicts by id")
            return self
        seen: set[str] = set()
        for v in self.verdicts or ():
            if known is not None and v.id not in known:
                raise _fail(f"verdicts names {v.id!r}, which is not a finding put to you")
            if v.id in seen:
                raise _fail(f"finding {v.id!r} is judged twice")
            seen.add(v.id)
        missing = sorted(set(known or ()) - seen)
        if missing:
            raise _fail(f"verdicts leaves out {', '.join(missing)}; judge every finding")
        return self

    def by_id(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(verdict, reason) per finding id."""
        if self.verdicts is None:
            # Validated: the single form has both.
            return {ids[0]: (self.verdict or "reject", self.reason or "")} if ids else {}
        return {v.id: (v.verdict, v.reason) for v in self.verdicts}


class CouncilFinding(Answer):
    SHAPE: ClassVar[str] = "council_review_finding"
    severity: Literal["critical", "major", "minor"]
    title: str
    detail: str


class ReviewVoteAnswer(Answer):
    """Review mode: a vote with its reason, conditions, confidence and findings.

    ``CONDITIONAL`` approves once the listed conditions are met, so it must list at least
    one, and no other vote may list any (an APPROVE with conditions is a CONDITIONAL that
    did not say so). The reason is owed by every vote (seed 004: REASON is never empty).
    Written as a json block, or as seed 004's plain ``VOTE:`` block
    (``core.council.plain``); a reply holding both must give the same vote in each. VETO
    is checked by code later.
    """

    SHAPE: ClassVar[str] = "council_review"
    vote: Literal["APPROVE", "REJECT", "ABSTAIN", "CONDITIONAL"]
    reason: str = Field(min_length=1)
    conditions: list[str] = Field(default_factory=list)
    confidence: float | None = Field(None, ge=0, le=1)
    findings: list[CouncilFinding] = Field(default_factory=list)
    veto: bool = False

    @classmethod
    def payload(cls, text: str) -> dict[str, Any]:
        lines = split_lines(text)
        as_json = text.strip().startswith("{") or any(
            b.info.lower() == "json" for b in blocks(lines)
        )
        if not as_json:
            plain = plain_vote(text)  # AnswerError when the block is there but unreadable
            if plain is not None:
                return plain
            raise AnswerError(
                "no ```json block in the reply, and no VOTE: line outside a ``` block"
            )
        obj = find_object(text)
        vote = obj.get("vote")
        if isinstance(vote, str) and vote.upper() in VOTES:
            obj["vote"] = vote.upper()  # read case-insensitively, as the plain block is
        said = set(vote_words(text))
        if said and said != {str(obj.get("vote", "")).upper()}:
            raise AnswerError(
                f"the reply's VOTE line says {', '.join(sorted(said))} and its json block "
                f"says {str(obj.get('vote'))[:20]!r}: one answer holds one vote"
            )
        return obj

    @model_validator(mode="after")
    def _conditions(self) -> Self:
        if not self.reason.strip():
            raise _fail("reason is empty; say why you vote as you do")
        if any(not c.strip() for c in self.conditions):
            raise _fail("a condition is empty")
        if self.vote == "CONDITIONAL" and not self.conditions:
            raise _fail("a CONDITIONAL vote lists its conditions; name at least one")
        if self.vote != "CONDITIONAL" and self.conditions:
            raise _fail(f"conditions belong to a CONDITIONAL vote, not {self.vote}")
        return self


class ClerkAnswer(Answer):
    """The clerk's grouping by meaning: every label in exactly one group."""

    SHAPE: ClassVar[str] = "council_groups"
    NEEDS_LABELS: ClassVar[bool] = True
    groups: list[list[str]]
    # Research: a detail the findings of one group disagree on, keyed by one of its labels.
    conflicts: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _partition(self, info: ValidationInfo) -> Self:
        labels: Sequence[str] | None = _ctx(info, "labels")
        seen: set[str] = set()
        for group in self.groups:
            if not group:
                raise _fail("a group is empty")
            for label in group:
                if labels is not None and label not in labels:
                    raise _fail(f"groups names {label!r}, which is not one of the items")
                if label in seen:
                    raise _fail(f"{label!r} is placed twice; place every item exactly once")
                seen.add(label)
        missing = [label for label in labels or () if label not in seen]
        if missing:
            raise _fail(f"groups leaves out {', '.join(missing)}; place every item exactly once")
        for label in self.conflicts:
            if label not in seen:
                raise _fail(f"conflicts names {label!r}, which is not one of the items")
        return self


COUNCIL_SHAPES: dict[str, type[Answer]] = {
    m.SHAPE: m
    for m in (
        PositionAnswer,
        DebateAnswer,
        ResearchAnswer,
        DeliberationVerdicts,
        ReviewVoteAnswer,
        ClerkAnswer,
    )
}

# What prompts and the README show; a test parses every one with its model.
COUNCIL_EXAMPLES: dict[str, str] = {
    # Placeholders, not positions: a concrete example would nudge every seat towards it.
    "council_position": '{\n  "position": "<your position, in one sentence>",\n  "rationale": '
    '"<why>",\n  "confidence": 0.8\n}',
    "council_debate": '{\n  "stance": "keep",\n  "position": "<the position you hold now>",\n'
    '  "rationale": "<why, answering the strongest other argument>"\n}',
    "council_research": '{\n  "findings": [\n    {\n      "claim": "Python 3.11 is in security-'
    'fix-only maintenance.",\n      "evidence": "The status page lists it as security.",\n'
    '      "source": "https://devguide.python.org/versions/"\n    }\n  ]\n}',
    "council_verdicts": '{\n  "verdicts": [\n    {"id": "F2", "verdict": "conditional", '
    '"reason": "True for CPython only."}\n  ]\n}',
    "council_review": '{\n  "vote": "APPROVE",\n  "reason": "<why you vote so, in one or two '
    'sentences>",\n  "confidence": 0.7,\n  "findings": [\n    {"severity": "minor", "title": '
    '"Unused import", "detail": "os is imported and never used."}\n  ],\n  "veto": false\n}',
    "council_groups": '{\n  "groups": [["P1", "P3"], ["P2"]]\n}',
}

for _name, _shape in COUNCIL_SHAPES.items():
    register_shape(_shape, COUNCIL_EXAMPLES[_name])
