"""Checkouts magi can trust: a clean one of a recorded head, the user's own, a damaged one.

Three holes of issue 7 live here, each a question asked of a working tree:

* Verification ran in the candidate's own worktree, which another implementer could have
  filled with an uncommitted failing script. ``clean_worktree`` gives every check a fresh
  detached worktree of the recorded head instead, and ``dirty`` says what the seat's own
  tree held that the commit did not (recorded, never run).
* A file an agent wrote into the user's checkout went unseen. ``MainStatus`` is that
  checkout's HEAD and ``git status`` before the run; ``changes`` names what differs after a
  wave. It is reported, never reverted: the user may be working there.
* A worktree deleted under a running seat was "rescued" by committing the deletion of the
  whole repository. ``damage`` says why a worktree cannot be committed from (missing or
  replaced ``.git`` file, no longer registered, HEAD off its branch).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from magi.errors import RepoError
from magi.git import Git

_MAX_LISTED = 20  # a report line per path, up to this many; then a count


def dirty(git: Git, worktree: Path) -> list[str]:
    """``git status`` of ``worktree`` as ``XY path`` lines: what no commit holds."""
    out = git.run(
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignore-submodules=none",
        cwd=Path(worktree),
    )
    return [e for e in out.split("\0") if e]


@contextlib.contextmanager
def clean_worktree(git: Git, head: str, path: Path) -> Iterator[Path]:
    """A fresh detached worktree of ``head`` at ``path``, removed afterwards.

    Whatever a killed run left at ``path`` goes first, so this is safe to call again.
    """
    path = Path(path)
    discard(git, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    git.worktree_add(path, start=head)
    try:
        yield path
    finally:
        discard(git, path)


def discard(git: Git, path: Path) -> None:
    """Remove a worktree (registered or a leftover directory) and its registration."""
    path = Path(path)
    if path.resolve() in {w.resolve() for w in git.worktrees()}:
        with contextlib.suppress(RepoError):
            git.worktree_remove(path)
    if path.exists() or path.is_symlink():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    git.run("worktree", "prune")


@dataclass(frozen=True)
class MainStatus:
    """The user's main checkout: what HEAD names and what ``git status`` lists."""

    head: str
    entries: frozenset[str]

    @classmethod
    def take(cls, git: Git) -> MainStatus:
        on = git.run("symbolic-ref", "-q", "HEAD", check=False).strip()
        sha = git.run("rev-parse", "-q", "--verify", "HEAD", check=False).strip()
        return cls(head=on or sha, entries=frozenset(dirty(git, git.root)))

    def changes(self, now: MainStatus) -> list[str]:
        """What differs in ``now``, one line each (empty: nothing)."""
        lines: list[str] = []
        if now.head != self.head:
            lines.append(f"HEAD was {self.head or 'unborn'}, is {now.head or 'unborn'}")
        appeared = sorted(now.entries - self.entries)
        gone = sorted(self.entries - now.entries)
        lines += [f"now: {e}" for e in appeared[:_MAX_LISTED]]
        lines += [f"no longer: {e}" for e in gone[:_MAX_LISTED]]
        more = max(len(appeared) - _MAX_LISTED, 0) + max(len(gone) - _MAX_LISTED, 0)
        if more:
            lines.append(f"and {more} more")
        return lines


def damage(git: Git, worktree: Path, branch: str) -> str | None:
    """Why nothing may be committed from ``worktree`` as ``branch``'s work; None if sound."""
    wt = Path(worktree)
    dotgit = wt / ".git"
    if not wt.is_dir():
        return "its worktree is gone"
    if dotgit.is_symlink() or not dotgit.is_file():
        return "its worktree's .git file is missing or replaced"
    registered = {w.resolve() for w in git.worktrees()}
    if wt.resolve() not in registered:
        return "its worktree is no longer registered with the repository"
    admin = git.run("rev-parse", "--absolute-git-dir", cwd=wt, check=False).strip()
    if not admin or not Path(admin).resolve().is_relative_to(git.common_dir().resolve()):
        return "its worktree's .git file points outside the repository"
    on = git.run("symbolic-ref", "-q", "HEAD", cwd=wt, check=False).strip()
    if on != f"refs/heads/{branch}":
        return f"its worktree's HEAD is on {on or 'a detached HEAD'}, not {branch}"
    return None
