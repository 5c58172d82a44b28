"""Decision councils end to end with scripted seats: tally, debate, anonymity, changes, resume."""

from __future__ import annotations

import contextlib
import re

from council_helpers import AGENT_IDS, config, record, run
from magi.council.modes import run_council
from magi.council.rounds import Council
from magi.demo.council_scripted import ScriptedAsker
from magi.state.council import load_council
from magi.state.store import Store

SPLIT = {"sage-1": "says:TOML", "sage-2": "switch:YAML:TOML", "sage-3": "says:JSON"}


def test_agreement_in_round_one_passes_without_debate():
    """Two of three agree at once: passed, no debate round, no debate prompt sent."""
    rec, asker = run({"sage-1": "says:TOML", "sage-2": "says:toml", "sage-3": "says:JSON"})
    assert rec.verdict == "passed"
    assert rec.position == "TOML"
    assert rec.debate_rounds == 0
    assert not [p for p in asker.prompts if p[1] == "debate"]


def test_a_split_goes_to_debate_and_passes_after_a_switch():
    """All different -> debate; one seat switches; the re-tally passes."""
    rec, _ = run(SPLIT)
    assert rec.debate_rounds == 1
    assert rec.verdict == "passed"
    assert rec.position == "TOML"
    assert rec.tallies[0].passed is None
    assert rec.tallies[1].groups[0].seats == ["sage-1", "sage-2"]


def test_still_split_after_two_debate_rounds_is_no_consensus():
    """Three seats that never move: two debate rounds, then no consensus, never a third."""
    rec, asker = run({"sage-1": "says:A", "sage-2": "says:B", "sage-3": "says:C"})
    assert rec.verdict == "no_consensus"
    assert rec.debate_rounds == 2
    assert {p[1] for p in asker.prompts} == {"ask", "debate", "clerk-positions"}
    assert len([p for p in asker.prompts if p[1] == "debate"]) == 6


def test_two_seats_get_one_debate_round():
    """A two-seat council debates once, then reports no consensus."""
    rec, asker = run({"sage-1": "says:A", "sage-2": "says:B"}, config(2, rounds=2))
    assert rec.debate_rounds == 1
    assert rec.verdict == "no_consensus"
    assert any("two-seat" in n for n in rec.notes)  # told, even when two were configured
    assert len([p for p in asker.prompts if p[1] == "debate"]) == 2


def test_rounds_zero_means_no_debate():
    """A panel configured with no debate rounds reports the split as it stands."""
    rec, _ = run({"sage-1": "says:A", "sage-2": "says:B", "sage-3": "says:C"}, config(3, rounds=0))
    assert rec.verdict == "no_consensus"
    assert rec.debate_rounds == 0


def test_no_prompt_names_another_seats_agent():
    """No prompt any seat or the clerk receives names an agent id."""
    _, asker = run(SPLIT)
    for seat, _node, prompt in asker.prompts:
        for agent in [*AGENT_IDS[:3], "clerk-agent"]:
            assert not re.search(rf"\b{re.escape(agent)}\b", prompt), (seat, agent)
        assert "sage-" not in prompt  # nor the seat names that would tie an answer to its author


def test_round_one_reveals_no_other_seat():
    """The first prompt says nothing about other seats or what they think."""
    _, asker = run(SPLIT)
    for _seat, node, prompt in asker.prompts:
        if node == "ask":
            assert "Sage" not in prompt
            assert "YAML fits" not in prompt
            assert "JSON fits" not in prompt


def test_debate_prompts_are_anonymised_per_recipient():
    """Each debater sees its own answer and the others as Sage A and Sage B, never itself."""
    _, asker = run(SPLIT)
    debate = {seat: prompt for seat, node, prompt in asker.prompts if node == "debate"}
    assert "Sage A: YAML" in debate["sage-1"]
    assert "Sage B: JSON" in debate["sage-1"]
    assert "Sage A: TOML" in debate["sage-2"]
    assert "Sage B: JSON" in debate["sage-2"]
    assert "Sage A: TOML" in debate["sage-3"]
    assert "Sage B: YAML" in debate["sage-3"]
    assert "Sage C" not in debate["sage-1"]


def test_an_invalid_clerk_answer_leaves_every_position_alone():
    """A clerk that merges everything wrongly is invalid: no merge is guessed."""
    cfg = config(3)
    rec, bodies = record(cfg)
    asker = ScriptedAsker({"sage-1": "says:TOML", "sage-2": "says:TOML", "sage-3": "says:JSON"})
    asker.overrides[("clerk", "clerk-positions")] = '```json\n{"groups": [["P1", "P2"]]}\n```'
    run_council(Council(rec, asker, evidence=bodies))
    assert rec.tallies[0].grouped_by == "alone"
    assert rec.tallies[0].passed is None


