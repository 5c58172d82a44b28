"""verify: verify.e2e on a clean checkout of every viable candidate's head, before judging.

Most of what best-of-N picking gains comes from grounding the pick in execution, so each
judge's packet carries every candidate's pass/fail and the tail of its output.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from magi.git.checkout import clean_worktree, dirty
from magi.graph.context import Context
from magi.graph.guard import after_checks
from magi.graph.implement import viable
from magi.model.run import Candidate, RunStatus
from magi.sandbox.shell import run_checks

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
    # git worktree add takes repository locks: the clean checkouts are made one at a time.
    with contextlib.ExitStack() as stack:
        clean = {
            c.label: stack.enter_context(
                clean_worktree(
                    ctx.git,
                    c.head or "",
                    ctx.worktree_root() / f"verify-{c.label}",
                    spares=ctx.spares(),
                )
            )
            for c in todo
        }
        with ThreadPoolExecutor(
            max_workers=min(ctx.config.graph.max_parallel, len(todo)), thread_name_prefix="verify"
        ) as pool:
            for f in [pool.submit(_one, ctx, c, clean[c.label]) for c in todo]:
                f.result()
    after_checks(ctx, NAME, "the candidates' verify.e2e")


def _one(ctx: Context, c: Candidate, clean: Path) -> None:
    """The checks run in a fresh checkout of the recorded head, never in the seat's own tree.

    Another implementer could have planted an uncommitted failing script there (or a
    passing one): what was dirty is recorded beside the verdict, and never run.
    """
    assert c.worktree is not None  # noqa: S101 - filtered on by run()
    dirt = dirty(ctx.git, Path(c.worktree)) if Path(c.worktree, ".git").exists() else []
    ctx.reporter.seat(f"verify-{c.label}", "running")
    result = run_checks(
        ctx.config.verify.e2e,
        cwd=clean,
        timeout=ctx.config.graph.timeout_verify,
        environ=ctx.environ,
        output_max_bytes=ctx.config.graph.output_max_bytes,
        head=c.head,
        cancel=ctx.cancel,
        jail=ctx.check_jail(clean),
    )
    ctx.check_cancelled()  # killed by cancellation: not a verdict on the candidate
    if dirt:
        result = result.model_copy(update={"dirty": dirt[:50]})
        ctx.event(
            NAME,
            f"candidate {c.label}: its worktree held uncommitted changes; verified the "
            f"recorded head {(c.head or '')[:12]} in a clean checkout instead",
            "warn",
        )
    with ctx.lock:
        c.verification = result
        ctx.save()
    ctx.reporter.seat(f"verify-{c.label}", "passed" if result.passed else "failed")
