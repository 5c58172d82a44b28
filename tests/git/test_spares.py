"""Spare trees: magi's own detached worktrees are reset and reused, never trusted blindly.

A full checkout is the dearest git work of a run, so verification, judge, reviewer and
check trees are moved aside when a node is done with them and reset for the next. What the
last user of a tree left there (a changed file, an ignored one, a nested repository, a
planted admin file) must never reach the next: a spare that cannot be shown to hold
exactly its new head and nothing else is removed and a fresh tree made.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_helpers import one_commit_repo, sh
from graph_helpers import config, start
from magi.git.checkout import clean_worktree, drop_spares, lease, release, reset_to
from magi.git.repo import Git
from magi.model.run import RunStatus

pytestmark = pytest.mark.usefixtures("isolated_git")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = one_commit_repo(tmp_path / "repo", {"a.txt": "one\n", ".gitignore": "*.log\n"})
    sh(path, "checkout", "-q", "-b", "next")
    (path / "a.txt").write_text("two\n")
    (path / "b.txt").write_text("new\n")
    sh(path, "commit", "-q", "-am", "two", "--allow-empty")
    sh(path, "add", "b.txt")
    sh(path, "commit", "-q", "-m", "b")
    sh(path, "checkout", "-q", "main")
    return path


def heads(repo: Path) -> tuple[str, str]:
    git = Git(repo)
    return git.rev_parse("main"), git.rev_parse("next")


def test_a_released_tree_is_reset_to_the_next_head_with_nothing_of_its_last_user(
    repo: Path, tmp_path: Path
) -> None:
    git = Git(repo)
    main, nxt = heads(repo)
    spares = tmp_path / "trees" / ".spare"
    first = tmp_path / "trees" / "verify-A"
    lease(git, main, first, spares=spares)
    ino = os.stat(first / ".git").st_ino
    # What a check command or a seat could leave behind.
    (first / "a.txt").write_text("changed\n")
    (first / "debug.log").write_text("ignored\n")
    (first / "planted.py").write_text("print('x')\n")
    sh(first, "init", "-q", "nested")
    release(git, first, spares=spares)
    assert not first.exists()
    assert len(list(spares.iterdir())) == 1

    second = tmp_path / "trees" / "judge-1"
    lease(git, nxt, second, spares=spares)
    assert os.stat(second / ".git").st_ino == ino, "the spare was reused, not a new checkout"
    assert not list(spares.iterdir())
    assert (second / "a.txt").read_text() == "two\n"
    assert (second / "b.txt").read_text() == "new\n"
    for gone in ("debug.log", "planted.py", "nested"):
        assert not (second / gone).exists(), gone
    assert git.head(second) == nxt
    assert second.resolve() in {w.resolve() for w in git.worktrees()}


@pytest.mark.parametrize(
    "plant",
    [
        "config.worktree",  # read as config when extensions.worktreeConfig is on
        "info/sparse-checkout",  # would leave files out of the checkout
        "MERGE_HEAD",
    ],
)
def test_a_spare_with_anything_planted_in_its_admin_dir_is_removed_not_reused(
    repo: Path, tmp_path: Path, plant: str
) -> None:
    git = Git(repo)
    main, nxt = heads(repo)
    spares = tmp_path / "trees" / ".spare"
    tree = tmp_path / "trees" / "judge-1"
    lease(git, main, tree, spares=spares)
    admin = Path(git.run("rev-parse", "--absolute-git-dir", cwd=tree).strip())
    (admin / plant).parent.mkdir(parents=True, exist_ok=True)
    (admin / plant).write_text("[core]\n\tsparseCheckout = true\n")
    release(git, tree, spares=spares)
    (spare,) = spares.iterdir()
    assert not reset_to(git, spare, nxt)

    again = tmp_path / "trees" / "review-1"
    lease(git, nxt, again, spares=spares)
    assert not spare.exists(), "the tainted spare is gone"
    fresh = Path(git.run("rev-parse", "--absolute-git-dir", cwd=again).strip())
    assert not (fresh / plant).exists()
    assert (again / "b.txt").read_text() == "new\n"


def test_a_spare_whose_git_file_was_replaced_is_removed(repo: Path, tmp_path: Path) -> None:
    git = Git(repo)
    main, nxt = heads(repo)
    spares = tmp_path / "trees" / ".spare"
    tree = tmp_path / "trees" / "judge-1"
    lease(git, main, tree, spares=spares)
    release(git, tree, spares=spares)
    (spare,) = spares.iterdir()
    (spare / ".git").unlink()
    (spare / ".git").symlink_to(repo / ".git")
    assert not reset_to(git, spare, nxt)
    assert not reset_to(git, spare, "-f")  # never read as an option


def test_a_kill_between_the_reset_and_the_move_leaves_a_spare_the_next_lease_takes(
    repo: Path, tmp_path: Path
) -> None:
    """The reset happens where the spare lies; a kill before the move loses nothing."""
    git = Git(repo)
    main, nxt = heads(repo)
    spares = tmp_path / "trees" / ".spare"
    tree = tmp_path / "trees" / "verify-A"
    with clean_worktree(git, main, tree, spares=spares):
        pass
    (spare,) = spares.iterdir()
    assert reset_to(git, spare, nxt)  # ... and the process dies here
    lease(git, main, tmp_path / "trees" / "judge-1", spares=spares)
    assert (tmp_path / "trees" / "judge-1" / "a.txt").read_text() == "one\n"
    assert drop_spares(git, spares) == []
    assert not spares.exists()


def test_a_run_makes_as_many_trees_as_it_uses_at_once(env, monkeypatch) -> None:
    """Three verifications, three judges, two reviewers, e2e and the gate: three checkouts
    (ten before spares), and none of them is left when the run is over."""
    repo, home, sd = env
    made: list[Path] = []
    add = Git.worktree_add

    def counted(self: Git, path: Path, *, start: str, branch: str | None = None) -> None:
        made.append(Path(path))
        add(self, path, start=start, branch=branch)

    monkeypatch.setattr(Git, "worktree_add", counted)
    run = start(repo, home, config(sd, {"a1": "right", "a2": "partial", "a3": "wrong"}))
    assert run.status is RunStatus.READY, run.reason
    assert run.review is not None
    assert run.review.rounds, "the review loop ran"
    assert run.gate is not None
    assert run.gate.ran
    assert len(made) == 3, [p.name for p in made]
    root = Path(run.worktree_root or "")
    left = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
    assert ".spare" not in left
    assert not [n for n in left if n.startswith(("judge", "review"))]


def test_a_spare_is_reused_for_a_head_named_by_its_branch(repo: Path, tmp_path: Path) -> None:
    """A base recorded as a name (no sha yet) still reuses the spare, detached at its commit."""
    git = Git(repo)
    main, nxt = heads(repo)
    spares = tmp_path / "trees" / ".spare"
    with clean_worktree(git, main, tmp_path / "trees" / "verify-A", spares=spares):
        pass
    (spare,) = spares.iterdir()
    ino = os.stat(spare / ".git").st_ino
    lease(git, "next", tmp_path / "trees" / "judge-1", spares=spares)
    assert os.stat(tmp_path / "trees" / "judge-1" / ".git").st_ino == ino
    assert git.head(tmp_path / "trees" / "judge-1") == nxt


@pytest.mark.parametrize("bit", ["--skip-worktree", "--assume-unchanged"])
def test_a_file_hidden_from_git_by_an_index_bit_makes_the_spare_unusable(
    repo: Path, tmp_path: Path, bit: str
) -> None:
    """A changed file under skip-worktree (or assume-unchanged) survives checkout -f and is
    invisible to status: the spare is not taken for clean."""
    git = Git(repo)
    main, _ = heads(repo)
    spares = tmp_path / "trees" / ".spare"
    tree = tmp_path / "trees" / "verify-A"
    lease(git, main, tree, spares=spares)
    sh(tree, "update-index", bit, "a.txt")
    (tree / "a.txt").write_text("EVIL\n")
    release(git, tree, spares=spares)
    (spare,) = spares.iterdir()
    assert not reset_to(git, spare, main)
    again = tmp_path / "trees" / "check-gate"
    lease(git, main, again, spares=spares)
    assert (again / "a.txt").read_text() == "one\n"


def test_a_spare_whose_commondir_names_another_repository_is_removed(
    repo: Path, tmp_path: Path
) -> None:
    """Its config and attributes (a smudge filter) would do the checkout otherwise."""
    git = Git(repo)
    main, _ = heads(repo)
    other = one_commit_repo(tmp_path / "other", {"x": "y\n"})
    spares = tmp_path / "trees" / ".spare"
    tree = tmp_path / "trees" / "verify-A"
    lease(git, main, tree, spares=spares)
    admin = Path(git.run("rev-parse", "--absolute-git-dir", cwd=tree).strip())
    (admin / "commondir").write_text(f"{other / '.git'}\n")
    release(git, tree, spares=spares)
    (spare,) = spares.iterdir()
    assert not reset_to(git, spare, main)


def test_a_link_where_a_released_tree_stood_is_removed_not_followed(
    repo: Path, tmp_path: Path
) -> None:
    git = Git(repo)
    main, _ = heads(repo)
    own = tmp_path / "users-own"
    git.worktree_add(own, start=main)
    link = tmp_path / "trees" / "judge-1"
    link.parent.mkdir(parents=True)
    link.symlink_to(own)
    release(git, link, spares=tmp_path / "trees" / ".spare")
    assert not link.exists()
    assert (own / "a.txt").read_text() == "one\n"
    assert not (tmp_path / "trees" / ".spare").exists()
