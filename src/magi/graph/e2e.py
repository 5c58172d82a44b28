"""e2e: verify.e2e on the winner's head, once per round, bounded and capped.

The record keeps the commit it checked, when, the exit code and the tail, so no reader has
to guess which commit a red output was about. While blocking findings remain and rounds are
left it is deferred (recorded as deferred, never as green); the last round, and any round
whose review raised nothing blocking, always runs it on the head that round reviewed.
"""

from __future__ import annotations

from magi.core.review.loop import defer_e2e
from magi.git.checkout import clean_worktree
from magi.graph.context import Context
from magi.graph.guard import after_checks
from magi.graph.winner import ensure_review
from magi.graph.winner import head as winner_head
from magi.model.review import E2eResult
from magi.model.run import RunStatus
from magi.sandbox.shell import run_checks

NAME = "e2e"
STATUS = RunStatus.TESTING


def run(ctx: Context) -> None:
    rv = ensure_review(ctx)
    if not rv.rounds or rv.rounds[-1].closed or rv.rounds[-1].e2e is not None:
        return
    rnd = rv.rounds[-1]
    if defer_e2e(rv, max_rounds=ctx.config.graph.review_rounds):
        result = E2eResult(deferred=True, at=ctx.clock())
        ctx.event(NAME, f"round {rnd.round}: e2e deferred while blocking findings are open")
    else:
        result = check(ctx, rnd.head)
    with ctx.lock:
        rnd.e2e = result
        ctx.save()


def check(ctx: Context, head: str) -> E2eResult:
    """verify.e2e on the winner's head, in a clean checkout of it, which must be ``head``."""
    at_head = winner_head(ctx)
    if at_head != head:
        # The record must name what was actually checked, never what was meant to be.
        ctx.event(NAME, f"winner's branch is at {at_head[:12]}, not {head[:12]}", "warn")
    commands = list(ctx.config.verify.e2e)
    started = ctx.clock()
    if not commands:  # nothing to run: no checkout (a full one each round, for nothing)
        return E2eResult(head=at_head, at=started, passed=True, exit_code=0, commands=[])
    ctx.reporter.seat("e2e", "running")
    # A fresh checkout of the head: nothing a seat left uncommitted in the tree is run.
    with clean_worktree(
        ctx.git, at_head, ctx.worktree_root() / "check-e2e", spares=ctx.spares()
    ) as clean:
        v = run_checks(
            commands,
            cwd=clean,
            timeout=ctx.config.graph.timeout_verify,
            environ=ctx.environ,
            output_max_bytes=ctx.config.graph.output_max_bytes,
            head=at_head,
            cancel=ctx.cancel,
            jail=ctx.check_jail(clean),
        )
    ctx.check_cancelled()  # killed by cancellation: not a verdict on the winner
    after_checks(ctx, NAME, "the winner's verify.e2e")
    ctx.reporter.seat("e2e", "passed" if v.passed else "failed")
    return E2eResult(
        head=at_head,
        at=started,
        passed=v.passed,
        exit_code=v.exit_code,
        timed_out=v.timed_out,
        commands=commands,
        tail=v.tail,
        duration_s=v.duration_s,
    )
