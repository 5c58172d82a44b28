"""The winner's road, shared by review, e2e, fix, gate and merge: its candidate and clone."""

from __future__ import annotations

from pathlib import Path

from magi.git import clones
from magi.graph.context import Context, Stop
from magi.graph.prep import hooks_dir
from magi.model.review import E2eResult, Review
from magi.model.run import Candidate, FileStat, RunStatus

TAIL_CHARS = 3000


def winner(ctx: Context) -> Candidate:
    r = ctx.run
    label = r.tally.winner if r.tally else None
    if label is None:
        raise Stop(RunStatus.FAILED, "no winner to review")
    return r.candidate(label)


def ensure_review(ctx: Context) -> Review:
    """The run's review record, created on first use with the winner's label and branch."""
    with ctx.lock:
        if ctx.run.review is None:
            c = winner(ctx)
            ctx.run.review = Review(label=c.label, branch=c.branch)
            ctx.save()
        return ctx.run.review


def worktree(ctx: Context) -> Path:
    """The winner's clone, on its branch at the head the repository has (recreated when
    `magi fold` removed it, or when it is a linked worktree an older magi made)."""
    c = winner(ctx)
    if c.worktree and not clones.made_by_magi(Path(c.worktree), ctx.worktree_root()):
        # `magi review` of a branch checked out in the user's own tree: worked in as it is,
        # never removed or made again.
        return Path(c.worktree)
    path = Path(c.worktree) if c.worktree else ctx.worktree_root() / c.label
    base = ctx.run.base_sha or ctx.run.base
    clones.adopt_or_make(ctx.git, path, branch=c.branch, base=base, hooks=hooks_dir(ctx))
    clones.sync(ctx.git, path, c.branch, ctx.git.rev_parse(f"refs/heads/{c.branch}"))
    if c.worktree != str(path):
        with ctx.lock:
            c.worktree = str(path)
            ctx.save()
    return path


def head(ctx: Context) -> str:
    """The winner's head, as review, e2e and the gate go on from it: its branch's head in the
    repository, which ``worktree`` puts its clone on (no clone is read or synced: those
    nodes check a tree of their own); under ``magi review`` of your own tree, its HEAD."""
    c = winner(ctx)
    if c.worktree and not clones.made_by_magi(Path(c.worktree), ctx.worktree_root()):
        return ctx.git.head(Path(c.worktree))
    return ctx.git.rev_parse(f"refs/heads/{c.branch}")


def files(ctx: Context, base: str, head: str) -> list[FileStat]:
    """``base..head``'s files (numstat), read once per process: the leak scan and every
    reviewer's prompt of a round name the same files."""
    key = f"winner.files:{base}..{head}"
    with ctx.lock:
        known = ctx.cache.get(key)
    if isinstance(known, list):
        return known
    found = ctx.git.numstat(base, head)
    with ctx.lock:
        ctx.cache[key] = found
    return found


def tree(ctx: Context, commit: str) -> str:
    return ctx.git.rev_parse(f"{commit}^{{tree}}")


def e2e_text(e: E2eResult | None) -> str | None:
    """An e2e result as a reader sees it, always naming the commit it checked."""
    if e is None or e.deferred:
        return None
    verdict = "PASSED" if e.passed else ("TIMED OUT" if e.timed_out else "FAILED")
    code = "" if e.exit_code is None else f", exit code {e.exit_code}"
    cmds = "; ".join(e.commands) or "(no commands configured)"
    return (
        f"{verdict}{code} on commit {e.head} — ran: {cmds}\n"
        f"--- last lines of output ---\n{e.tail[-TAIL_CHARS:]}"
    )
