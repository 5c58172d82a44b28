"""The ref guard: a seat that moves, creates or deletes any ref but its own is undone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_helpers import one_commit_repo, sh
from magi.git import refs_guard
from magi.git.repo import Git

OWN = "refs/heads/magi/r1/A"
pytestmark = pytest.mark.usefixtures("isolated_git")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = one_commit_repo(tmp_path / "repo", {"f": "1\n"})
    sh(path, "branch", "magi/r1/A")
    sh(path, "branch", "magi/r1/B")
    sh(path, "tag", "v1")
    return path


def commit(repo: Path, text: str) -> str:
    """A new commit object, on no branch."""
    tree = sh(repo, "write-tree")
    return sh(repo, "commit-tree", "-p", "HEAD", "-m", text, tree)


def test_moving_main_creating_a_tag_and_deleting_a_branch_are_all_undone(repo: Path) -> None:
    """Every ref outside the seat's own branch goes back; each change is one violation line."""
    git = Git(repo)
    snap = refs_guard.take(git)
    main = sh(repo, "rev-parse", "main")
    rogue = commit(repo, "unjudged")
    sh(repo, "update-ref", "refs/heads/main", rogue)
    sh(repo, "tag", "evil", rogue)
    sh(repo, "branch", "-D", "magi/r1/B")
    sh(repo, "notes", "add", "-m", "note", "HEAD")
    sh(repo, "update-ref", OWN, rogue)  # its own branch: allowed
    violations = refs_guard.restore(git, snap, allowed={OWN})
    assert sh(repo, "rev-parse", "main") == main
    assert sh(repo, "tag", "-l") == "v1"
    assert sh(repo, "rev-parse", "magi/r1/B") == main
    assert sh(repo, "for-each-ref", "refs/notes") == ""
    assert sh(repo, "rev-parse", "magi/r1/A") == rogue
    text = "\n".join(violations)
    assert f"refs/heads/main moved from {main[:12]} to {rogue}" in text
    assert "refs/tags/evil created" in text
    assert "refs/heads/magi/r1/B deleted" in text
    assert "refs/notes/commits created" in text
    assert OWN not in text


def test_an_untouched_repository_reports_nothing(repo: Path) -> None:
    """The clean path: no violations, nothing written."""
    git = Git(repo)
    assert refs_guard.restore(git, refs_guard.take(git), allowed={OWN}) == []


def test_a_hand_edited_packed_refs_is_restored_and_the_own_branch_kept(repo: Path) -> None:
    """packed-refs edited to move a tag: restored, and the own branch keeps its work."""
    git = Git(repo)
    sh(repo, "pack-refs", "--all")
    snap = refs_guard.take(git)
    rogue = commit(repo, "x")
    sh(repo, "update-ref", OWN, rogue)
    sh(repo, "pack-refs", "--all")  # the seat's own new head now lives only in packed-refs
    packed = repo / ".git" / "packed-refs"
    v1 = sh(repo, "rev-parse", "v1")
    packed.write_text(packed.read_text().replace(f"{v1} refs/tags/v1", f"{rogue} refs/tags/v1"))
    violations = refs_guard.restore(git, snap, allowed={OWN})
    assert sh(repo, "rev-parse", "v1") == v1
    assert sh(repo, "rev-parse", "magi/r1/A") == rogue
    assert "packed-refs rewritten; restored" in violations


def test_a_symbolic_ref_planted_over_a_branch_is_replaced_not_written_through(repo: Path) -> None:
    """Branch B made a symref to main: restoring B must not move main."""
    git = Git(repo)
    snap = refs_guard.take(git)
    main = sh(repo, "rev-parse", "main")
    sh(repo, "symbolic-ref", "refs/heads/magi/r1/B", "refs/heads/main")
    violations = refs_guard.restore(git, snap)
    assert sh(repo, "rev-parse", "main") == main
    res = subprocess.run(
        ["git", "symbolic-ref", "-q", "refs/heads/magi/r1/B"], cwd=repo, capture_output=True
    )
    assert res.returncode != 0, "B is a plain branch again"
    assert any("refs/heads/magi/r1/B" in v for v in violations)


def test_pin_puts_a_moved_candidate_back_on_its_recorded_head(repo: Path) -> None:
    """A judge moved a candidate branch: pin names it and puts the judged head back."""
    git = Git(repo)
    judged = sh(repo, "rev-parse", "magi/r1/A")
    rogue = commit(repo, "unjudged")
    sh(repo, "update-ref", OWN, rogue)
    assert refs_guard.pin(git, {"magi/r1/A": judged}, fix=False) == [
        f"magi/r1/A moved to {rogue[:12]}, recorded {judged[:12]}"
    ]
    assert sh(repo, "rev-parse", "magi/r1/A") == rogue, "fix=False only reports"
    assert refs_guard.pin(git, {"magi/r1/A": judged}) != []
    assert sh(repo, "rev-parse", "magi/r1/A") == judged
    assert refs_guard.pin(git, {"magi/r1/A": judged}) == []
