"""Scripted council seats: personas for the demo (as command agents) and an in-process asker.

Run as ``python -m magi.demo.council_scripted <persona>``: the prompt arrives on stdin,
the phase in MAGI_NODE (ask, debate, clerk-positions, clerk-findings, research,
deliberate, review). Personas:

- ``says:<position>``: holds <position> in every round.
- ``switch:<first>:<then>``: answers <first>, switches to <then> in debate.
- ``clerk``: groups items whose text is the same after case and spacing are ignored.
- ``approve`` / ``reject`` / ``abstain`` / ``veto``: review votes (``veto`` finds a
  critical issue and claims the veto).
- ``conditional:<condition>|<condition>``: a CONDITIONAL review vote with those conditions.
- ``plain:<VOTE>[:<condition>|...]``: a review vote in seed 004's plain markdown block
  (``**VOTE:** REJECT`` ...), no json; ``twovotes``: a plain block with two VOTE lines.
- ``researcher:<claim>|<claim>``: reports those claims; agrees with every solo finding.
- ``fail``: exits non-zero; ``garbage``: answers prose without a json block.

``ScriptedAsker`` answers in-process from the same personas (no subprocess), parsing each
reply with the real parser, so tests and the bench exercise the engine, not a shortcut.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # as a process (a command seat's turn) this module imports nothing of
    # magi's: only the in-process asker needs the parser and the council's reply.
    from magi.core.text.answers import Answer
    from magi.council.asker import Reply


def _fence(obj: object) -> str:
    return f"Here is my answer.\n\n```json\n{json.dumps(obj, ensure_ascii=False)}\n```\n"


def _items(prompt: str, kind: str) -> list[tuple[str, str]]:
    pattern = re.compile(rf"^<<<MATERIAL {kind} (\S+)\n(.*?)\nMATERIAL>>>", re.M | re.S)
    return [(m.group(1), m.group(2)) for m in pattern.finditer(prompt)]


def _clerk(prompt: str) -> str:
    groups: dict[str, list[str]] = {}
    for label, body in _items(prompt, "item"):
        groups.setdefault(" ".join(body.casefold().split()), []).append(label)
    return _fence({"groups": list(groups.values())})


def _change_votes(prompt: str) -> list[dict[str, object]]:
    return [{"id": cid, "adopt": True, "reason": "sound"} for cid, _ in _items(prompt, "change")]


def reply(persona: str, node: str, prompt: str) -> str | None:
    """The persona's reply text for one phase; None means the seat fails."""
    kind, _, arg = persona.partition(":")
    if kind == "fail":
        return None
    if kind == "garbage":
        return "I would rather not answer in json."
    if node.startswith("clerk"):
        return _clerk(prompt)
    if kind in ("says", "switch"):
        first, _, then = arg.partition(":")
        if node == "ask":
            why = f"{first} fits the question best."
            return _fence({"position": first, "rationale": why, "confidence": 0.7})
        position = then or first
        stance = "switch" if then and then != first else "keep"
        why = (
            f"The case for {position} holds up better than mine."
            if stance == "switch"
            else f"{position} still fits best; no argument answered that."
        )
        return _fence(
            {
                "stance": stance,
                "position": position,
                "rationale": why,
                "changes": _change_votes(prompt),
            }
        )
    if kind == "conditional":
        conditions = [c for c in arg.split("|") if c]
        return _fence(
            {
                "vote": "CONDITIONAL",
                "reason": "Sound once the conditions hold.",
                "conditions": conditions,
            }
        )
    if kind == "plain":
        vote, _, conds = arg.partition(":")
        lines = ["## Analysis", "", "Read the diff.", "", "### Vote", f"**VOTE:** `{vote}`"]
        lines += ["CONFIDENCE: HIGH", f"**REASON:** {vote.lower()}, as the analysis says"]
        items = [c for c in conds.split("|") if c]
        if items:
            lines += ["CONDITIONS:", *(f"- {c}" for c in items)]
        return "\n".join([*lines, "VETO: NO", ""])
    if kind == "twovotes":
        return "VOTE: APPROVE\nREASON: fine\n\nOn reflection:\nVOTE: REJECT\nREASON: not fine\n"
    if kind in ("approve", "reject", "abstain", "veto"):
        vote = {"approve": "APPROVE", "reject": "REJECT", "abstain": "ABSTAIN", "veto": "REJECT"}[
            kind
        ]
        findings = []
        if kind == "veto":
            findings = [
                {
                    "severity": "critical",
                    "title": "Secret logged",
                    "detail": "The token is printed.",
                }
            ]
        elif kind == "reject":
            findings = [
                {"severity": "major", "title": "No test", "detail": "The change is untested."}
            ]
        reason = {"APPROVE": "The change does what it says.", "ABSTAIN": "Outside my remit."}
        return _fence(
            {
                "vote": vote,
                "reason": reason.get(vote, "It needs work first."),
                "confidence": 0.8,
                "findings": findings,
                "veto": kind == "veto",
            }
        )
    if kind == "researcher":
        if node == "deliberate":
            ids = [fid for fid, _ in _items(prompt, "finding")]
            verdicts = [
                {"id": i, "verdict": "agree", "reason": "Matches what I know."} for i in ids
            ]
            return _fence({"verdicts": verdicts})
        claims = [c for c in arg.split("|") if c]
        found = [
            {"claim": c, "evidence": "seen in the docs", "source": "https://example.org"}
            for c in claims
        ]
        return _fence({"findings": found})
    raise ValueError(f"unknown council persona {persona!r}")


@dataclass
class ScriptedAsker:
    """In-process seats: ``personas`` by seat (and ``clerk``); every prompt is kept."""

    personas: Mapping[str, str]
    prompts: list[tuple[str, str, str]] = field(default_factory=list)  # (seat, node, prompt)
    overrides: dict[tuple[str, str], str | None] = field(default_factory=dict)  # (seat, node)

    def __call__(
        self,
        *,
        seat: str,
        agent: str,
        node: str,
        prompt: str,
        shape: type[Answer],
        labels: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
    ) -> Reply:
        from magi.core.text.answers import parse_answer
        from magi.council.asker import Reply
        from magi.errors import AnswerError

        self.prompts.append((seat, node, prompt))
        if (seat, node) in self.overrides:
            text = self.overrides[(seat, node)]
        else:
            text = reply(self.personas.get(seat, "clerk"), node, prompt)
        if text is None:
            return Reply(None, "error", "scripted failure")
        try:
            answer = parse_answer(
                text, shape, labels=list(labels) if labels is not None else None, finding_ids=ids
            )
        except AnswerError as exc:
            return Reply(None, "invalid", exc.message)
        return Reply(answer, "ok")


def main(argv: list[str]) -> int:
    persona = argv[1] if len(argv) > 1 else "clerk"
    text = reply(persona, os.environ.get("MAGI_NODE", "ask"), sys.stdin.read())
    if text is None:
        print("scripted failure", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
