"""review: each reviewer seat, in its own detached worktree pinned at the commit under review.

The winner only. A round starts when the previous one is closed and the loop goes on; it
records the commit under review and the seats it expects, then asks every seat that has no
answer yet (a resumed run asks only those). Reviewers are blind like judges: the prompt names
no author, and the winner's author never reviews its own candidate when another agent can
sit. The checkout is read-only: whatever a reviewer changes there is put back, and the git
control files are restored, so no reviewer perturbs the tree the fixer works on. A reviewer
lost to a rate limit under ``incomplete_review = "block"`` stalls the run in its round
(``_stop_if_rate_limited``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from magi.core.compete.blind import strip_trailers
from magi.core.review.loop import decide, number_findings, rate_limit_stall, reviewer_agents
from magi.core.review.prompts import review_prompt
from magi.core.seats.runners import joined_seats
from magi.core.seats.seating import seat_name
from magi.core.text.answers import ReviewAnswer
from magi.git.checkout import discard, lease, release, reset_to
from magi.git.worktree_guard import GuardSnapshot, restore
from magi.graph import review_blind
from magi.graph.context import Context, Stop, seat_order
from magi.graph.fork import fork_wave
from magi.graph.winner import e2e_text, ensure_review, winner
from magi.graph.winner import files as winner_files
from magi.graph.winner import head as winner_head
from magi.model.review import ReviewRound, ReviewSeat
from magi.model.run import RunStatus
from magi.seats import RETRYABLE, ask_structured, ensure_seat
from magi.seats.jailing import applies_jail, decision

NAME = "review"
STATUS = RunStatus.REVIEWING


SHARED = "reviewers"  # the one tree of jailed reviewers


def reviewer_worktree(ctx: Context, seat: str, head: str) -> Path:
    """``<root>/<seat>``, detached at ``head``, clean; jailed, one tree for every reviewer
    (read-only to each in the jail, as the judges' is: ``judge.judge_worktree``)."""
    path = _tree_of(ctx, seat)
    if path.is_dir() and reset_to(ctx.git, path, head):
        return path
    discard(ctx.git, path)  # a tree that cannot be shown clean is made again
    lease(ctx.git, head, path, spares=ctx.spares())
    return path


def _tree_of(ctx: Context, seat: str) -> Path:
    return ctx.worktree_root() / (SHARED if decision(ctx).jailed else seat)


def _trees(ctx: Context, seats: list[ReviewSeat], head: str) -> dict[str, Path]:
    """Each seat's tree, made one after another; jailed, the one they share is made (and
    shown clean) once, not once a seat."""
    made: dict[Path, Path] = {}
    out: dict[str, Path] = {}
    for s in seats:
        where = _tree_of(ctx, s.seat)
        if where not in made:
            made[where] = reviewer_worktree(ctx, s.seat, head)
        out[s.seat] = made[where]
    return out


def remove_reviewer_worktrees(ctx: Context, *, keep: bool = False) -> list[str]:
    """Reviewer checkouts go once the loop has ended (and with ``magi fold``); with ``keep``
    they become spares for the checks that follow."""
    root = ctx.worktree_root()
    removed = []
    trees = [*root.glob("review-*"), *root.glob(SHARED)] if root.is_dir() else []
    for path in sorted(trees):
        if keep:
            release(ctx.git, path, spares=ctx.spares())
        else:
            ctx.git.worktree_remove(path)
        removed.append(str(path))
    return removed


def _seated(ctx: Context) -> list[ReviewSeat]:
    author = ctx.run.author(winner(ctx).label) or ""
    agents = reviewer_agents(list(ctx.seating.reviewers), ctx.roster, author)
    out = []
    for i, agent in enumerate(agents, start=1):
        seat = seat_name("review", i)
        record = ensure_seat(ctx, seat, agent)  # a seat keeps its conversation across rounds
        out.append(ReviewSeat(seat=seat, agent=record.agent))
    return out


def start_round(ctx: Context) -> ReviewRound | None:
    """The round to work on: the open one, or a new one when the loop goes on."""
    rv = ensure_review(ctx)
    g = ctx.config.graph
    if rv.rounds and not rv.rounds[-1].closed:
        return rv.rounds[-1]
    if rv.rounds and (
        rv.rounds[-1].round >= g.review_rounds
        or decide(
            rv,
            max_rounds=g.review_rounds,
            incomplete=g.incomplete_review,
            operator_fixes=ctx.run.operator_fixes,
        ).verdict
        != "continue"
    ):
        return None
    if g.review_rounds == 0:
        return None
    head = winner_head(ctx)
    # The material is scanned before the round is recorded: on_leak = fail asks no seat.
    review_blind.scan(ctx, head, rv.rounds[-1] if rv.rounds else None, len(rv.rounds) + 1)
    rnd = ReviewRound(round=len(rv.rounds) + 1, head=head, seats=_seated(ctx))
    with ctx.lock:
        rv.rounds.append(rnd)
        c = winner(ctx)
        c.head = head
        ctx.save()
    ctx.event(NAME, f"round {rnd.round}: reviewing {head[:12]} with {len(rnd.seats)} seat(s)")
    return rnd


def run(ctx: Context) -> None:
    rnd = start_round(ctx)
    if rnd is None:
        return
    asked = joined_seats(ctx.environ, "review", rnd.round)  # by a join's seat jobs, this pass
    todo = [s for s in rnd.seats if s.status in RETRYABLE and s.seat not in asked]
    if todo:
        fork_wave(ctx, "review", [s.seat for s in todo])
        paths = _trees(ctx, todo, rnd.head)
        guard = GuardSnapshot.take(ctx.git, list(paths.values()))
        with ThreadPoolExecutor(
            max_workers=min(ctx.config.graph.max_parallel, len(todo)), thread_name_prefix="review"
        ) as pool:
            for f in [pool.submit(_one, ctx, rnd, s, paths[s.seat], guard) for s in todo]:
                f.result()
    _stop_if_rate_limited(ctx, rnd)


def _stop_if_rate_limited(ctx: Context, rnd: ReviewRound) -> None:
    """The run stops stalled when a reviewer was lost to a rate limit under
    ``incomplete_review = "block"`` (``rate_limit_stall`` says why). A forked round's join
    asks the same (``magi.action.agents_job.compete``)."""
    why = rate_limit_stall(rnd, ctx.config.graph.incomplete_review, ctx.run.id)
    if why is not None:
        raise Stop(RunStatus.STALLED, why)


def _build(ctx: Context, rnd: ReviewRound, seat: str, live: bool) -> str:
    rv = ensure_review(ctx)
    c = winner(ctx)
    base = ctx.run.base_sha or ctx.run.base
    prev = rv.rounds[rnd.round - 2] if rnd.round > 1 else None
    answered_before = prev is not None and any(
        s.seat == seat and s.status == "ok" for s in prev.seats
    )
    incremental = live and answered_before and prev is not None and prev.head != rnd.head
    since = prev.head if incremental and prev is not None else base
    patch, cut = ctx.git.patch(since, rnd.head, max_bytes=ctx.config.graph.patch_max_bytes)
    e2e = e2e_text(prev.e2e) if prev else None
    return review_prompt(
        ctx.run.task.cleaned,
        round=rnd.round,
        rounds=ctx.config.graph.review_rounds,
        head=rnd.head,
        files=review_blind.redact_files(ctx, winner_files(ctx, base, rnd.head)),
        patch=review_blind.redact(ctx, patch),
        patch_cut=cut,
        summary=review_blind.redact(ctx, strip_trailers(c.summary)),
        e2e=None if e2e is None else review_blind.redact(ctx, e2e),
        earlier=review_blind.redact_findings(ctx, prev.findings) if prev else (),
        report=review_blind.redact_report(ctx, prev.fix) if prev else None,
        incremental=incremental,
        prompts=ctx.config.prompts,
        language=ctx.config.graph.language,
    )


def _one(ctx: Context, rnd: ReviewRound, seat: ReviewSeat, cwd: Path, guard: GuardSnapshot) -> None:
    answer, status, error = ask_structured(
        ctx,
        seat=seat.seat,
        node=NAME,
        build=lambda live: _build(ctx, rnd, seat.seat, live),
        shape=ReviewAnswer,
        labels=[],
        cwd=cwd,
    )
    with ctx.lock:
        violations = restore(ctx.git, guard)
    # Jailed, the tree and the git directory are read-only to every reviewer: nothing in
    # them can have changed, and reading a whole checkout to say so costs a checkout's read.
    jailed = decision(ctx).jailed and applies_jail(ctx, ctx.run.seats[seat.seat].agent)
    if not jailed and (
        ctx.git.run("status", "--porcelain", cwd=cwd).strip() or ctx.git.head(cwd) != rnd.head
    ):
        reviewer_worktree(ctx, seat.seat, rnd.head)
        violations.append("changed its read-only checkout (put back)")
    if violations:
        ctx.event(NAME, f"{seat.seat}: " + "; ".join(violations), "warn")
    with ctx.lock:
        seat.agent = ctx.run.seats[seat.seat].agent  # failover may have handed the seat on
        seat.status = status
        seat.error = error
        if answer is not None:
            found = number_findings(rnd.round, seat.seat, answer.findings)
            rnd.findings = sorted(
                [f for f in rnd.findings if f.seat != seat.seat] + found,
                key=lambda f: (seat_order(f.seat), int(f.id.rsplit("-", 1)[1])),
            )
        ctx.save()
