"""A review killed with SIGKILL mid-round resumes: ids stable, finished reviewers not re-asked."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from graph_helpers import SCRIPTED, calls, git_out, scratch_repo, wait_for
from magi.demo.repo import PARTIAL
from magi.model.run import RunStatus
from magi.state.store import Store

CONFIG = """
[[agents]]
id = "fixer-a"
kind = "command"
command = {fixer}
env = {{ MAGI_SCRIPTED_DIR = "{sd}" }}

[[agents]]
id = "rev-b"
kind = "command"
command = {blocker}
env = {{ MAGI_SCRIPTED_DIR = "{sd}" }}

[[agents]]
id = "rev-c"
kind = "command"
command = {hangs}
env = {{ MAGI_SCRIPTED_DIR = "{sd}" }}

[roles]
implementers = ["fixer-a"]
reviewers = ["rev-b", "rev-c"]

[graph]
reviewers = 2
review_rounds = 3

# The test follows agents by pid and reads their log in a temp dir: unjailed, as the
# resume tests are (the jail's own suite covers what a jail changes).
[sandbox]
mode = "off"
"""


def test_kill_mid_review_then_resume_keeps_ids_and_pays_no_seat_twice(tmp_path: Path) -> None:
    """review-1 answered, review-2 hangs; SIGKILL; --resume asks only review-2 in round 1."""
    sd = tmp_path / "scripted"
    sd.mkdir()
    repo, home = scratch_repo(tmp_path), tmp_path / "home"
    git_out(repo, "checkout", "-q", "-b", "feature")
    (repo / "textstats.py").write_text(PARTIAL)
    git_out(repo, "-c", "user.name=d", "-c", "user.email=d@x", "commit", "-qam", "Split better")
    git_out(repo, "checkout", "-q", "main")
    cfg = tmp_path / "magi.toml"
    cfg.write_text(
        CONFIG.format(
            sd=sd,
            fixer=json.dumps([*SCRIPTED, "right"]),
            blocker=json.dumps([*SCRIPTED, "evidence+blocker"]),
            hangs=json.dumps([*SCRIPTED, "hang-once:evidence"]),
        )
    )
    env = {**os.environ, "MAGI_HOME": str(home), "MAGI_CONFIG_DIR": str(tmp_path / "nocfg")}
    magi = [sys.executable, "-m", "magi"]
    proc = subprocess.Popen(
        [*magi, "review", "feature", "--base", "main", "--config", str(cfg)],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    store = Store(home)

    def first_answered() -> bool:
        if not (sd / "hung-review-2").exists() or store.latest() is None:
            return False
        run = store.load_run(store.latest() or "")
        rv = run.review
        return rv is not None and bool(rv.rounds) and rv.rounds[0].seats[0].status == "ok"

    try:
        wait_for(first_answered, "review-1 recorded while review-2 hangs")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        with contextlib.suppress(ProcessLookupError, FileNotFoundError):
            os.kill(int((sd / "hung-review-2").read_text()), signal.SIGKILL)
    run_id = store.latest() or ""
    killed = store.load_run(run_id)
    assert killed.status is RunStatus.REVIEWING
    assert killed.review is not None
    ids_before = [f.id for f in killed.review.rounds[0].findings]
    assert ids_before == ["R1-1-1", "R1-1-2"]

    res = subprocess.run(
        [*magi, "run", "--resume", run_id[-4:]],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr + res.stdout
    done = store.load_run(run_id)
    assert done.status is RunStatus.READY, done.reason
    assert done.review is not None
    assert [f.id for f in done.review.rounds[0].findings] == ids_before
    rounds = len(done.review.rounds)
    counts = Counter(c["seat"] for c in calls(sd) if c["node"] == "review")
    assert counts["review-1"] == rounds, "a finished reviewer seat was asked again"
    assert counts["review-2"] == rounds + 1  # the hung call, then once per round
    assert not [c for c in calls(sd) if c["node"] == "implement"]
