"""Trusted checkouts: a clean one of a recorded head, the user's own, and a damaged one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from git_helpers import one_commit_repo, sh
from magi.git.checkout import MainStatus, clean_worktree, damage, dirty
from magi.git.repo import Git

BRANCH = "magi/r1/A"
pytestmark = pytest.mark.usefixtures("isolated_git")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return one_commit_repo(tmp_path / "repo", {"check.sh": "exit 0\n"})


@pytest.fixture
def wt(repo: Path, tmp_path: Path) -> Path:
    path = tmp_path / "wt" / "A"
    Git(repo).worktree_add(path, start="main", branch=BRANCH)
    return path


def test_a_clean_worktree_holds_the_commit_and_nothing_planted(repo: Path, wt: Path) -> None:
    """An uncommitted script planted in the candidate's tree is not in the clean checkout."""
    git = Git(repo)
    (wt / "check.sh").write_text("exit 1\n")  # another seat's sabotage, never committed
    (wt / "planted").write_text("x")
    head = git.head(wt)
    with clean_worktree(git, head, wt.parent / "verify-A") as clean:
        assert (clean / "check.sh").read_text() == "exit 0\n"
        assert not (clean / "planted").exists()
        assert git.head(clean) == head
    assert not (wt.parent / "verify-A").exists()
    assert sorted(dirty(git, wt)) == [" M check.sh", "?? planted"]


def test_a_clean_worktree_replaces_what_a_killed_run_left(repo: Path, wt: Path) -> None:
    """A leftover directory (and registration) at the path is removed, not tripped over."""
    git = Git(repo)
    left = wt.parent / "verify-A"
    git.worktree_add(left, start="main")
    (left / "junk").write_text("x")
    with clean_worktree(git, git.head(wt), left) as clean:
        assert not (clean / "junk").exists()


def test_main_status_reports_a_file_written_into_the_users_checkout(repo: Path) -> None:
    """A new file and a switched HEAD are named; the user's own dirt before the run is not."""
    git = Git(repo)
    (repo / "mine.txt").write_text("the user's own work\n")
    before = MainStatus.take(git)
    assert before.changes(MainStatus.take(git)) == []
    (repo / "dropped.sh").write_text("rm -rf /\n")
    sh(repo, "checkout", "-q", "-b", "elsewhere")
    changes = before.changes(MainStatus.take(git))
    assert "now: ?? dropped.sh" in changes
    assert "HEAD was refs/heads/main, is refs/heads/elsewhere" in changes
    assert (repo / "dropped.sh").exists(), "reported, never reverted"
    assert not any("mine.txt" in c for c in changes)


def test_damage_is_none_for_a_sound_worktree(repo: Path, wt: Path) -> None:
    """The clean case: a registered worktree on its own branch."""
    assert damage(Git(repo), wt, BRANCH) is None


def test_damage_names_a_deleted_worktree_a_missing_git_file_and_a_foreign_head(
    repo: Path, wt: Path
) -> None:
    """Each way a worktree cannot be committed from is named."""
    git = Git(repo)
    sh(wt, "checkout", "-q", "--detach")
    assert "detached" in (damage(git, wt, BRANCH) or "")
    sh(wt, "checkout", "-q", BRANCH)
    (wt / ".git").unlink()
    assert ".git file is missing" in (damage(git, wt, BRANCH) or "")
    shutil.rmtree(wt)
    assert damage(git, wt, BRANCH) == "its worktree is gone"


def test_damage_names_an_unregistered_worktree(repo: Path, wt: Path, tmp_path: Path) -> None:
    """A directory copied over the worktree's place after git forgot it is not a worktree."""
    git = Git(repo)
    keep = tmp_path / "copy"
    shutil.copytree(wt, keep)
    git.worktree_remove(wt)
    keep.rename(wt)
    assert "no longer registered" in (damage(git, wt, BRANCH) or "")


@pytest.mark.parametrize("state", ["clean", "dirty", "renamed", "detached", "unborn"])
def test_main_status_in_one_call_reads_as_the_three_calls_did(
    repo: Path, tmp_path: Path, state: str
) -> None:
    """HEAD (the branch, or the sha when detached) and the entries, from one v2 status."""
    git = Git(repo)
    if state == "dirty":
        (repo / "check.sh").write_text("exit 1\n")
        (repo / "new file.txt").write_text("x")
    elif state == "renamed":
        sh(repo, "mv", "check.sh", "run me.sh")
    elif state == "detached":
        sh(repo, "checkout", "-q", "--detach")
    elif state == "unborn":
        sh(repo, "checkout", "-q", "--orphan", "fresh")
        sh(repo, "rm", "-q", "-r", "--cached", ".")
    on = git.run("symbolic-ref", "-q", "HEAD", check=False).strip()
    sha = git.run("rev-parse", "-q", "--verify", "HEAD", check=False).strip()
    status = MainStatus.take(git)
    assert status.head == (on or sha)
    if state == "renamed":  # v1 -z listed the old path as an entry of its own
        assert status.entries == {"R  run me.sh"}
    else:
        assert status.entries == frozenset(dirty(git, repo))


@pytest.mark.parametrize("rm", ["system", "missing"])
def test_a_removed_tree_takes_nothing_a_link_in_it_points_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rm: str
) -> None:
    """rm -rf in a child (rmtree without rm): the tree goes, what its links name stays."""
    from magi.git import checkout

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine\n")
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "f.txt").write_text("x")
    (tree / "to-outside").symlink_to(outside)
    (tree / "a" / "file-link").symlink_to(outside / "keep.txt")
    if rm == "missing":
        monkeypatch.setattr(checkout.shutil, "which", lambda *a, **k: None)
    checkout.remove_tree(tree)
    assert not tree.exists()
    assert (outside / "keep.txt").read_text() == "mine\n"
