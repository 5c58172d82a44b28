"""Park: a run stops at its next node boundary, the seats that were out keep their turn."""

from __future__ import annotations

import signal

import pytest

from graph_helpers import LiveRun, seat_calls, wait_for
from magi.model.run import RunStatus

PERSONAS = {"a1": "right", "a2": "wait-for-unlock:partial"}
JUDGES = {"j1": "evidence"}


@pytest.fixture
def live(tmp_path):
    made = LiveRun(tmp_path, PERSONAS, JUDGES)
    yield made
    made.close()


def _waiting(live) -> None:
    wait_for(lambda: bool(list(live.sd.glob("waiting-*"))), "a seat still out")


def _parked_then_resumed(live, proc) -> None:
    (live.sd / "unlock").write_text("")  # the seat that was out finishes its turn
    out = live.ended(proc, "the park")
    assert proc.returncode == 15, out
    run = live.store.load_run(live.run_id())
    assert run.status is RunStatus.PARKED, run.reason
    assert "parked before verify" in (run.reason or "")
    assert all(c.status == "ok" for c in run.candidates), "a seat out was not kept"
    paid = seat_calls(live.sd)
    done = live.magi("run", "--resume", run.id)
    assert done.returncode == 0, done.stdout + done.stderr
    after = seat_calls(live.sd)
    for c in run.candidates:
        assert after[(c.seat, "implement")] == paid[(c.seat, "implement")] == 1
    assert live.store.load_run(run.id).status is RunStatus.READY


def test_magi_park_stops_a_run_at_its_next_boundary(live):
    proc = live.start()
    _waiting(live)
    run_id = live.run_id()
    parked = live.magi("park", run_id)
    assert parked.returncode == 0, parked.stdout + parked.stderr
    assert "next node boundary" in parked.stdout
    _parked_then_resumed(live, proc)


def test_sigterm_under_park_parks_instead_of_ending_the_seats(live):
    proc = live.start("--park")
    _waiting(live)
    proc.send_signal(signal.SIGTERM)
    wait_for(lambda: live.store.park_request(live.run_id()) is not None, "the park request")
    _parked_then_resumed(live, proc)


def test_parking_a_run_that_is_not_running_says_so(live):
    proc = live.start()
    _waiting(live)
    (live.sd / "unlock").write_text("")
    live.ended(proc, "the run")
    refused = live.magi("park", live.run_id())
    assert refused.returncode == 4
    assert "is not running" in refused.stdout + refused.stderr
