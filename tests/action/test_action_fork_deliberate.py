"""A deliberation turn forked to a judge's runner: its answer taken in at its place in the
argument, and nothing a panel's seat job could not know lost from the record."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from magi.action.agents_job.fork import DELTA, absorb
from magi.errors import ActionError
from magi.git.repo import Git
from magi.model.run import Event, JudgeSeat, Ranking, Run, Seat
from magi.state.store import Store
from record_helpers import run as fixture_run

GPU = ["self-hosted", "gpu"]
AT = datetime(2026, 12, 5, 1, 0, tzinfo=UTC)


def _forked() -> Run:
    """Three judges split; judge-1 argued round 1 on the pool, judge-2's turn is forked."""
    judges = [JudgeSeat(seat=f"judge-{n}", order=["A", "B", "C"]) for n in (1, 2, 3)]
    r = fixture_run(
        "20261205-010000-beef",
        judges=judges,
        deliberation=[Ranking(seat="judge-1", status="ok", ranking=["A", "B"], round=1)],
        fork=[GPU],
        fork_node="deliberate",
        fork_id="f1",
        fork_seats=["judge-2"],
        fork_round=1,
        events=[Event(at=AT, node="deliberate", message="judge-2 held by cx; handed to jx")],
    )
    r.seats["judge-2"] = Seat(name="judge-2", agent="jx", failover_from=["cx"])
    return r


def _result(**change: object) -> dict[str, bytes]:
    body: dict[str, object] = {
        "fork_id": "f1",
        "node": "deliberate",
        "labels": GPU,
        "seats": ["judge-2"],
        "candidates": [],
        "seat_records": {"judge-2": {"name": "judge-2", "agent": "jx", "failover_from": []}},
        "turns": [],
        "questions": [],
        "redactions": [],
        # The panel's copy of the pool's event, worded as it may be read before the tally.
        "events": [
            {"at": AT.isoformat(), "node": "deliberate", "message": "a seat passed on"},
            {"at": "2026-12-05T01:05:00+00:00", "node": "deliberate", "message": "argued"},
        ],
        "deliberation": [
            Ranking(seat="judge-2", status="ok", ranking=["B", "A"], round=1).model_dump(
                mode="json"
            )
        ],
        **change,
    }
    return {DELTA: json.dumps(body).encode()}


def _absorb(r: Run, members: dict[str, bytes], tmp_path: Path) -> list[str]:
    return absorb(r, members, GPU, Store(tmp_path), Git(tmp_path), "t", seats=["judge-2"])


def test_a_forked_turn_takes_its_place_in_the_argument(tmp_path: Path) -> None:
    r = _forked()
    _absorb(r, _result(), tmp_path)
    assert [(d.seat, d.round, d.ranking) for d in r.deliberation] == [
        ("judge-1", 1, ["A", "B"]),
        ("judge-2", 1, ["B", "A"]),
    ]
    assert r.seats["judge-2"].failover_from == ["cx"], "whom it passed from, the panel never saw"
    said = [e.message for e in r.events if e.node == "deliberate"]
    assert said == ["judge-2 held by cx; handed to jx", "argued"], "one event, once"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"node": "vote"}, "not a result of the deliberate wave"),
        (
            {"deliberation": [{"seat": "judge-3", "status": "ok", "ranking": ["A"], "round": 1}]},
            "not its own",
        ),
        (
            {"deliberation": [{"seat": "judge-2", "status": "ok", "ranking": ["Z"], "round": 1}]},
            "names candidates the run does not have",
        ),
    ],
)
def test_a_forked_turns_result_for_other_seats_or_candidates_is_refused(
    tmp_path: Path, change: dict[str, object], said: str
) -> None:
    r = _forked()
    before = r.model_dump()
    with pytest.raises(ActionError, match=said):
        _absorb(r, _result(**change), tmp_path)
    assert r.model_dump() == before, "nothing taken from a refused result"


def test_deliberation_in_another_waves_result_is_refused(tmp_path: Path) -> None:
    r = _forked().model_copy(update={"fork_node": "vote"})
    with pytest.raises(ActionError, match="answers of a wave other than vote"):
        _absorb(r, _result(node="vote"), tmp_path)
