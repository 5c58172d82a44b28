"""A seat's questions at the end of its turn: nothing asked is left waiting."""

from __future__ import annotations

from pathlib import Path

from budget_helpers import seat_context
from magi.core.person.asking import ENDED
from magi.model.config import Config
from magi.model.run import Question
from magi.seats import SeatContext, mailbox
from magi.seats.asking import Listening


def test_a_question_still_open_when_the_turn_ends_is_answered_so_no_ask_waits_for_ever(
    tmp_path: Path,
) -> None:
    """An unjailed agent's ``magi ask`` can outlive its turn (an orphan the turn's kill
    missed): the turn's end hands it "nobody will answer", and the record says unanswered."""
    cfg = Config.model_validate({"agents": [{"id": "a", "kind": "command", "command": ["true"]}]})
    sctx = seat_context(tmp_path, cfg, {})
    state = tmp_path / "state"
    state.mkdir()
    mailbox.write(state, mailbox.ASK, "ab12", name="q-1.json", data={"summary": "Which?"})
    asks = Listening(sctx, seat="impl-A", node="implement", turn=1, label="A", state=state)
    asks.sweep()
    assert [q.status for q in sctx.record.questions] == ["open"]
    assert mailbox.handed(state, "ab12", 1) is None, "while the turn runs, it waits"
    asks.start().stop()
    assert [q.status for q in sctx.record.questions] == ["unanswered"]
    assert mailbox.handed(state, "ab12", 1) == {"how": "ended", "answer": ENDED}


def test_on_a_runner_a_seat_parks_on_one_question_and_only_where_it_can_be_carried_on(
    tmp_path: Path,
) -> None:
    """An implementer's first question parks; its second in the same turn, and any question
    (a thread reply too) from a node whose seat cannot be continued later, get DECIDE."""
    from magi.core.person.asking import DECIDE, PARK

    cfg = Config.model_validate({"agents": [{"id": "a", "kind": "command", "command": ["true"]}]})
    sctx = seat_context(tmp_path, cfg, {}, environ={"GITHUB_ACTIONS": "true"})
    state = tmp_path / "state"
    state.mkdir()
    for box in ("ab12", "cd34"):
        mailbox.write(state, mailbox.ASK, box, name="q-1.json", data={"summary": "Which?"})
    implement = Listening(sctx, seat="impl-A", node="implement", turn=1, label="A", state=state)
    implement.sweep()
    assert [(q.id, q.status) for q in sctx.record.questions] == [("ab12", "waiting")]
    assert mailbox.handed(state, "ab12", 1) == {"how": "park", "answer": PARK}
    assert mailbox.handed(state, "cd34", 1) == {"how": "decide", "answer": DECIDE}
    mailbox.write(state, mailbox.ASK, "ab12", name="q-2.json", data={"summary": "And?"})
    fix = Listening(sctx, seat="impl-A", node="fix", turn=2, label="A", state=state)
    fix.sweep()
    assert mailbox.handed(state, "ab12", 2) == {"how": "decide", "answer": DECIDE}
    assert len(sctx.record.questions[0].turns) == 1, "a reply from fix is not parked on"


def _asked_on_a_runner(tmp_path: Path) -> tuple[SeatContext, Question]:
    """A seat of two agents on a runner, whose first agent asked a question it parks on."""
    agents = [{"id": a, "kind": "command", "command": ["true"]} for a in ("a", "b")]
    cfg = Config.model_validate({"agents": agents, "roles": {"implementers": ["a", "b"]}})
    sctx = seat_context(tmp_path, cfg, {"a": None, "b": None}, environ={"GITHUB_ACTIONS": "true"})  # type: ignore[dict-item]
    state = tmp_path / "state"
    state.mkdir()
    mailbox.write(state, mailbox.ASK, "ab12", name="q-1.json", data={"summary": "Which?"})
    Listening(sctx, seat="impl-A", node="implement", turn=1, label="A", state=state).sweep()
    (q,) = sctx.record.questions
    return sctx, q


def test_a_question_whose_asker_lost_the_seat_is_withdrawn(tmp_path: Path) -> None:
    """On a runner the seat parks on its question; if that turn is then lost (quota) and the
    seat passes to the next agent, the next agent starts afresh: the question is withdrawn
    (unanswered, said in an event), so the run parks on nothing it asked."""
    from magi.seats.ask import _hand_on

    sctx, q = _asked_on_a_runner(tmp_path)
    assert q.parked_on
    assert _hand_on(sctx, "impl-A", "implement", "lost to quota")
    assert sctx.record.seats["impl-A"].agent == "b"
    assert q.status == "unanswered"
    assert not q.parked_on
    assert any("withdrawn" in e.message for e in sctx.record.events)


def test_a_question_a_person_answered_stays_when_its_seat_fails_over(tmp_path: Path) -> None:
    """The turn carrying a person's answer is lost and the seat passes on: the answer is the
    next agent's turn too, so the question is not withdrawn."""
    from magi.seats.ask import _hand_on

    sctx, q = _asked_on_a_runner(tmp_path)
    q.turns[-1].how, q.turns[-1].answer = "choice", "SQLite"
    assert _hand_on(sctx, "impl-A", "implement", "lost to timeout")
    assert q.status == "waiting"
