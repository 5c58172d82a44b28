"""Seats: conversations continue per seat, bad answers get one re-ask, lost seats fail over."""

from __future__ import annotations

from graph_helpers import calls, config, prompts, start
from magi.graph import PIPELINE
from magi.model.run import RunStatus

TWO = {"a1": "right", "a2": "partial"}


def test_a_live_judge_conversation_is_continued_not_resent(env):
    """With sessions on, deliberation and vote prompts carry no patches: the seat has them."""
    repo, home, sd = env
    run = start(repo, home, config(sd, {**TWO, "a3": "wrong"}))
    assert run.deliberation, "the demo panel splits"
    assert all(run.seats[j.seat].session_id for j in run.judges)
    for node in ("deliberate", "vote"):
        for text in prompts(home, run, node):
            assert "<<<MATERIAL patch" not in text
    for t in run.turns:  # every prompt, reply and raw output is kept
        for rel in (t.prompt_artifact, t.reply_artifact, t.raw_artifact):
            assert rel
            assert (home / "runs" / run.id / rel).is_file()
    last_vote = next(t for t in reversed(run.turns) if t.node == "vote")
    raw = (home / "runs" / run.id / last_vote.raw_artifact).read_text()
    assert "MAGI-SESSION:" in raw, "stderr is part of the raw record"
    last_speaker = run.deliberation[-1]
    votes = [t for t in run.turns if t.node == "vote"]
    assert votes
    for t in votes:
        text = (home / "runs" / run.id / t.prompt_artifact).read_text()
        own = [d.text for d in run.deliberation if d.seat == t.seat]
        if t.seat != last_speaker.seat:
            # judge-1 spoke first; its vote must still hear what was argued after it.
            assert last_speaker.text in text
        # What the seat argued itself is in its conversation already: not sent back.
        assert own
        assert not [a for a in own if f"argument {t.seat}\n{a}" in text]


def test_without_sessions_every_turn_resends_the_full_context(env):
    """graph.sessions = false: a judge is never left to argue from memory it does not have."""
    repo, home, sd = env
    run = start(repo, home, config(sd, {**TWO, "a3": "wrong"}, graph={"sessions": False}))
    assert run.status is RunStatus.READY
    assert not any(s.session_id for s in run.seats.values())
    for node in ("deliberate", "vote"):
        texts = prompts(home, run, node)
        assert texts
        for text in texts:
            assert "<<<MATERIAL patch" in text


def test_a_malformed_answer_gets_one_reask_in_the_same_conversation(env):
    """The re-ask asks only for the block; the well-formed second answer is recorded."""
    repo, home, sd = env
    judges = {"j1": "reask", "j2": "evidence", "j3": "evidence"}
    run = start(repo, home, config(sd, TWO, judges=judges, graph={"deliberate_rounds": 0}))
    j1 = [t for t in run.turns if t.seat == "judge-1" and t.node == "judge"]
    assert [t.reask for t in j1] == [False, True]
    assert run.judgements[0].status == "ok"
    reask = (home / "runs" / run.id / j1[1].prompt_artifact).read_text()
    assert "```json" in reask
    assert "<<<MATERIAL" not in reask, "a live conversation is asked only for the block"


def test_still_malformed_after_the_reask_is_recorded_invalid_never_repaired(env):
    """A judge that never answers in shape is invalid; magi invents nothing for it."""
    repo, home, sd = env
    judges = {"j1": "malformed", "j2": "evidence", "j3": "evidence"}
    run = start(repo, home, config(sd, TWO, judges=judges, graph={"deliberate_rounds": 0}))
    assert run.judgements[0].status == "invalid"
    assert run.judgements[0].ranking == []
    assert run.tally.answered == 2
    assert run.tally.quorum
    assert "judge-1" not in {v.seat for v in run.votes}


def test_an_implementer_lost_to_quota_passes_to_the_next_agent_in_a_fresh_conversation(env):
    """graph.failover: the seat is handed on and the record names who lost it."""
    repo, home, sd = env
    run = start(repo, home, config(sd, {"a1": "quota", "a2": "right"}, judges={}))
    lost = [s for s in run.seats.values() if s.failover_from]
    assert lost, "a seat should record the agent that lost it"
    assert lost[0].failover_from == ["a1"]
    quota_seat = lost[0].name
    assert run.candidate(quota_seat.removeprefix("impl-")).status == "ok"
    seat_calls = [x["persona"] for x in calls(sd) if x["seat"] == quota_seat]
    assert seat_calls[0] == "quota"
    assert len(seat_calls) == 2


def test_without_failover_a_quota_implementer_is_just_lost(env):
    """graph.failover = false keeps the seat lost; the other candidate is uncontested."""
    repo, home, sd = env
    run = start(repo, home, config(sd, {"a1": "quota", "a2": "right"}, graph={"failover": False}))
    assert run.status is RunStatus.READY
    assert run.tally.uncontested
    assert any(c.status == "quota" for c in run.candidates)


def test_a_hook_planted_by_an_implementer_is_removed_and_recorded(env):
    """Unjailed, an agent that plants a git hook in the shared git dir is caught and undone."""
    repo, home, sd = env
    planter = (
        'sh:hooks="$(git rev-parse --git-common-dir)/hooks"; '
        'printf \'#!/bin/sh\\ntouch "$HOME/pwned"\\n\' > "$hooks/post-checkout"; '
        'chmod +x "$hooks/post-checkout"; echo x >> README.md; echo done'
    )
    # The jail makes the hooks directory read-only (tests/e2e/test_jail_hostile.py): the guard
    # is what catches it when there is no jail.
    cfg = config(sd, {"a1": planter, "a2": "partial"}, sandbox={"mode": "off"})
    run = start(repo, home, cfg, pipeline=PIPELINE[:2])  # the guard acts after each turn
    bad = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert any("post-checkout" in v for v in bad.violations)
    assert not (repo / ".git" / "hooks" / "post-checkout").exists()
