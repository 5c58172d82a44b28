"""What every competition node is handed: the run's seat context plus git and the seating."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from magi.core.seating import Seating
from magi.git import Git
from magi.jail import JailPaths
from magi.seats import Reporter, SeatContext, SilentReporter, Stop, seat_order, utcnow
from magi.state.model import Run

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

    def jail_paths(self, cwd: Path) -> JailPaths:
        """Also hidden: the main checkout and every worktree. The shared git directory is
        bound, but what git reads as instructions (config, hooks, info, every worktree's
        config.worktree) and the other worktrees' admin dirs (their HEAD, index) stay
        read-only, so a hook, a filter or an fsmonitor cannot be planted at all."""
        base = super().jail_paths(cwd)
        roots = (self.git.root, *([self.worktree_root()] if self.run.worktree_root else []))
        common = self.git.common_dir().resolve()
        own = _admin_dir(cwd)
        admins = sorted((common / "worktrees").glob("*")) if (common / "worktrees").is_dir() else []
        fixed = [common / n for n in ("config", "config.worktree", "hooks", "info", "packed-refs")]
        fixed += [a if a != own else a / "config.worktree" for a in admins]
        return JailPaths(
            hide=(*base.hide, *roots),
            git_dirs=(common,),
            read=(*fixed, self.run_dir / "hooks"),  # magi's commit-msg hook, which strips trailers
        )

    def worktree_root(self) -> Path:
        root = self.run.worktree_root
        assert root is not None, "create_run sets it"  # noqa: S101 - invariant of every record
        return Path(root)


def _admin_dir(worktree: Path) -> Path | None:
    """The git admin dir a linked worktree's ``.git`` file names, resolved."""
    dotgit = worktree / ".git"
    if not dotgit.is_file():
        return None
    text = dotgit.read_text(errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    return (worktree / text.removeprefix("gitdir:").strip()).resolve()
