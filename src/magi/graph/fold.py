"""fold: judge worktrees go once the tally is stored; losers' clones go, their branches stay."""

from __future__ import annotations

from pathlib import Path

from magi.git.checkout import discard, drop_spares, release
from magi.git.clones import made_by_magi
from magi.git.salvage import free_branch, worktrees_of
from magi.graph.context import Context
from magi.graph.guard import pin_heads
from magi.graph.judge import SHARED
from magi.model.run import RunStatus

NAME = "fold"
STATUS = RunStatus.FOLDING


def remove_judge_worktrees(ctx: Context, *, keep: bool = False) -> list[str]:
    """Every judge's worktree that still exists; the paths removed. With ``keep`` they
    become spares for the review loop's trees."""
    removed = []
    root = Path(ctx.run.worktree_root) if ctx.run.worktree_root else None
    # A tree each, or the panel's one (jailed): a resume may have found the jail otherwise.
    names = [*(j.seat for j in ctx.run.judges), SHARED]
    for path in [root / n for n in names] if root is not None else []:
        if path.exists():
            if keep:
                release(ctx.git, path, spares=ctx.spares())
            else:
                ctx.git.worktree_remove(path)
            removed.append(str(path))
    return removed


def run(ctx: Context) -> None:
    r = ctx.run
    if r.folded:
        return
    pin_heads(ctx, NAME)  # the branch the report names holds what was judged
    remove_judge_worktrees(ctx, keep=True)
    winner = r.tally.winner if r.tally else None
    for c in r.candidates:
        if c.label != winner and c.worktree and _ours(ctx, c.worktree):
            discard(ctx.git, Path(c.worktree))
            c.worktree = None
    r.folded = True
    if winner:
        r.reason = f"candidate {winner} won; branch {r.candidate(winner).branch}"
    ctx.save()


def _ours(ctx: Context, tree: str) -> bool:
    """A tree magi made under the run's own folder: the only kind a fold removes. The user's
    checkout a `magi review` worked in (often the repository root itself) is never one."""
    root = ctx.run.worktree_root
    return root is not None and made_by_magi(Path(tree), Path(root))


def fold_all(
    ctx: Context, *, keep_winner_branch: bool = True, force: bool = False
) -> tuple[list[str], list[str]]:
    """``magi fold <run>``: every worktree of the run, and the branches of all but the winner;
    (what was removed, what was kept and why).

    The winner's branch is the product of the run; it stays unless asked otherwise. A run
    that can still resume needs every candidate branch, so those stay too unless ``force``
    (the record may be wrong, never the branches: fold never deletes what a record needs).
    Every ``magi/<run>/*`` branch is accounted for, named by the record or not (a prep
    killed before its first save leaves branches no record names), and everything under the
    run's own folder of trees goes (a clone a kill left half made, under its temporary name).
    """
    r = ctx.run
    removed = remove_judge_worktrees(ctx)
    from magi.graph.review import remove_reviewer_worktrees

    removed += remove_reviewer_worktrees(ctx)
    removed += drop_spares(ctx.git, ctx.spares())
    kept: list[str] = []
    winner = r.tally.winner if r.tally else None
    keep_all = r.status.resumable and not force
    winner_branch = r.candidate(winner).branch if winner else None
    for c in r.candidates:
        if c.worktree and _ours(ctx, c.worktree):
            discard(ctx.git, Path(c.worktree))
            removed.append(c.worktree)
            c.worktree = None
    # Only branches under the run's own prefix: a `magi review` candidate is the user's own
    # branch, which no fold deletes.
    prefix = f"magi/{r.id}/"
    named = {c.branch for c in r.candidates if c.branch.startswith(prefix)}
    for branch in sorted({*ctx.git.branches(prefix), *named}):
        if not ctx.git.ref_exists(f"refs/heads/{branch}"):
            continue  # folded before: say only what this fold really removed
        if keep_winner_branch and branch == winner_branch:
            kept.append(f"{branch}: the winner's branch, the product of the run")
            continue
        if keep_all:
            kept.append(
                f"{branch}: the run is {r.status.value} and can resume "
                f"(`magi fold --force {r.id}` deletes it)"
            )
            continue
        # A stray worktree of magi's on it goes ("Cannot delete branch … checked out"); one of
        # yours keeps the branch, and what you have in it.
        yours = free_branch(ctx.git, branch, ctx.worktree_root())
        if yours:
            kept.append(
                f"{branch}: checked out in your worktree {yours[0]} (left as it is; "
                f"`git worktree remove {yours[0]}`, then `magi fold {r.id}` again)"
            )
            continue
        ctx.git.delete_branch(branch)
        removed.append(branch)
    # What no record names: verification checkouts, a worktree a killed prep made.
    root = Path(r.worktree_root).parent if r.worktree_root else None
    for path in worktrees_of(ctx.git, r.id, [root] if root else []):
        discard(ctx.git, path)
        removed.append(str(path))
    run_root = Path(r.worktree_root) if r.worktree_root else None
    # Only a folder named for the run (as start made it): a record edited to name another
    # directory has it left alone.
    if (
        run_root is not None
        and run_root.name == r.id
        and run_root.is_dir()
        and not run_root.is_symlink()
    ):
        for leftover in sorted(run_root.iterdir()):  # the run's own folder: all of it is magi's
            discard(ctx.git, leftover)
            removed.append(str(leftover))
        run_root.rmdir()
    r.folded = True
    ctx.save()
    return removed, kept
