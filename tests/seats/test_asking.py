"""A seat's questions at the end of its turn: nothing asked is left waiting."""

from __future__ import annotations

from pathlib import Path

from budget_helpers import seat_context
from magi.core.person.asking import ENDED
from magi.model.config import Config
from magi.seats import mailbox
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
