"""gate: every verify.gate command must exit 0 on the final head before a merge is attempted.

The record says the gate ran, on which head and when, even with zero commands configured
(seed 003: an empty gate once meant both "never attempted" and "nothing to run"). A gate
that already passed on this head is not run again on resume; a red gate blocks the run
with the command and its output.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from magi.git.checkout import clean_worktree, drop_spares
from magi.graph.context import Context, Stop
from magi.graph.fix import conclude
from magi.graph.guard import after_checks
from magi.graph.review import remove_reviewer_worktrees
from magi.graph.winner import ensure_review
from magi.graph.winner import head as winner_head
from magi.model.review import CheckResult, Gate
from magi.model.run import RunStatus
from magi.sandbox.shell import run_checks

NAME = "gate"
STATUS = RunStatus.GATING


def run(ctx: Context) -> None:
    rv = ensure_review(ctx)
    if rv.outcome not in ("clean", "skipped"):
        conclude(ctx)  # a loop stopped early (or resumed mid-way) is decided here, not skipped
        if rv.outcome not in ("clean", "skipped"):
            raise Stop(RunStatus.BLOCKED, "review: the loop has not ended clean")
    remove_reviewer_worktrees(ctx, keep=True)
    head = winner_head(ctx)
    g = ctx.run.gate
    if g is None or not g.ran or g.head != head:
        g = check(ctx, head)
    drop_spares(ctx.git, ctx.spares())  # no node after the gate needs a tree of its own
    if not g.passed:
        last = g.results[-1] if g.results else None
        what = f"`{last.command}` exited {last.exit_code}" if last else "failed"
        tail = last.tail.strip().splitlines()[-1:] if last else []
        raise Stop(
            RunStatus.BLOCKED, f"gate: {what} on {head[:12]}" + (f": {tail[0]}" if tail else "")
        )


def check(ctx: Context, head: str) -> Gate:
    """Run the gate commands in order on ``head``, stopping at the first that fails.

    They run in a fresh detached checkout of ``head``, never in the winner's own tree; with
    no command there is nothing to run and no checkout is made.
    """
    if not ctx.config.verify.gate:
        return _record(ctx, head, ctx.clock(), [])
    with clean_worktree(
        ctx.git, head, ctx.worktree_root() / "check-gate", spares=ctx.spares()
    ) as cwd:
        return _check(ctx, head, cwd)


def _check(ctx: Context, head: str, cwd: Path) -> Gate:
    commands = list(ctx.config.verify.gate)
    results: list[CheckResult] = []
    started = ctx.clock()
    for cmd in commands:
        ctx.reporter.seat("gate", "running", cmd)
        v = run_checks(
            [cmd],
            cwd=cwd,
            timeout=ctx.config.graph.timeout_verify,
            environ=ctx.environ,
            output_max_bytes=ctx.config.graph.output_max_bytes,
            head=head,
            cancel=ctx.cancel,
            jail=ctx.check_jail(cwd),
        )
        ctx.check_cancelled()
        results.append(
            CheckResult(
                command=cmd,
                exit_code=v.exit_code,
                timed_out=v.timed_out,
                tail=v.tail,
                duration_s=v.duration_s,
            )
        )
        if not v.passed:
            break
    if results:
        after_checks(ctx, NAME, "verify.gate")
    return _record(ctx, head, started, results)


def _record(ctx: Context, head: str, started: datetime, results: list[CheckResult]) -> Gate:
    commands = list(ctx.config.verify.gate)
    passed = len(results) == len(commands) and all(
        r.exit_code == 0 and not r.timed_out for r in results
    )
    gate = Gate(ran=True, head=head, at=started, commands=commands, results=results, passed=passed)
    with ctx.lock:
        ctx.run.gate = gate
        ctx.save()
    ctx.reporter.seat("gate", "passed" if passed else "failed")
    ctx.event(
        NAME, f"gate {'passed' if passed else 'failed'} on {head[:12]} ({len(commands)} command(s))"
    )
    return gate
