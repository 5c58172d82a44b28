"""verify: verify.e2e in every viable candidate's worktree, in parallel, before any judge sits.

Most of what best-of-N picking gains comes from grounding the pick in execution, so each
judge's packet carries every candidate's pass/fail and the tail of its output.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from magi.graph.context import Context
from magi.graph.implement import viable
from magi.shell import run_checks
from magi.state.model import Candidate, RunStatus

NAME = "verify"
STATUS = RunStatus.VERIFYING


def run(ctx: Context) -> None:
    v = ctx.config.verify
    if not (v.candidates and v.e2e):
        return
    todo = [
        c
        for c in ctx.run.candidates
        if viable(c) and c.worktree and (c.verification is None or c.verification.head != c.head)
    ]
    if not todo:
        return
    with ThreadPoolExecutor(
        max_workers=min(ctx.config.graph.max_parallel, len(todo)), thread_name_prefix="verify"
    ) as pool:
        for f in [pool.submit(_one, ctx, c) for c in todo]:
            f.result()


def _one(ctx: Context, c: Candidate) -> None:
    assert c.worktree is not None  # noqa: S101 - filtered on by run()
    ctx.reporter.seat(f"verify-{c.label}", "running")
    result = run_checks(
        ctx.config.verify.e2e,
        cwd=Path(c.worktree),
        timeout=ctx.config.graph.timeout_verify,
        environ=ctx.environ,
        output_max_bytes=ctx.config.graph.output_max_bytes,
        head=c.head,
        cancel=ctx.cancel,
    )
    ctx.check_cancelled()  # killed by cancellation: not a verdict on the candidate
    with ctx.lock:
        c.verification = result
        ctx.save()
    ctx.reporter.seat(f"verify-{c.label}", "passed" if result.passed else "failed")
