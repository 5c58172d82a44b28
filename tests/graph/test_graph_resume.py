"""Resume: a stalled panel re-asks only the missing seats; a killed run pays nothing twice."""

from __future__ import annotations

import os
import signal

from graph_helpers import config, scratch_repo, seat_calls, start, wait_for
from magi import engine
from magi.model.run import RunStatus
from magi.state.store import Store
from magi.testing.standins import process_gone

THREE = {"a1": "right", "a2": "partial", "a3": "wrong"}


def test_quorum_lost_to_quota_stalls_and_resume_asks_only_the_missing_seats(tmp_path):
    """Two judges rate-limited: stalled, not failed; resumed, finished seats are not asked again."""
    sd = tmp_path / "scripted"
    sd.mkdir()
    repo, home = scratch_repo(tmp_path), tmp_path / "home"
    judges = {
        "j1": "evidence",
        "j2": "quota-until-unlock:evidence",
        "j3": "quota-until-unlock:minimal",
    }
    cfg = config(sd, THREE, judges=judges, graph={"failover": False})
    run = start(repo, home, cfg)
    assert run.status is RunStatus.STALLED, run.reason
    assert run.tally is not None
    assert not run.tally.quorum
    assert [j.status for j in run.judgements] == ["ok", "quota", "quota"]
    before = seat_calls(sd)

    (sd / "unlock").write_text("")
    store = Store(home)
    done = engine.resume(store, run.id, environ=dict(os.environ)).run
    assert done.status is RunStatus.READY, done.reason
    assert done.author(done.tally.winner) == "a1"
    after = seat_calls(sd)
    for label in done.labels:
        assert after[(f"impl-{label}", "implement")] == 1, "an implementer was paid twice"
    assert after[("judge-1", "judge")] == before[("judge-1", "judge")] == 1
    assert after[("judge-2", "judge")] == before[("judge-2", "judge")] + 1
    assert done.tally.answered == 3


def test_a_run_killed_mid_wave_resumes_without_paying_finished_seats_again(live_run):
    """SIGKILL magi while one implementer hangs; --resume re-runs only that seat, same winner."""
    personas = {"a1": "right", "a2": "hang-once:partial", "a3": "wrong"}
    live = live_run(personas, {"j1": "evidence", "j2": "evidence", "j3": "minimal"})
    proc = live.start()
    store, sd = live.store, live.sd

    def others_recorded() -> bool:
        if not list(sd.glob("hung-*")) or store.latest() is None:
            return False
        run = store.load(store.latest() or "")
        return sum(c.status == "ok" for c in run.candidates) == 2

    wait_for(others_recorded, "two implementers recorded while the third hangs")
    os.killpg(proc.pid, signal.SIGKILL)
    live.ended(proc, "SIGKILL")
    live.kill_hung()
    run_id = live.run_id()
    killed = store.load(run_id)
    assert killed.status is RunStatus.IMPLEMENTING

    res = live.magi("run", "--resume", run_id[-4:])
    assert res.returncode == 0, res.stderr + res.stdout
    done = store.load(run_id)
    assert done.status is RunStatus.READY
    assert done.author(done.tally.winner) == "a1"
    counts = seat_calls(sd)
    hung_seat = next(c.seat for c in done.candidates if done.author(c.label) == "a2")
    for c in done.candidates:
        assert counts[(c.seat, "implement")] == (2 if c.seat == hung_seat else 1), c.seat
    assert all(counts[(j.seat, "judge")] == 1 for j in done.judges)


def test_ctrl_c_ends_the_seats_that_are_out_and_leaves_the_run_resumable(live_run):
    """SIGINT: the hanging agent is killed at once, its seat stays pending, --resume finishes."""
    live = live_run(
        {"a1": "right", "a2": "hang-once:partial"}, {"j1": "evidence", "j2": "evidence"}
    )
    proc = live.start(seed=None)
    hung_pid = live.hung("hung-*")
    proc.send_signal(signal.SIGINT)
    out = live.ended(proc, "SIGINT")
    assert proc.returncode == 130
    assert "magi run --resume" in out
    wait_for(lambda: process_gone(hung_pid), "the interrupted agent to be gone")
    run = live.store.load(live.run_id())
    hung = next(c for c in run.candidates if run.author(c.label) == "a2")
    assert hung.status == "pending", "an interrupted seat is not a failed seat"
    res = live.magi("run", "--resume", run.id)
    assert res.returncode == 0, res.stdout + res.stderr
    assert live.store.load(run.id).status is RunStatus.READY
