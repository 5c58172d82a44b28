"""What a killed prep or a lost record left is found from git alone, adopted or removed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from magi.git.repo import Git
from magi.git.salvage import discard_run, free_branch, worktrees_of

RUN = "20261201-080000-cafe"
pytestmark = pytest.mark.usefixtures("isolated_git")


@pytest.fixture
def git(tmp_path: Path) -> Git:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "i"], cwd=repo, check=True)
    return Git(repo)


def test_a_branch_checked_out_in_a_stray_worktree_can_be_freed(git: Git, tmp_path: Path) -> None:
    """'Cannot delete branch … checked out': a stray worktree under magi's folder goes first;
    one of the user's elsewhere is left with what it holds, and named."""
    root = tmp_path / "wt"
    stray = root / RUN / "A"
    git.worktree_add(stray, start="main", branch=f"magi/{RUN}/A")
    assert free_branch(git, f"magi/{RUN}/A", root) == []
    assert not stray.exists()
    git.delete_branch(f"magi/{RUN}/A")
    mine = tmp_path / "look"
    git.worktree_add(mine, start="main", branch=f"magi/{RUN}/B")
    (mine / "notes.txt").write_text("mine, uncommitted\n")
    assert free_branch(git, f"magi/{RUN}/B", root) == [mine]
    assert (mine / "notes.txt").read_text() == "mine, uncommitted\n"
    assert git.branches(f"magi/{RUN}/") == [f"magi/{RUN}/B"]
    # The main checkout on a run's branch is the user's too: named, never removed.
    git.run("checkout", "-q", "-b", f"magi/{RUN}/C")
    assert free_branch(git, f"magi/{RUN}/C", root) == [git.root]
    assert git.root.is_dir()


def test_discard_run_removes_everything_of_the_run_and_nothing_else(
    git: Git, tmp_path: Path
) -> None:
    """By id alone (no record): its worktrees, its branches; another run's stay."""
    root = tmp_path / "wt"
    for label in "AB":
        git.worktree_add(root / RUN / label, start="main", branch=f"magi/{RUN}/{label}")
    git.worktree_add(root / RUN / "judge-1", start="main")
    other = "20261201-080000-0001"
    git.worktree_add(root / other / "A", start="main", branch=f"magi/{other}/A")
    mine = tmp_path / "look"  # the user's, reading a candidate: never the run's
    git.run("branch", f"magi/{RUN}/C")
    git.worktree_add(mine, start=f"magi/{RUN}/C")
    git.run("checkout", "-q", f"magi/{RUN}/C", cwd=mine)
    (mine / "notes.txt").write_text("mine\n")
    # The index copy of a turn a kill cut off (``warm_index``): magi's, no .git of its own.
    (root / RUN / ".A.warm" / "git").mkdir(parents=True)
    (root / RUN / ".A.warm" / "index").write_bytes(b"DIRC")
    assert len(worktrees_of(git, RUN, [root])) == 3
    removed, kept = discard_run(git, RUN, [root])
    assert f"magi/{RUN}/A" in removed
    assert git.branches(f"magi/{RUN}/") == [f"magi/{RUN}/C"]
    assert kept == [f"magi/{RUN}/C: checked out in your worktree {mine} (left as it is)"]
    assert (mine / "notes.txt").exists()
    assert not (root / RUN).exists()
    assert git.branches(f"magi/{other}/") == [f"magi/{other}/A"]
    assert (root / other / "A" / ".git").exists()
