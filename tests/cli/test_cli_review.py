"""magi review, magi fix and magi stats from the command line, on a real repo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph_helpers import SCRIPTED, git_out, scratch_repo
from magi.demo.repo import RIGHT
from magi.model.run import RunStatus
from magi.state.store import Store
from magi.testing.cli import invoke

CONFIG = """
[[agents]]
id = "fixer-a"
kind = "command"
command = {fixer}

[[agents]]
id = "rev-b"
kind = "command"
command = {reviewer}

[roles]
implementers = ["fixer-a"]
reviewers = ["rev-b"]

[graph]
reviewers = 1
review_rounds = {rounds}

[verify]
e2e = ["python3 -m unittest -q"]
"""


def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reviewer: str, rounds: int) -> Path:
    repo = scratch_repo(tmp_path)
    git_out(repo, "checkout", "-q", "-b", "feature")
    (repo / "textstats.py").write_text(RIGHT)
    git_out(repo, "-c", "user.name=d", "-c", "user.email=d@x", "commit", "-qam", "Fix splitting")
    git_out(repo, "checkout", "-q", "main")
    (repo / "magi.toml").write_text(
        CONFIG.format(
            fixer=json.dumps([*SCRIPTED, "right"]),
            reviewer=json.dumps([*SCRIPTED, f"evidence+{reviewer}"]),
            rounds=rounds,
        )
    )
    git_out(repo, "add", "magi.toml")
    git_out(repo, "-c", "user.name=d", "-c", "user.email=d@x", "commit", "-qm", "config")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MAGI_CONFIG_DIR", str(tmp_path / "no-user-config"))
    return repo


def test_review_an_existing_branch_is_ready(tmp_path, monkeypatch):
    """One branch, uncontested: reviewed, e2e green, gated, exit 0; no competition ran."""
    setup(tmp_path, monkeypatch, "clean", 2)
    res = invoke(["review", "feature", "--base", "main"])
    assert res.exit_code == 0, res.output
    store = Store(tmp_path / "home")
    run = store.load_run(store.latest() or "")
    assert run.status is RunStatus.READY
    assert [c.branch for c in run.candidates] == ["feature"]
    assert run.tally is not None
    assert run.tally.uncontested
    assert not [t for t in run.turns if t.node in ("implement", "judge", "vote")]
    assert run.review is not None
    assert run.review.outcome == "clean"
    assert "review, gate and merge" in res.stdout


def test_blocked_review_exits_10_and_fix_is_recorded_apart(tmp_path, monkeypatch):
    """Out of rounds: exit 10. `magi fix` then lands in operator_fixes, rounds untouched."""
    setup(tmp_path, monkeypatch, "always", 1)
    res = invoke(["review", "feature", "--base", "main"])
    assert res.exit_code == 10, res.output
    store = Store(tmp_path / "home")
    run = store.load_run(store.latest() or "")
    rounds_before = run.review.model_dump() if run.review else None
    res = invoke(["fix", run.id[-4:], "R1-1-1"])
    assert res.exit_code == 0, res.output
    assert "new tree" in res.stdout
    after = store.load_run(run.id)
    assert (after.review.model_dump() if after.review else None) == rounds_before
    (op,) = after.operator_fixes
    assert [f.id for f in op.findings] == ["R1-1-1"]
    assert op.findings[0].severity == "blocking"  # the reviewer's own severity, verbatim
    assert op.report.adopted == ["R1-1-1"]
    assert op.report.progressed
    bad = invoke(["fix", run.id[-4:], "R9-9-9"])
    assert bad.exit_code == 2
    assert "R1-1-1" in bad.stderr


def test_stats_json_over_stored_runs(tmp_path, monkeypatch):
    """stats --json counts the stored runs and their review figures."""
    setup(tmp_path, monkeypatch, "always", 1)
    assert invoke(["review", "feature", "--base", "main"]).exit_code == 10
    res = invoke(["stats", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["runs"] == 1
    assert data["review"]["findings_per_round"]["findings"] == 1
    assert data["review"]["precision"]["rev-b"] == {"value": 0.0, "count": 0, "total": 1, "runs": 1}
    assert "reviewer precision" in invoke(["stats"]).stdout


def test_merge_mode_pr_is_refused_before_anything_is_spent(tmp_path, monkeypatch):
    """merge.mode = pr: a clear error at preflight, not a silent none."""
    repo = setup(tmp_path, monkeypatch, "clean", 1)
    (repo / "magi.toml").write_text((repo / "magi.toml").read_text() + '\n[merge]\nmode = "pr"\n')
    res = invoke(["review", "feature", "--base", "main"])
    assert res.exit_code == 3
    assert "merge.mode = 'pr'" in res.stderr
    assert not (tmp_path / "home" / "runs").exists() or not list(
        (tmp_path / "home" / "runs").iterdir()
    )


def test_review_of_a_branch_checked_out_by_the_user_fixes_it_in_place(tmp_path, monkeypatch):
    """The user's own worktree of the branch is where the fixer works: never removed or
    replaced by a clone of magi's, and the fix lands on the branch itself."""
    repo = setup(tmp_path, monkeypatch, "always", 2)
    mine = tmp_path / "my-feature"
    git_out(repo, "worktree", "add", "-q", str(mine), "feature")
    res = invoke(["review", "feature", "--base", "main"])
    assert res.exit_code == 10, res.output  # blocked: the reviewer always finds something
    store = Store(tmp_path / "home")
    run = store.load_run(store.latest() or "")
    assert run.candidates[0].worktree == str(mine)
    assert run.review is not None
    fix = run.review.rounds[0].fix
    assert fix is not None
    assert fix.progressed
    assert (mine / ".git").is_file()  # still the user's linked worktree
    assert git_out(repo, "rev-parse", "feature").strip() == fix.head_after
    assert git_out(mine, "rev-parse", "HEAD").strip() == fix.head_after


def test_fold_of_a_review_run_never_touches_the_users_checkout(tmp_path, monkeypatch):
    """`magi review` works in the user's own tree (here the repository root, the branch being
    checked out): `magi fold` removes what magi made and leaves that tree and its branch."""
    from graph_helpers import git_out
    from magi.state.store import Store

    repo = setup(tmp_path, monkeypatch, "clean", 2)
    git_out(repo, "checkout", "-q", "feature")
    git_out(repo, "checkout", "main", "--", "magi.toml")
    git_out(repo, "-c", "user.name=d", "-c", "user.email=d@x", "commit", "-qm", "cfg")
    invoke(["review", "--base", "main"])
    store = Store(tmp_path / "home")
    run = store.load_run(store.latest() or "")
    assert run.candidates[0].worktree is not None
    folded = invoke(["fold", run.id])
    assert folded.exit_code == 0, folded.output
    assert (repo / ".git").is_dir(), "fold deleted the user's repository"
    assert (repo / "magi.toml").is_file()
    assert git_out(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "feature"
    assert git_out(repo, "branch", "--list", "feature").strip()
