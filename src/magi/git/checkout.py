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

A full checkout is the dearest git work a run does (on a 2,000-file repository, 0.7 s of
system time each on the bench machine), so magi's own detached worktrees -- verification,
judges, reviewers, e2e and gate checks -- are *spares*: one a node is done with is moved
aside (``release``), and the next node that needs a tree resets it to its head (``lease``):
``checkout -f``, ``clean -ffdx``, then proof that it now holds exactly that head and
nothing else, or it is removed and a fresh one made. A run makes as many of these trees as
it uses at once (three for three judges), not one per use.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from magi.errors import RepoError
from magi.git.repo import Git

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
def clean_worktree(
    git: Git, head: str, path: Path, *, spares: Path | None = None
) -> Iterator[Path]:
    """A clean detached worktree of ``head`` at ``path``, given back afterwards.

    Whatever a killed run left at ``path`` goes first, so this is safe to call again. With
    ``spares`` the tree is leased from them and released to them; without, made and removed.
    """
    path = Path(path)
    discard(git, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if spares is None:
        git.worktree_add(path, start=head)
    else:
        lease(git, head, path, spares=spares)
    try:
        yield path
    finally:
        if spares is None:
            discard(git, path)
        else:
            release(git, path, spares=spares)


SPARES = ".spare"  # under a run's folder of trees

# What git itself keeps in a linked worktree's admin dir after add, checkout and clean.
_ADMIN = frozenset({"HEAD", "ORIG_HEAD", "commondir", "gitdir", "index", "logs"})


_SPARES = threading.RLock()  # reviewers lease from worker threads: one spare, one taker


def lease(git: Git, head: str, path: Path, *, spares: Path) -> None:
    """Make ``path`` a clean detached worktree of ``head``: a spare reset, else a fresh one.

    The spare is reset where it lies and moved only once it is proven clean, so a kill at
    any instant leaves either a spare (reset again at the next lease) or a clean ``path``.
    """
    with _SPARES:
        _lease(git, head, Path(path), spares)


def _lease(git: Git, head: str, path: Path, spares: Path) -> None:
    for spare in sorted(spares.iterdir()) if spares.is_dir() else []:
        if reset_to(git, spare, head):
            try:
                _registered(git, "move", str(spare), str(path.resolve()))
                return
            except RepoError:
                pass
        discard(git, spare)
    try:
        git.worktree_add(path, start=head)
    except RepoError:
        git.prune_worktrees(path.parent)  # a registration a killed run left at ``path``
        git.worktree_add(path, start=head)


def _registered(git: Git, *args: str) -> None:
    """``git worktree <args>``, once more after a prune when a stale registration (a tree a
    kill left deleted but registered) stands in the way."""
    try:
        git.run("worktree", *args)
    except RepoError:
        for path in args[-2:]:
            git.prune_worktrees(Path(path).parent)
        git.run("worktree", *args)


def release(git: Git, path: Path, *, spares: Path) -> None:
    """Keep ``path``, a worktree magi made, as a spare for the next lease (removed if it cannot)."""
    with _SPARES:
        _release(git, Path(path), spares)


def _release(git: Git, path: Path, spares: Path) -> None:
    if path.is_symlink():  # a link planted where the tree was: never what it points at
        path.unlink()
        git.prune_worktrees(path.parent)
        return
    if not path.exists():
        git.prune_worktrees(path.parent)
        return
    spares.mkdir(parents=True, exist_ok=True)
    n = 0
    while (spares / str(n)).exists() or (spares / str(n)).is_symlink():
        n += 1
    try:
        _registered(git, "move", str(path.resolve()), str((spares / str(n)).resolve()))
    except RepoError:
        discard(git, path)


def drop_spares(git: Git, spares: Path) -> list[str]:
    """Remove every spare (the run needs no more trees); the paths removed."""
    if not spares.is_dir() or spares.is_symlink():
        return []
    removed = [str(s) for s in sorted(spares.iterdir())]
    remove_tree(spares)  # every one is magi's: no registration to ask about first
    git.prune_worktrees(spares)
    return removed


def reset_to(git: Git, tree: Path, head: str) -> bool:
    """Make ``tree`` hold exactly ``head``; False unless that is then shown to be so.

    Whoever used the tree last (a check command, a judge) may have changed files, added
    ignored ones, nested a repository, or written into its admin dir: its ``commondir`` and
    ``gitdir`` must name this repository and this tree, the admin dir must hold only what
    git itself writes there, and after the reset ``git status`` (ignored files included)
    must list nothing, HEAD must be ``head``, and no index entry may carry a bit that makes
    git skip a file (``skip-worktree``, ``assume-unchanged``: a file changed under either
    is invisible to checkout and status alike).
    """
    tree = Path(tree)
    dotgit = tree / ".git"
    if not head or head.startswith("-"):  # read as an option otherwise
        return False
    if tree.is_symlink() or not tree.is_dir() or dotgit.is_symlink() or not dotgit.is_file():
        return False
    try:
        named = dotgit.read_text(encoding="utf-8", errors="replace").strip()
        if not named.startswith("gitdir:"):
            return False
        admin = (tree / named.removeprefix("gitdir:").strip()).resolve()
        common = git.common_dir().resolve()
        if admin.parent != common / "worktrees" or not {e.name for e in admin.iterdir()} <= _ADMIN:
            return False
        # Another repository's config and attributes (a smudge filter) would do the checkout.
        shared = (admin / (admin / "commondir").read_text().strip()).resolve()
        back = Path((admin / "gitdir").read_text().strip())
        if shared != common or back.resolve() != dotgit.resolve():
            return False
        pin = ["-c", "core.sparseCheckout=false", "-c", "status.showStash=false"]
        git.run(*pin, "checkout", "-q", "-f", "--detach", head, cwd=tree)
        git.run(*pin, "clean", "-q", "-ffdx", cwd=tree)
        out = git.run(
            *pin,
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--untracked-files=all",
            "--ignored=matching",
            "--ignore-submodules=none",
            cwd=tree,
        )
        fields = [f for f in out.split("\0") if f]
        sha = head if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", head) else git.rev_parse(head)
        # Detached at ``head``, and not one entry: nothing changed, untracked or ignored.
        if fields != [f"# branch.oid {sha}", "# branch.head (detached)"]:
            return False
        tags = git.run("ls-files", "-v", "-z", cwd=tree)
        return all(e.startswith("H ") for e in tags.split("\0") if e)  # H: cached, nothing else
    except (RepoError, OSError, UnicodeDecodeError):
        return False


def discard(git: Git, path: Path) -> None:
    """Remove a worktree (registered or a leftover directory) and its registration."""
    path = Path(path)
    dotgit = path / ".git"
    if dotgit.is_dir() and not dotgit.is_symlink() and not path.is_symlink():
        remove_tree(path)  # a candidate's clone (a git dir of its own): git lists no such tree
        return
    there = path.exists() or path.is_symlink()
    # A registration whose directory is gone is what prune removes, below.
    if there and path.resolve() in {w.resolve() for w in git.worktrees()}:
        with contextlib.suppress(RepoError):
            git.worktree_remove(path)
    if path.exists() or path.is_symlink():
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        else:
            path.unlink()
    git.prune_worktrees(path.parent)


def remove_tree(path: Path) -> None:
    """``rm -rf`` in a child process, ``shutil.rmtree`` where that fails.

    A clone is thousands of files: removing them is the kernel's work either way, and
    Python's rmtree adds a scandir, an lstat and an unlink call per entry on top (fold
    removes every losing clone). ``rm`` is looked up on the system's own path only, and,
    like rmtree, removes a symbolic link without following it.
    """
    rm = shutil.which("rm", path=os.defpath)
    if rm is not None:
        subprocess.run(
            [rm, "-rf", "--", str(path)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
        if not path.exists() and not path.is_symlink():
            return
    shutil.rmtree(path)


@dataclass(frozen=True)
class MainStatus:
    """The user's main checkout: what HEAD names and what ``git status`` lists."""

    head: str
    entries: frozenset[str]

    @classmethod
    def take(cls, git: Git) -> MainStatus:
        """One ``git status --porcelain=v2 --branch``: HEAD and the entries together (it is
        taken after every wave of seat turns). No ahead/behind count: it is not used, and it
        walks the history against the upstream."""
        out = git.run(
            "-c",
            "status.showStash=false",
            "status",
            "--porcelain=v2",
            "--branch",
            "--no-ahead-behind",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=none",
            cwd=git.root,
        )
        return cls.parse(out)

    @classmethod
    def parse(cls, out: str) -> MainStatus:
        """``status --porcelain=v2 --branch -z``: ``head`` is ``refs/heads/<branch>`` when on
        a branch (born or not), else the detached sha; entries read ``XY path`` as v1's do."""
        oid = branch = ""
        entries: set[str] = set()
        fields = out.split("\0")
        i = 0
        while i < len(fields):
            f = fields[i]
            i += 1
            if f.startswith("# branch.oid "):
                oid = f.removeprefix("# branch.oid ")
            elif f.startswith("# branch.head "):
                branch = f.removeprefix("# branch.head ")
            elif f[:2] in ("1 ", "u "):
                parts = f.split(" ", 10 if f[0] == "u" else 8)
                entries.add(f"{parts[1].replace('.', ' ')} {parts[-1]}")
            elif f.startswith("2 "):
                parts = f.split(" ", 9)
                entries.add(f"{parts[1].replace('.', ' ')} {parts[-1]}")
                i += 1  # the path it was renamed or copied from
            elif f[:2] in ("? ", "! "):
                entries.add(f"{f[0] * 2} {f[2:]}")
        on_branch = branch and branch != "(detached)"
        head = f"refs/heads/{branch}" if on_branch else ("" if oid == "(initial)" else oid)
        return cls(head=head, entries=frozenset(entries))

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
