"""The winner's road, shared by review, e2e, fix, gate and merge: its candidate and worktree."""

from __future__ import annotations

from pathlib import Path

from magi.graph.context import Context, Stop
from magi.state.model import Candidate, RunStatus
from magi.state.review import E2eResult, Review

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
    """The winner's worktree on its branch; recreated when `magi fold` removed it."""
    c = winner(ctx)
    if c.worktree and Path(c.worktree).is_dir():
        return Path(c.worktree)
    path = ctx.worktree_root() / c.label
    ctx.git.run("worktree", "prune")
    if not path.is_dir():
        ctx.git.run("worktree", "add", "--end-of-options", str(path), c.branch)
    with ctx.lock:
        c.worktree = str(path)
        ctx.save()
    return path


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