def test_a_failed_seat_counts_zero_and_stays_in_the_total():
    """Threshold 0.7 of three: two agreeing seats with the third failed cannot pass."""
    rec, _ = run(
        {"sage-1": "says:TOML", "sage-2": "says:TOML", "sage-3": "fail"}, config(3, threshold=0.7)
    )
    assert rec.tallies[0].total == 3
    assert rec.verdict == "no_consensus"
    assert rec.answer("ask", 0, "sage-3").status == "error"


def test_one_answer_is_inconclusive():
    """Fewer than two answers: nothing to count."""
    rec, _ = run({"sage-1": "says:TOML", "sage-2": "fail", "sage-3": "garbage"})
    assert rec.verdict == "inconclusive"
    assert rec.answer("ask", 0, "sage-3").status == "invalid"


def test_weights_decide():
    """A heavy seat plus one light one outweigh two light ones that agree with each other."""
    cfg = config(4, weights=[50, 10, 20, 20], threshold=0.6)
    rec, _ = run(
        {"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B", "sage-4": "says:B"}, cfg
    )
    assert rec.verdict == "passed"
    assert rec.position == "A"


def test_suggested_changes_are_put_to_every_seat_next_round():
    """A change raised in round 1 gets an id, reaches every debater, and gets an outcome."""
    cfg = config(3)
    rec, bodies = record(cfg)
    asker = ScriptedAsker({"sage-1": "says:A", "sage-2": "switch:B:A", "sage-3": "says:C"})
    asker.overrides[("sage-3", "ask")] = (
        '```json\n{"position": "C", "rationale": "r", "confidence": 0.4,'
        ' "suggestions": ["Add a schema file"]}\n```'
    )
    run_council(Council(rec, asker, evidence=bodies))
    (change,) = rec.changes
    assert change.id == "S1"
    debate = [p for s, n, p in asker.prompts if n == "debate"]
    assert len(debate) == 3
    assert all("Add a schema file" in p for p in debate)
    assert set(change.votes) == {"sage-1", "sage-2", "sage-3"}
    assert change.outcome == "adopted"


def test_a_change_with_no_further_round_stays_open_not_lost():
    """A change raised when round 1 already passed is recorded as open."""
    rec, bodies = record(config(3))
    asker = ScriptedAsker({"sage-1": "says:A", "sage-2": "says:A", "sage-3": "says:B"})
    asker.overrides[("sage-3", "ask")] = (
        '```json\n{"position": "B", "rationale": "r", "confidence": 0.4, "suggestions": ["x"]}\n```'
    )
    run_council(Council(rec, asker, evidence=bodies))
    assert [(c.id, c.outcome) for c in rec.changes] == [("S1", "open")]


def test_personalities_are_copied_into_the_record_and_prompts():
    """A seat's personality text goes into its prompt and stays in the record."""
    cfg = config(3, personalities={0: "security"})
    rec, asker = run(SPLIT, cfg)
    assert rec.panel_seats[0].personality == "security"
    assert "security engineer" in (rec.panel_seats[0].personality_text or "")
    first = next(p for s, n, p in asker.prompts if s == "sage-1" and n == "ask")
    assert "security engineer" in first


def test_resume_asks_only_the_seats_that_had_no_answer(tmp_path):
    """A council killed after two seats answered resumes with only the third asked."""
    store = Store(tmp_path)
    cfg = config(3)
    rec, bodies = record(cfg)
    store.create(rec)

    class Dies(ScriptedAsker):
        def __call__(self, **kw):
            if kw["seat"] == "sage-3":
                raise KeyboardInterrupt
            return super().__call__(**kw)

    first = Dies({"sage-1": "says:TOML", "sage-2": "says:TOML", "sage-3": "says:JSON"})
    council = Council(rec, first, save=lambda: store.save(rec), max_parallel=1, evidence=bodies)
    with contextlib.suppress(KeyboardInterrupt):
        run_council(council)
    loaded = load_council(store, rec.id)
    assert loaded.verdict is None
    assert {a.seat for a in loaded.answers} == {"sage-1", "sage-2"}
    again = ScriptedAsker({"sage-1": "says:TOML", "sage-2": "says:TOML", "sage-3": "says:JSON"})
    run_council(Council(loaded, again, save=lambda: store.save(loaded)))
    assert [s for s, n, _ in again.prompts if n == "ask"] == ["sage-3"]
    assert loaded.verdict == "passed"


def test_project_notes_are_appended_to_every_prompt():
    """[prompts] all reaches every council prompt under its own heading, after the rules."""
    rec, bodies = record(config(3))
    asker = ScriptedAsker(SPLIT)
    run_council(Council(rec, asker, evidence=bodies, notes="Prefer formats with comments."))
    assert asker.prompts
    for _seat, _node, prompt in asker.prompts:
        head, _, tail = prompt.partition("## Project conventions")
        assert "Prefer formats with comments." in tail
        assert "```json" in head
