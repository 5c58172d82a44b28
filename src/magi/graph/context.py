"""What every competition node is handed: the run's seat context plus git and the seating."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from magi.core.seats.jail import JailSpec
from magi.core.seats.seating import Seating
from magi.git.checkout import SPARES
from magi.git.clones import git_dir, is_clone, objects
from magi.git.repo import Git
from magi.model.run import Run
from magi.sandbox.bwrap import JailPaths
from magi.seats import Reporter, SeatContext, SilentReporter, Stop, seat_order, utcnow
from magi.seats.jailing import seat_jail

__all__ = ["Context", "Reporter", "SilentReporter", "Stop", "seat_order", "utcnow"]


@dataclass(kw_only=True)
class Context(SeatContext):
    """A competition's context: ``run`` is the record, typed as a competition."""

    git: Git
    seating: Seating

    def __post_init__(self) -> None:
        if not isinstance(self.record, Run):
            raise TypeError(f"a competition context needs a Run, got a {self.record.kind}")

    @property
    def run(self) -> Run:
        record = self.record
        assert isinstance(record, Run)  # noqa: S101 - checked in __post_init__
        return record

    def jail_paths(self, cwd: Path, *, writable: bool = True) -> JailPaths:
        """Also hidden: the main checkout and every worktree. A candidate's clone: see below.
        For a judge's or reviewer's worktree of the repository, the shared git directory is
        bound, but what git reads as instructions (config, hooks, info, every worktree's
        config.worktree), the user's index, the other worktrees' admin dirs (their HEAD,
        index) and every branch but the seat's own stay read-only: no hook, filter or
        fsmonitor can be planted, no other candidate's branch (nor main) can be moved or
        deleted, and nothing the user's ``git status`` shows can change."""
        base = super().jail_paths(cwd, writable=writable)
        roots = (self.git.root, *([self.worktree_root()] if self.run.worktree_root else []))
        if is_clone(cwd):
            # A candidate's clone: its git directory is its own and inside the tree (bound
            # read-write with it); what git reads as instructions stays read-only, and the
            # user's object store it borrows is visible read-only (never its refs).
            gd = git_dir(cwd)
            fixed = [gd / n for n in ("config", "hooks", "info", "objects/info")]
            return JailPaths(
                hide=(*base.hide, *roots),
                read=(*fixed, objects(self.git), self.run_dir / "hooks"),
            )
        common = self.git.common_dir().resolve()
        if not writable:
            # A judge or a reviewer: its tree and the whole shared git directory are bound
            # read-only (``policy``), so nothing inside needs a read-only bind of its own (one
            # mount each, a ref each: hundreds on a repository with many branches).
            return JailPaths(
                hide=(*base.hide, *roots), git_dirs=(common,), read=(self.run_dir / "hooks",)
            )
        own = _admin_dir(cwd)
        admins = sorted((common / "worktrees").glob("*")) if (common / "worktrees").is_dir() else []
        fixed = [common / n for n in ("config", "config.worktree", "hooks", "info", "packed-refs")]
        if own is not None:
            # A linked worktree's seat: the user's index and submodules too. With HEAD and
            # the branches, that is all the checkout's status reads from the git directory
            # (the guard does not look at the checkout after a jailed turn).
            fixed += [common / "index", common / "modules"]
        fixed += [a if a != own else a / "config.worktree" for a in admins]
        fixed += _foreign_refs(common, own_branch=_branch_of(own))
        return JailPaths(
            hide=(*base.hide, *roots),
            git_dirs=(common,),
            read=(*fixed, self.run_dir / "hooks"),  # magi's commit-msg hook strips trailers
        )

    def check_jail(self, cwd: Path) -> JailSpec | None:
        """The jail of a check command (verify.e2e, verify.gate) in ``cwd``, a clean checkout
        magi made: its tree writable, the repository's git directory read-only (a check
        commits nothing, and a file planted at its top, a ``commondir``, would redirect the
        next git command run outside any jail), no CLI state of its own. None when seats
        run unjailed."""
        spec = seat_jail(self, "", cwd, True)
        if spec is None:
            return None
        shared = {os.path.realpath(p) for p in self.jail_paths(cwd).git_dirs}
        kept = tuple(w for w in spec.write if w not in shared)
        return replace(spec, write=kept, read=(*spec.read, *sorted(shared - set(spec.read))))

    def worktree_root(self) -> Path:
        root = self.run.worktree_root
        assert root is not None, "create_run sets it"  # noqa: S101 - invariant of every record
        return Path(root)

    def spares(self) -> Path:
        """Where magi's own detached trees wait between uses (``magi.git.checkout.lease``)."""
        return self.worktree_root() / SPARES


def _admin_dir(worktree: Path) -> Path | None:
    """The git admin dir a linked worktree's ``.git`` file names, resolved."""
    dotgit = worktree / ".git"
    if not dotgit.is_file():
        return None
    text = dotgit.read_text(errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    return (worktree / text.removeprefix("gitdir:").strip()).resolve()


_MAX_REF_BINDS = 400  # one bind mount each; past that, pin_branches still repairs after


def _branch_of(admin: Path | None) -> str | None:
    """The branch a linked worktree has checked out, read from its admin dir's HEAD."""
    if admin is None:
        return None
    try:
        head = (admin / "HEAD").read_text().strip()
    except OSError:
        return None
    return head.removeprefix("ref: ") if head.startswith("ref: refs/heads/") else None


def _foreign_refs(common: Path, *, own_branch: str | None) -> list[Path]:
    """HEAD and the loose refs of branches other than ``own_branch``, tags and remotes.

    git replaces a ref by renaming a lock file over it; onto a read-only bind mount that
    rename fails, so such a ref cannot be moved or deleted from inside the jail.
    """
    out = [common / "HEAD"]
    found: list[str] = []
    # os.walk over scandir: one directory read per folder, no stat per ref (a seat turn each).
    for top, dirs, files in os.walk(common / "refs"):
        dirs.sort()
        rel = os.path.relpath(top, common)
        found += [f"{rel}/{f}" for f in files if not os.path.islink(os.path.join(top, f))]
    for name in sorted(found):
        if len(out) > _MAX_REF_BINDS:
            break
        if name != own_branch:
            out.append(common / name)
    return out
