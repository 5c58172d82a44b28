"""fold: judge worktrees go once the tally is stored; losers' clones go, their branches stay."""

from __future__ import annotations

from pathlib import Path

from magi.checkout import discard
from magi.graph.context import Context
from magi.graph.guard import pin_heads
from magi.salvage import free_branch, worktrees_of
from magi.state.model import RunStatus

NAME = "fold"
STATUS = RunStatus.FOLDING


def remove_judge_worktrees(ctx: Context) -> list[str]:
    """Every judge's worktree that still exists; the paths removed."""
    removed = []
    root = Path(ctx.run.worktree_root) if ctx.run.worktree_root else None
    for j in ctx.run.judges:
        if root is not None and (root / j.seat).exists():
            ctx.git.worktree_remove(root / j.seat)
            removed.append(str(root / j.seat))
    return removed


def run(ctx: Context) -> None:
    r = ctx.run
    if r.folded:
        return
    pin_heads(ctx, NAME)  # the branch the report names holds what was judged
    remove_judge_worktrees(ctx)
    winner = r.tally.winner if r.tally else None
    for c in r.candidates:
        if c.label != winner and c.worktree:
            discard(ctx.git, Path(c.worktree))
            c.worktree = None
    r.folded = True
    if winner:
        r.reason = f"candidate {winner} won; branch {r.candidate(winner).branch}"
    ctx.save()


def fold_all(ctx: Context, *, keep_winner_branch: bool = True, force: bool = False) -> list[str]:
    """``magi fold <run>``: every worktree of the run, and the branches of all but the winner.

    The winner's branch is the product of the run; it stays unless asked otherwise. A run
    that can still resume needs every candidate branch, so those stay too unless ``force``
    (the record may be wrong, never the branches: fold never deletes what a record needs).
    """
    r = ctx.run
    removed = remove_judge_worktrees(ctx)
    from magi.graph.review import remove_reviewer_worktrees

    removed += remove_reviewer_worktrees(ctx)
    winner = r.tally.winner if r.tally else None
    keep_all = r.status.resumable and not force
    for c in r.candidates:
        if c.worktree:
            discard(ctx.git, Path(c.worktree))
            removed.append(c.worktree)
            c.worktree = None
        if keep_all or (keep_winner_branch and c.label == winner):
            continue
        if not ctx.git.ref_exists(f"refs/heads/{c.branch}"):
            continue  # folded before: say only what this fold really removed
        free_branch(ctx.git, c.branch)  # a stray worktree on it: "Cannot delete branch"
        ctx.git.delete_branch(c.branch)
        removed.append(c.branch)
    # What no record names: verification checkouts, a worktree a killed prep made.
    root = Path(r.worktree_root).parent if r.worktree_root else None
    for path in worktrees_of(ctx.git, r.id, [root] if root else []):
        discard(ctx.git, path)
        removed.append(str(path))
    run_root = Path(r.worktree_root) if r.worktree_root else None
    if run_root is not None and run_root.is_dir() and not any(run_root.iterdir()):
        run_root.rmdir()  # the run's own folder of worktrees, now empty
    r.folded = True
    ctx.save()
    return removed
