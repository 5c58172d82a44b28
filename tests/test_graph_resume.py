"""Resume: a stalled panel re-asks only the missing seats; a killed run pays nothing twice."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from graph_helpers import SCRIPTED, calls, config, scratch_repo, start
from magi import engine
from magi.state.model import RunStatus
from magi.state.store import Store

THREE = {"a1": "right", "a2": "partial", "a3": "wrong"}


def seat_calls(sd: Path) -> Counter[tuple[str, str]]:
    return Counter((c["seat"], c["node"]) for c in calls(sd))


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


def _wait_for(predicate, what: str, deadline_s: float = 120.0) -> None:
    """Poll a condition until it holds; fail (never hang) past the deadline."""
    end = time.monotonic() + deadline_s
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _toml_config(sd: Path, personas: dict[str, str], judges: dict[str, str]) -> str:
    lines = []
    for aid, persona in {**personas, **judges}.items():
        cmd = json.dumps([*SCRIPTED, persona])
        lines += [
            "[[agents]]",
            f'id = "{aid}"',
            'kind = "command"',
            f"command = {cmd}",
            f'env = {{ MAGI_SCRIPTED_DIR = "{sd}" }}',
            "",
        ]
    lines += [
        "[roles]",
        f"implementers = {json.dumps(list(personas))}",
        f"judges = {json.dumps(list(judges))}",
        f"reviewers = {json.dumps(list(judges)[:2])}",  # never a hanging implementer
        "",
        "[graph]",
        f"candidates = {len(personas)}",
        f"judges = {len(judges)}",
        "max_parallel = 3",
        "",
        "[verify]",
        'e2e = ["python3 -m unittest -q"]',
        "",
        # These tests find hung agents by the pid they wrote; a jailed agent has its own pid
        # namespace, so its pid means nothing out here. The jail has tests of its own.
        "[sandbox]",
        'mode = "off"',
    ]
    return "\n".join(lines) + "\n"


def test_a_run_killed_mid_wave_resumes_without_paying_finished_seats_again(tmp_path):
    """SIGKILL magi while one implementer hangs; --resume re-runs only that seat, same winner."""
    sd = tmp_path / "scripted"
    sd.mkdir()
    repo, home = scratch_repo(tmp_path), tmp_path / "home"
    personas = {"a1": "right", "a2": "hang-once:partial", "a3": "wrong"}
    judges = {"j1": "evidence", "j2": "evidence", "j3": "minimal"}
    cfg_file = tmp_path / "magi.toml"
    cfg_file.write_text(_toml_config(sd, personas, judges))
    env = {**os.environ, "MAGI_HOME": str(home), "MAGI_CONFIG_DIR": str(tmp_path / "nocfg")}
    magi = [sys.executable, "-m", "magi"]
    proc = subprocess.Popen(
        [*magi, "run", "--config", str(cfg_file), "--seed", "3", "fix textstats"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    store = Store(home)

    def others_recorded() -> bool:
        if not list(sd.glob("hung-*")) or store.latest() is None:
            return False
        run = store.load(store.latest() or "")
        return sum(c.status == "ok" for c in run.candidates) == 2

    try:
        _wait_for(others_recorded, "two implementers recorded while the third hangs")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for marker in sd.glob("hung-*"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(marker.read_text()), signal.SIGKILL)
    run_id = store.latest()
    assert run_id is not None
    killed = store.load(run_id)
    assert killed.status is RunStatus.IMPLEMENTING

    res = subprocess.run(
        [*magi, "run", "--resume", run_id[-4:]],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr + res.stdout
    done = store.load(run_id)
    assert done.status is RunStatus.READY
    assert done.author(done.tally.winner) == "a1"
    counts = seat_calls(sd)
    hung_seat = next(c.seat for c in done.candidates if done.author(c.label) == "a2")
    for c in done.candidates:
        assert counts[(c.seat, "implement")] == (2 if c.seat == hung_seat else 1), c.seat
    assert all(counts[(j.seat, "judge")] == 1 for j in done.judges)


def test_ctrl_c_ends_the_seats_that_are_out_and_leaves_the_run_resumable(tmp_path):
    """SIGINT: the hanging agent is killed at once, its seat stays pending, --resume finishes."""
    sd = tmp_path / "scripted"
    sd.mkdir()
    repo, home = scratch_repo(tmp_path), tmp_path / "home"
    personas = {"a1": "right", "a2": "hang-once:partial"}
    cfg_file = tmp_path / "magi.toml"
    cfg_file.write_text(_toml_config(sd, personas, {"j1": "evidence", "j2": "evidence"}))
    env = {**os.environ, "MAGI_HOME": str(home), "MAGI_CONFIG_DIR": str(tmp_path / "nocfg")}
    magi = [sys.executable, "-m", "magi"]
    proc = subprocess.Popen(
        [*magi, "run", "--config", str(cfg_file), "fix textstats"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    _wait_for(lambda: bool(list(sd.glob("hung-*"))), "the hanging implementer to start")
    hung_pid = int(next(sd.glob("hung-*")).read_text())
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "magi run --resume" in out
    _wait_for(lambda: _gone(hung_pid), "the interrupted agent to be gone")
    store = Store(home)
    run = store.load(store.latest() or "")
    hung = next(c for c in run.candidates if run.author(c.label) == "a2")
    assert hung.status == "pending", "an interrupted seat is not a failed seat"
    res = subprocess.run(
        [*magi, "run", "--resume", run.id], cwd=repo, env=env, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert store.load(run.id).status is RunStatus.READY


def _gone(pid: int) -> bool:
    """Gone, or a zombie nobody reaps (this sandbox's PID 1 does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True
