"""kill -9 inside prep, at every instant of making a candidate's clone: resume, then fold.

Each case is a real ``magi run`` that sends itself SIGKILL at one failpoint
(``magi.state.failpoint``) while prep makes the clones in parallel, then ``magi run
--resume`` to the same winner an unkilled run with the same seed and agents reaches, then
``magi fold`` leaving nothing of the run but the winner's branch.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from magi.model.run import RunStatus
from magi.state.failpoint import ENV

PERSONAS = {"a1": "right", "a2": "partial"}
JUDGES = {"j1": "evidence"}
# The instants the clones-era regression broke at (a git dir without alternates, a clone
# without its checkout), the one after the rename, before the record says so, and the one
# after prep's one `git init` (the first clone's, which the others copy), before anything
# else of any clone is written.
STEPS = ("clone:alternates:B", "clone:checkout:B", "clone:renamed:B", "clone:init:A")


def _branches(repo, run_id: str) -> list[str]:
    out = subprocess.run(
        ["git", "branch", "--list", "--format=%(refname:short)", f"magi/{run_id}/*"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(out.split())


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_inside_a_clone_resumes_to_the_same_winner_and_folds_clean(live_run, step):
    live = live_run(PERSONAS, JUDGES)
    live.env[ENV] = step
    proc = live.start(seed=3)
    out = live.ended(proc, f"the failpoint {step}")
    assert proc.returncode == -9, out
    run_id = live.run_id()
    assert live.store.load_run(run_id).status is RunStatus.PREPARING
    del live.env[ENV]
    done = live.magi("run", "--resume", run_id)
    assert done.returncode == 0, done.stdout + done.stderr
    run = live.store.load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    made = Path(run.worktree_root or "")
    assert not [p.name for p in made.iterdir() if p.name.endswith(".partial")], "half-made left"
    assert run.tally is not None
    # The same winner an unkilled run of the same seed picks: "right" is a1's persona.
    assert run.agent_of(run.candidate(run.tally.winner).seat) == "a1"
    folded = live.magi("fold", run_id)
    assert folded.returncode == 0, folded.stdout + folded.stderr
    assert _branches(live.repo, run_id) == [f"magi/{run_id}/{run.tally.winner}"]
    root = live.store.load_run(run_id).worktree_root
    assert root is None or not Path(root).exists(), "fold left trees"


def test_fold_after_a_kill_inside_prep_removes_all_of_it_and_says_what_it_kept(live_run):
    """No resume: fold removes the half-made clone under its temporary name and the rest,
    and names each branch it keeps, with why."""
    live = live_run(PERSONAS, JUDGES)
    live.env[ENV] = "clone:ref:B"
    proc = live.start(seed=3)
    live.ended(proc, "the failpoint clone:ref:B")
    assert proc.returncode == -9
    run_id = live.run_id()
    del live.env[ENV]
    root = Path(live.store.load_run(run_id).worktree_root or "")
    assert (root / ".B.partial").is_dir()  # what the kill left, under its temporary name
    assert not (root / "B").exists()
    folded = live.magi("fold", run_id)
    assert folded.returncode == 0, folded.stdout + folded.stderr
    assert not root.exists()
    assert _branches(live.repo, run_id) == []
    assert "removed" in folded.stdout
