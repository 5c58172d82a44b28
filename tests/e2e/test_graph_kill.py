"""Kills: one process per run, any kill resumes, and no agent of the run is left alive."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from graph_helpers import MAGI, calls, config, seat_calls, start
from magi import engine
from magi.agents import census
from magi.graph import PIPELINE, Loop
from magi.model.run import RunStatus
from magi.state.store import Store

THREE = {"a1": "right", "a2": "partial", "a3": "wrong"}
SPLIT = {"j1": "evidence", "j2": "minimal", "j3": "evidence"}  # split: deliberation, vote


def _nothing_alive(home: Path, run_id: str) -> None:
    """The census after a kill: no process of the run runs, none is recorded as running."""
    assert census.marked(run_id, run_dir=str(Store(home).run_dir(run_id))) == []


def test_resume_of_a_live_run_is_refused_and_sigterm_leaves_it_resumable(live_run):
    """--resume while the run is alive names its pid; SIGTERM: 143, agents ended, resumable."""
    live = live_run({"a1": "right", "a2": "hang-once:partial"}, {"j1": "evidence"})
    proc = live.start()
    hung = live.hung("hung-*")
    run_id = live.run_id()
    refused = live.magi("run", "--resume", run_id)
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert f"pid {proc.pid}" in refused.stdout + refused.stderr
    before = seat_calls(live.sd)
    proc.send_signal(signal.SIGTERM)
    out = live.ended(proc, "SIGTERM")
    assert proc.returncode == 143, out
    assert not census.alive(hung, None), "SIGTERM left the agent running"
    _nothing_alive(live.home, run_id)
    run = Store(live.home).load_run(run_id)
    assert run.status is RunStatus.INTERRUPTED
    assert run.processes == []
    done = live.magi("run", "--resume", run_id)
    assert done.returncode == 0, done.stdout + done.stderr
    after = seat_calls(live.sd)
    finished = next(c.seat for c in run.candidates if c.status == "ok")
    assert after[(finished, "implement")] == before[(finished, "implement")] == 1
    _nothing_alive(live.home, run_id)


def test_agents_a_killed_magi_left_running_are_ended_before_the_resume_starts_seats(live_run):
    """kill -9: the hung agent runs on, recorded; the resume ends it first, then finishes."""
    live = live_run({"a1": "right", "a2": "hang-once:partial"}, {"j1": "evidence"})
    proc = live.start()
    hung = live.hung("hung-*")
    os.killpg(proc.pid, signal.SIGKILL)  # magi's own group; the agent is in a session of its own
    live.ended(proc, "SIGKILL")
    run_id = live.run_id()
    assert census.alive(hung, None), "the orphaned agent should still be running"
    recorded = Store(live.home).load_run(run_id).processes
    assert hung in {p.pid for p in recorded}, "the record names what was alive"
    try:
        done = live.magi("run", "--resume", run_id)
        assert done.returncode == 0, done.stdout + done.stderr
        assert not census.alive(hung, None)
        run = Store(live.home).load_run(run_id)
        assert any("still alive from before" in e.message for e in run.events)
    finally:
        if census.alive(hung, None):
            os.kill(hung, signal.SIGKILL)
    _nothing_alive(live.home, run_id)


@pytest.mark.parametrize("node", ["judge", "deliberate", "vote"])
def test_sigterm_inside_a_judging_node_resumes_without_paying_finished_seats(live_run, node):
    """A judge hangs in <node>; SIGTERM; nothing of the run alive; resume asks only it again."""
    judges = {**SPLIT, "j1": f"hang-at-{node}:evidence"}
    live = live_run(THREE, judges)
    proc = live.start()
    hung = live.hung(f"hung-*-{node}")
    proc.send_signal(signal.SIGTERM)
    out = live.ended(proc, "SIGTERM")
    assert proc.returncode == 143, out
    run_id = live.run_id()
    assert not census.alive(hung, None)
    _nothing_alive(live.home, run_id)
    before = seat_calls(live.sd)
    killed = Store(live.home).load_run(run_id)
    answered = [(t.seat, "judge") for t in killed.judgements if t.status == "ok"]
    answered += [(v.seat, "vote") for v in killed.votes if v.status == "ok"]
    done = live.magi("run", "--resume", run_id)
    assert done.returncode == 0, done.stdout + done.stderr
    after = seat_calls(live.sd)
    run = Store(live.home).load_run(run_id)
    assert run.status is RunStatus.READY
    for c in run.candidates:
        assert after[(c.seat, "implement")] == 1, "an implementer was paid twice"
    hung_seat = next(j.seat for j in run.judges if run.agent_of(j.seat) == "j1")
    for key in answered:
        assert after[key] == before[key], f"{key} had answered and was asked again"
    assert after[(hung_seat, node)] == before[(hung_seat, node)] + 1
    _nothing_alive(live.home, run_id)


@pytest.mark.parametrize("k", range(1, len(PIPELINE)))
def test_a_kill_at_each_node_boundary_resumes_paying_each_seat_once(env, k):
    """Killed right after node k saved: the resume asks no seat that had answered."""
    repo, home, sd = env
    cfg = config(sd, THREE, judges=SPLIT)
    run = start(repo, home, cfg, seed=3, pipeline=PIPELINE[:k])
    stage = PIPELINE[k - 1]
    last = stage.nodes[-1] if isinstance(stage, Loop) else stage
    run.status = last.STATUS  # what a kill -9 after the node's last save leaves
    Store(home).save(run)
    before = seat_calls(sd)
    done = engine.resume(Store(home), run.id, environ=dict(os.environ)).run
    assert done.status is RunStatus.READY, done.reason
    after = seat_calls(sd)
    for key, n in after.items():
        assert n == 1, f"{key} was asked {n} times (before the kill: {before[key]})"
    _nothing_alive(home, run.id)


def test_a_prep_killed_mid_worktree_add_resumes(env):
    """A clone made but never recorded, another half made: the resume adopts and remakes."""
    repo, home, sd = env
    cfg = config(sd, {"a1": "right", "a2": "wrong"}, judges={"j1": "evidence"})
    run = start(repo, home, cfg, seed=3, pipeline=PIPELINE[:1])
    a, b = run.candidates
    b.worktree = None  # killed between making the clone and the save
    shutil.rmtree(Path(a.worktree) / ".git")  # and A's clone cut short
    run.status = RunStatus.PREPARING
    Store(home).save(run)
    done = engine.resume(Store(home), run.id, environ=dict(os.environ)).run
    assert done.status is RunStatus.READY, done.reason
    assert any("earlier prep adopted" in e.message for e in done.events)
    assert any("earlier prep recreated" in e.message for e in done.events)


def test_a_record_missing_its_labels_is_refused_before_anything_is_spent(env):
    """No judge re-invoked, and fold keeps every branch of the unfinished run."""
    repo, home, sd = env
    cfg = config(sd, {"a1": "right", "a2": "wrong"}, judges={"j1": "evidence"})
    run = start(repo, home, cfg, seed=3, pipeline=PIPELINE[:3])
    path = Store(home).run_dir(run.id) / "run.json"
    data = json.loads(path.read_text())
    data["status"] = "judging"
    del data["labels"]
    path.write_text(json.dumps(data))
    before = len(calls(sd))
    with pytest.raises(Exception, match="labels"):
        engine.resume(Store(home), run.id, environ=dict(os.environ))
    assert len(calls(sd)) == before
    (done,) = engine.fold(Store(home), run.id, all_runs=False, environ=dict(os.environ))
    # Fold says what it kept and why, branch by branch (it said "0 branches" and no more).
    assert sorted(k.split(":")[0] for k in done.kept) == sorted(c.branch for c in run.candidates)
    assert all("can resume" in k and "--force" in k for k in done.kept)
    for c in run.candidates:
        kept = subprocess.run(
            ["git", "rev-parse", "--verify", c.branch], cwd=repo, capture_output=True
        )
        assert kept.returncode == 0, f"fold deleted {c.branch}"


def test_fold_force_removes_a_run_whose_record_is_unreadable(env):
    """By id: its worktrees and branches go; without --force the skip exits non-zero."""
    repo, home, sd = env
    cfg = config(sd, {"a1": "right", "a2": "wrong"}, judges={"j1": "evidence"})
    run = start(repo, home, cfg, seed=3, pipeline=PIPELINE[:1])
    (Store(home).run_dir(run.id) / "run.json").write_text("{not json")
    env_ = {**os.environ, "MAGI_HOME": str(home)}
    skip = subprocess.run(
        [*MAGI, "fold", run.id], cwd=repo, env=env_, capture_output=True, text=True, timeout=300
    )
    assert skip.returncode == 1
    assert "--force" in skip.stderr
    forced = subprocess.run(
        [*MAGI, "fold", "--force", run.id],
        cwd=repo,
        env=env_,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert forced.returncode == 0, forced.stderr
    branches = subprocess.run(
        ["git", "branch", "--list", f"magi/{run.id}/*"], cwd=repo, capture_output=True, text=True
    ).stdout
    assert branches.strip() == ""
    assert all(not Path(c.worktree or "/nonexistent").exists() for c in run.candidates)


def test_a_change_to_the_users_checkout_before_a_kill_is_said_on_resume(live_run, tmp_path):
    """Unjailed, a seat writes into the user's checkout and magi is killed before the wave
    ends: the resume compares with the baseline the wave left on disk, not with a new look
    that would take the seat's doing as the user's, and says the kill may hide who did it."""
    repo = tmp_path / "repo"  # where LiveRun puts its repository
    scripted = " ".join(MAGI[:1]) + " -m magi.demo.scripted hang-once:partial"
    drop = f'sh:echo pwned > "{repo}/dropped.txt" && exec {scripted}'
    live = live_run({"a1": "right", "a2": drop}, {"j1": "evidence"})
    proc = live.start()
    live.hung("hung-*")
    os.killpg(proc.pid, signal.SIGKILL)
    live.ended(proc, "SIGKILL")
    run_id = live.run_id()
    assert (live.store.run_dir(run_id) / "guard-checkout.json").is_file()
    done = live.magi("run", "--resume", run_id)
    assert done.returncode == 0, done.stdout + done.stderr
    run = Store(live.home).load_run(run_id)
    (said,) = [e.message for e in run.events if "YOUR CHECKOUT" in e.message]
    assert "dropped.txt" in said
    assert "since the run was stopped" in said
    assert not (live.store.run_dir(run_id) / "guard-checkout.json").exists()
    _nothing_alive(live.home, run_id)
