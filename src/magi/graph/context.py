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

    def jail_paths(self) -> JailPaths:
        """Also hidden: the main checkout and every worktree; git's shared directory is bound."""
        base = super().jail_paths()
        roots = (self.git.root, *([self.worktree_root()] if self.run.worktree_root else []))
        return JailPaths(
            hide=(*base.hide, *roots),
            git_dirs=(self.git.common_dir(),),
            read=(self.run_dir / "hooks",),  # the commit-msg hook that strips trailers
        )

    def worktree_root(self) -> Path:
        root = self.run.worktree_root
        assert root is not None, "create_run sets it"  # noqa: S101 - invariant of every record
        return Path(root)
