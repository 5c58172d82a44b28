"""A push GitHub refuses is said in GitHub's words; only a moved branch is a lost lease."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from magi.git.remote import LeaseRejected, PushRefused, Remote, refusal

# What GitHub answers an App token without `workflows` pushing a changed workflow file.
WORKFLOW_REFUSAL = (
    "To https://github.com/o/r.git\n"
    "!\trefs/heads/magi/r1/A:refs/heads/magi/r1/A\t[remote rejected] (refusing to allow a "
    "GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` "
    "permission)\nDone"
)


def _git(cwd: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    return subprocess.run(
        ["git", *ident, *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def _pair(tmp: Path) -> tuple[Path, Path]:
    origin = tmp / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    work = tmp / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "a.txt").write_text("a\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "first")
    return origin, work


def test_a_hook_refusal_is_refused_with_its_words_not_a_lost_lease(tmp_path: Path) -> None:
    """A pre-receive hook (a protected branch, a ruleset) declines: PushRefused, with what
    the remote said, never "the branch moved"."""
    origin, work = _pair(tmp_path)
    hook = origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'GH006: Protected branch update failed' >&2\nexit 1\n")
    hook.chmod(0o755)
    remote = Remote(work, str(origin), None)
    with pytest.raises(PushRefused, match="GH006: Protected branch update failed") as err:
        remote.push("HEAD", "refs/heads/magi/r1/A", expect=None)
    assert not isinstance(err.value, LeaseRejected)
    assert "pre-receive hook declined" in str(err.value)


def test_a_moved_branch_is_a_lost_lease(tmp_path: Path) -> None:
    """Somebody else pushed the branch: LeaseRejected, as before."""
    origin, work = _pair(tmp_path)
    remote = Remote(work, str(origin), None)
    remote.push("HEAD", "refs/heads/magi/r1/A", expect=None)
    (work / "a.txt").write_text("b\n")
    _git(work, "commit", "-q", "-am", "second")
    with pytest.raises(LeaseRejected):
        remote.push("HEAD", "refs/heads/magi/r1/A", expect=None)  # expected absent: it is not


def test_the_workflow_scope_refusal_names_the_permission() -> None:
    """GitHub's answer to a workflow change without `workflows`: refused, with the fix."""
    why = refusal("refs/heads/magi/r1/A", WORKFLOW_REFUSAL)
    assert isinstance(why, PushRefused)
    assert "without `workflows` permission" in str(why)
    assert "`workflows: write`" in str(why)
