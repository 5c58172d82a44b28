"""Councils through real seats (in-process agents): the one re-ask, interruption and resume."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from council_helpers import NOW, config
from magi.agents.base import TurnRequest, TurnResult, TurnStatus
from magi.council.session import resume, start
from magi.demo.council_scripted import reply
from magi.model.run import RunStatus
from magi.seats import Cancelled
from magi.state.store import Store


@dataclass
class Seat:
    """An in-process agent answering as a persona; ``script`` replies first, in order."""

    id: str
    persona: str
    script: list[str | None] = field(default_factory=list)
    kind: str = "command"
    seen: list[TurnRequest] = field(default_factory=list)

    def run_turn(self, request: TurnRequest) -> TurnResult:
        self.seen.append(request)
        if self.script:
            text = self.script.pop(0)
            if text is None:
                raise Cancelled("cut off")
        else:
            text = reply(self.persona, request.node, request.prompt)
        return TurnResult(TurnStatus.OK, text=text or "", duration_s=0.01)


def seats(personas: dict[str, str]) -> dict[str, Seat]:
    return {a: Seat(a, p) for a, p in personas.items()}


AGREE = {"opus": "says:TOML", "codex": "says:TOML", "gemini": "says:JSON", "clerk-agent": "clerk"}


def go(tmp_path: Path, agents: dict[str, Seat]):
    return start(
        Store(tmp_path),
        question="TOML or JSON?",
        source="test",
        mode="decision",
        config=config(3),
        agents=agents,
        cwd=tmp_path,
        clock=lambda: NOW,
    )


def test_a_malformed_answer_gets_one_reask_then_counts(tmp_path):
    """Prose without a block is re-asked once; the well-formed second answer counts."""
    agents = seats(AGREE)
    agents["gemini"].script = ["I think JSON, honestly."]
    rec = go(tmp_path, agents)
    assert rec.verdict == "passed"
    turns = [t for t in rec.turns if t.seat == "sage-3"]
    assert [t.reask for t in turns] == [False, True]
    assert "could not be read" in agents["gemini"].seen[1].prompt
    assert rec.answer("ask", 0, "sage-3").status == "ok"


def test_still_malformed_after_the_reask_is_invalid(tmp_path):
    """Two malformed answers: invalid, recorded, never repaired."""
    agents = seats(AGREE)
    agents["gemini"].script = ["no json", "still none"]
    rec = go(tmp_path, agents)
    assert rec.answer("ask", 0, "sage-3").status == "invalid"
    assert len([t for t in rec.turns if t.seat == "sage-3"]) == 2


def test_turns_and_artifacts_are_recorded_per_seat(tmp_path):
    """Every turn has its prompt and reply stored; no prompt names an agent."""
    rec = go(tmp_path, seats(AGREE))
    store = Store(tmp_path)
    assert {t.seat for t in rec.turns} == {"sage-1", "sage-2", "sage-3", "clerk"}
    for t in rec.turns:
        text = store.read_artifact(rec.id, t.prompt_artifact or "")
        for agent in ("opus", "codex", "gemini", "clerk-agent"):
            assert agent not in text


def test_an_interrupted_council_resumes_asking_only_the_missing_seat(tmp_path):
    """A cancel mid-round leaves the record interrupted; resume asks only that seat."""
    agents = seats(AGREE)
    agents["gemini"].script = [None]
    with pytest.raises(Cancelled):
        go(tmp_path, agents)
    store = Store(tmp_path)
    (run_id,) = store.list_ids()
    assert store.load(run_id).status is RunStatus.INTERRUPTED
    again = seats(AGREE)
    rec = resume(store, run_id, agents=again, cwd=tmp_path, clock=lambda: NOW)
    assert rec.verdict == "passed"
    assert not [r for r in again["opus"].seen if r.node == "ask"]
    assert [r.node for r in again["gemini"].seen] == ["ask"]
