"""judge: each judge, in its own detached read-only worktree, ranks every viable candidate blind."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from magi.core.seats.runners import joined_seats
from magi.core.text.answers import JudgeAnswer
from magi.core.text.bounds import cap
from magi.git import refs_guard
from magi.git.checkout import lease
from magi.git.worktree_guard import GuardSnapshot, restore
from magi.graph.context import Context, Stop, seat_order
from magi.graph.fork import fork_wave
from magi.graph.packets import all_packets, judge_context, viable_labels
from magi.model.run import JudgeSeat, Ranking, RunStatus, upsert
from magi.seats import RETRYABLE, ask_structured
from magi.seats.jailing import decision

NAME = "judge"
STATUS = RunStatus.JUDGING


SHARED = "judges"  # the one tree of a jailed panel


def judge_worktree(ctx: Context, seat: str) -> Path:
    """Where ``seat`` judges: jailed, one tree for the whole panel, which the jail makes
    read-only to every judge (none can change what another reads, so a checkout each
    would buy nothing: 2,000 files are 0.3 to 0.7 s of system time each here); unjailed,
    a tree each, so what one judge leaves in its own is not before the others."""
    return ctx.worktree_root() / (SHARED if decision(ctx).jailed else seat)


def ensure_judge_worktree(ctx: Context, seat: str) -> Path:
    path = judge_worktree(ctx, seat)
    with ctx.lock:  # the vote's seats ask at once, and share one tree when jailed
        if not path.exists():
            lease(ctx.git, ctx.run.base_sha or ctx.run.base, path, spares=ctx.spares())
    return path


def run(ctx: Context) -> None:
    r = ctx.run
    labels = viable_labels(ctx)
    if len(labels) == 1:
        if not r.judge_skipped:
            r.judge_skipped = True
            ctx.event(NAME, f"only candidate {labels[0]} is viable: uncontested, no judge sits")
            ctx.save()
        return
    if not r.judges:
        raise Stop(RunStatus.FAILED, "graph.judges = 0 but several candidates are viable")
    done = {j.seat for j in r.judgements if j.status not in RETRYABLE}
    done |= joined_seats(ctx.environ, "judge")  # asked by a join's seat jobs in this pass
    todo = [j for j in r.judges if j.seat not in done]
    if not todo:
        return
    pin_branches(ctx)
    all_packets(ctx)  # the leak scan runs (and may stop the run) before any judge is asked
    fork_wave(ctx, "judge", [j.seat for j in todo])
    for j in todo:  # a checkout takes repository locks: one at a time, before the wave
        ensure_judge_worktree(ctx, j.seat)
    guard = GuardSnapshot.take(ctx.git, [])
    with ThreadPoolExecutor(
        max_workers=min(ctx.config.graph.max_parallel, len(todo)), thread_name_prefix="judge"
    ) as pool:
        for f in [pool.submit(_one, ctx, j, labels, guard) for j in todo]:
            f.result()


def pin_branches(ctx: Context) -> None:
    """Each candidate branch must still point at the head recorded after its own turn.

    Worktrees share refs, so one implementer could move or delete another's branch; the
    judges must see what each seat actually left, so a moved branch is put back. One
    ``for-each-ref`` reads them all.
    """
    heads = {c.branch: c.head for c in ctx.run.candidates if c.head is not None and c.produced}
    off = refs_guard.off_heads(ctx.git, heads)
    refs_guard.put(ctx.git, {branch: heads[branch] for branch in off})
    for c in ctx.run.candidates:
        if c.branch not in off:
            continue
        with ctx.lock:
            c.violations = [*c.violations, f"branch {c.branch} was moved by another seat; restored"]
        ctx.event(NAME, f"branch {c.branch} did not point at its recorded head; restored", "warn")
    if off:
        ctx.save()


def _one(ctx: Context, judge: JudgeSeat, labels: list[str], guard: GuardSnapshot) -> None:
    cwd = ensure_judge_worktree(ctx, judge.seat)
    answer, status, error = ask_structured(
        ctx,
        seat=judge.seat,
        node=NAME,
        build=lambda _live: judge_context(ctx, judge.seat),
        shape=JudgeAnswer,
        labels=labels,
        cwd=cwd,
    )
    with ctx.lock:
        violations = restore(ctx.git, guard)
        if violations:
            ctx.event(
                NAME,
                f"{judge.seat} tampered with git control files (restored): "
                + "; ".join(violations),
                "warn",
            )
        ranking = Ranking(
            seat=judge.seat,
            status=status,
            ranking=list(answer.ranking) if answer else [],
            text=cap(answer.rationale if answer else error, ctx.config.graph.text_max_chars),
            round=0,
        )
        judgements = upsert(ctx.run.judgements, ranking, key=lambda j: j.seat)
        ctx.run.judgements = sorted(judgements, key=lambda j: seat_order(j.seat))
        ctx.save()
