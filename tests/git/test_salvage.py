"""What a killed prep or a lost record left is found from git alone, adopted or removed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from magi.git.repo import Git
from magi.git.salvage import adopt_or_recreate, discard_run, free_branch, worktrees_of

RUN = "20261201-080000-cafe"
pytestmark = pytest.mark.usefixtures("isolated_git")


@pytest.fixture
def git(tmp_path: Path) -> Git:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "i"], cwd=repo, check=True)
    return Git(repo)


def test_a_worktree_prep_made_before_it_was_killed_is_adopted(git: Git, tmp_path: Path) -> None:
    """Made but never recorded: the resume adopts it instead of failing on 'already exists'."""
    path = tmp_path / "wt" / RUN / "B"
    git.worktree_add(path, start="main", branch=f"magi/{RUN}/B")
    (path / "work").write_text("x")
    assert adopt_or_recreate(git, path, branch=f"magi/{RUN}/B", start="main") == "adopted"
    assert (path / "work").exists()


def test_a_half_made_worktree_directory_is_recreated(git: Git, tmp_path: Path) -> None:
    """A directory without .git (killed mid-add) is replaced by a real worktree on the branch."""
    path = tmp_path / "wt" / RUN / "B"
    git.run("branch", f"magi/{RUN}/B")
    path.mkdir(parents=True)
    (path / "partial").write_text("x")
    assert adopt_or_recreate(git, path, branch=f"magi/{RUN}/B", start="main") == "recreated"
    assert (path / ".git").is_file()
    assert not (path / "partial").exists()


def test_a_branch_checked_out_in_a_stray_worktree_can_be_freed(git: Git, tmp_path: Path) -> None:
    """'Cannot delete branch … checked out': the stray worktree goes first."""
    stray = tmp_path / "elsewhere"
    git.worktree_add(stray, start="main", branch=f"magi/{RUN}/A")
    assert free_branch(git, f"magi/{RUN}/A") == [stray]
    git.delete_branch(f"magi/{RUN}/A")
    assert git.branches(f"magi/{RUN}/") == []


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
    assert len(worktrees_of(git, RUN, [root])) == 3
    removed = discard_run(git, RUN, [root])
    assert f"magi/{RUN}/A" in removed
    assert git.branches(f"magi/{RUN}/") == []
    assert not (root / RUN).exists()
    assert git.branches(f"magi/{other}/") == [f"magi/{other}/A"]
    assert (root / other / "A" / ".git").exists()
