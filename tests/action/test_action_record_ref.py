"""The record commit publish builds: what it keeps of the commit before it."""

from __future__ import annotations

from pathlib import Path

from git_helpers import one_commit_repo
from magi.action.publish_job.publish_fork import _with_file
from magi.action.publish_job.record_ref import Published, build_commit
from magi.git.repo import Git


def _record(git: Git, parent: str | None, *, keep_fork: bool, text: str = "{}\n") -> str:
    sha = build_commit(
        git,
        run_json=text,
        artifacts={},
        published=Published(),
        parent=parent,
        message="m",
        keep_fork=keep_fork,
    )
    assert sha is not None
    return sha


def _fork(git: Git, commit: str) -> list[str]:
    out = git.run("ls-tree", "--name-only", f"{commit}:fork", check=False)
    return out.split()


def test_a_forked_waves_results_stay_until_it_is_joined(tmp_path: Path) -> None:
    """While the wave is forked the seat jobs' results stay through a publish re-run;
    once the join was sent, a new fork (a join that forked the wave again) starts afresh,
    or its seat jobs would find the old mark and never send their join."""
    git = Git(one_commit_repo(tmp_path / "r", {"README": "x"}))
    first = _record(git, None, keep_fork=True)
    stored = _with_file(git, first, "self-hosted+gpu.sealed", "sealed\n", "m")
    again = _record(git, stored, keep_fork=True, text='{"again": 1}\n')
    assert _fork(git, again) == ["self-hosted+gpu.sealed"]
    assert _fork(git, _record(git, stored, keep_fork=False, text='{"b": 1}\n')) == []
    joined = _with_file(git, again, "joined", "run\n", "m")
    refork = _record(git, joined, keep_fork=True, text='{"c": 1}\n')
    assert _fork(git, refork) == []
