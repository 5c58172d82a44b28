"""A fork's seat job asks its own seats, and only in the wave it was forked for."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from magi.graph.context import Stop
from magi.model.config import AgentConfig
from magi.model.run import Ranking, RunStatus
from magi.seats.ask import ROUND, _here_or_hand_off
from record_helpers import run as fixture_run

GPU = ["self-hosted", "gpu"]


def _seat_job(node: str, seats: str) -> SimpleNamespace:
    record = fixture_run("20261205-010000-beef", fork=[["self-hosted", "gpu"]], fork_node=node)
    return SimpleNamespace(record=record, environ={"MAGI_STAGE_SEATS": seats})


def test_a_seat_job_asks_its_seats_in_its_wave() -> None:
    assert _here_or_hand_off(_seat_job("judge", '["judge-1"]'), "judge-1", "judge") is None  # type: ignore[arg-type,func-returns-value]


@pytest.mark.parametrize(
    ("seat", "node"),
    [
        ("judge-2", "judge"),  # another seat job's seat, side by side
        ("judge-1", "deliberate"),  # its own seat's next wave: the join's, which reads them all
        ("judge-1", "vote"),
    ],
)
def test_a_seat_job_stops_at_any_other_seat_or_wave(seat: str, node: str) -> None:
    with pytest.raises(Stop) as stop:
        _here_or_hand_off(_seat_job("judge", '["judge-1"]'), seat, node)  # type: ignore[arg-type]
    assert stop.value.status is RunStatus.HANDED_OFF


def _pool_job(node: str) -> tuple[SimpleNamespace, list[str]]:
    """A staged job on the pool whose judge-1 now needs the gpu runner's labels (its agent
    passed the seat on to one logged in there, say)."""
    record = fixture_run("20261205-010000-beef")
    gpu = AgentConfig(id="judge-agent-x", kind="command", command=["true"], runner_labels=GPU)
    record.config = record.config.model_copy(update={"agents": [gpu]})
    record.deliberation = [
        Ranking(seat="judge-1", status="ok", ranking=["A"], round=1),
        Ranking(seat="judge-1", status="quota", ranking=[], round=2),
    ]
    saved: list[str] = []
    sctx = SimpleNamespace(
        record=record,
        config=record.config,
        environ={"MAGI_JOB_LABELS": '["self-hosted", "magi"]'},
        lock=threading.Lock(),
        save=lambda: saved.append(node),
        cache={ROUND: 2},  # the deliberation node says which round it asks
    )
    return sctx, saved


@pytest.mark.parametrize("node", ["judge", "deliberate", "vote"])
def test_a_judges_seat_bound_elsewhere_goes_as_a_fork_never_with_the_run(node: str) -> None:
    """Handed on whole, the run would reach a runner that may hold only the panel key: a
    judge's seat goes as a fork of its wave, from a panel, whatever moved it there."""
    sctx, saved = _pool_job(node)
    with pytest.raises(Stop, match="the judges' turn goes to a runner labelled self-hosted, gpu"):
        _here_or_hand_off(sctx, "judge-1", node)  # type: ignore[arg-type]
    r = sctx.record
    assert (r.fork, r.fork_node, r.handoff, saved) == ([GPU], node, [GPU], [node])
    assert r.fork_id
    if node == "deliberate":  # its turn of round 2, the one being asked
        assert (r.fork_seats, r.fork_round) == (["judge-1"], 2)
    else:
        assert (r.fork_seats, r.fork_round) == ([], 0)


def test_an_implementers_seat_bound_elsewhere_is_handed_on() -> None:
    sctx, _ = _pool_job("implement")
    sctx.record.seats["impl-A"].agent = "judge-agent-x"
    with pytest.raises(Stop, match="waiting for a runner labelled"):
        _here_or_hand_off(sctx, "impl-A", "implement")  # type: ignore[arg-type]
    assert (sctx.record.fork, sctx.record.handoff) == ([], [GPU])
