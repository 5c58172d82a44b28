"""fix: the fixer addresses the round's blocking findings (and a red e2e), then the loop decides.

The fixer is the winner's author seat, continuing its own conversation, unless
``roles.fixer`` names another agent (seat ``fix``). It gets the blocking findings by the ids
magi gave them and the e2e output, commits, and reports adopted / rejected by id. Whether the
round progressed is measured with git (a new commit whose tree differs), never taken from
the fixer's words. The last round never asks the fixer: its work could not be reviewed.

After the round closes, ``core.review.loop.decide`` ends the loop: clean goes on to the gate;
out of rounds, stagnant or short of reviewers stops the run blocked with the reason.

A fixer turn lost to quota or a timeout is not a fixer that produced nothing: the round
stays open and the run stops ``stalled``, and ``magi run --resume`` asks the fixer again in
the same round (reviewers that answered are not asked again; the finding ids stand). A
turn that failed outright (a crash, a failed login) stops the run ``failed``, and
``--resume --retry-failed`` asks again, as for any other seat. Progress is measured from
the commit the round reviewed, so work a lost turn (or ``magi fix``) committed counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from magi.agents.base import TurnResult
from magi.core.review.loop import decide, open_blocking
from magi.core.review.prompts import fix_prompt
from magi.core.text.answers import FixAnswer, parse_answer, reask_text
from magi.errors import AnswerError
from magi.git import clones
from magi.graph.context import Context, Stop
from magi.graph.handback import hand_back, watch
from magi.graph.winner import e2e_text, ensure_review, tree, winner, worktree
from magi.model.review import E2eResult, FindingRecord, FixReport, Rejected
from magi.model.run import RunStatus
from magi.seats import RETRYABLE, ask, ask_with_failover, ensure_seat, node_timeout

NAME = "fix"
STATUS = RunStatus.FIXING
RESCUE_MESSAGE = "Work left uncommitted at the end of the fix turn"


def fixer_seat(ctx: Context) -> tuple[str, str]:
    """(seat, agent): roles.fixer in seat ``fix``, else the winner's own implement seat."""
    if ctx.seating.fixer:
        return "fix", ctx.seating.fixer
    c = winner(ctx)
    author = ctx.run.author(c.label)
    if author is None:
        raise Stop(RunStatus.FAILED, f"the winner's seat {c.seat} has no recorded agent")
    return c.seat, author


def _answer(
    ctx: Context, seat: str, result: TurnResult, ids: list[str], cwd: Path, prompt: str
) -> tuple[FixAnswer | None, str, str]:
    if not result.ok:
        return None, result.status.value, result.error or ""
    try:
        return parse_answer(result.text, FixAnswer, finding_ids=ids), "ok", ""
    except AnswerError as e:
        error = e.message
    live = bool(ctx.run.seats[seat].session_id and ctx.config.graph.sessions)
    again = reask_text(FixAnswer.SHAPE, error)
    result = ask(
        ctx,
        seat=seat,
        node=NAME,
        prompt=again if live else prompt + "\n\n" + again,
        cwd=cwd,
        allow_write=True,
        timeout=node_timeout(ctx, NAME, ctx.run.seats[seat].agent) / 4,
        reask=True,
    )
    if not result.ok:
        return None, result.status.value, result.error or ""
    try:
        return parse_answer(result.text, FixAnswer, finding_ids=ids), "ok", ""
    except AnswerError as e:
        ctx.event(
            NAME, f"{seat}: fix report still malformed after one re-ask ({e.message})", "warn"
        )
        return None, "invalid", e.message


def fix_turn(
    ctx: Context,
    findings: Sequence[FindingRecord],
    e2e: E2eResult | None,
    *,
    since: str | None = None,
) -> FixReport:
    """One fixer turn on the review loop's blocking findings (and a red e2e); ``since`` as
    in ``fixer_turn``."""

    def build(live: bool) -> str:
        return fix_prompt(
            findings=findings,
            e2e=e2e_text(e2e) if e2e is not None and e2e.passed is False else None,
            task=None if live else ctx.run.task.cleaned,
            prompts=ctx.config.prompts,
            language=ctx.config.graph.language,
        )

    return fixer_turn(ctx, ids=[f.id for f in findings], build=build, since=since)


def fixer_turn(
    ctx: Context,
    *,
    ids: Sequence[str],
    build: Callable[[bool], str],
    since: str | None = None,
) -> FixReport:
    """One fixer turn in the winner's worktree; ``progressed`` is what git says happened.

    The one path that asks a fixer, shared by the review loop and landing's fix rounds:
    ``build(live)`` renders the prompt (``live``: the seat's conversation holds the task),
    ``ids`` are the ids its adopted / rejected answer may name. ``since``: the commit
    progress is measured from (a round's reviewed head); default the worktree's head
    before the turn.
    """
    seat, agent = fixer_seat(ctx)
    ensure_seat(ctx, seat, agent)
    cwd = worktree(ctx)
    c = winner(ctx)
    own = clones.git_of(ctx.git, cwd)
    # What e2e and verify left behind (caches, reports) is not the fixer's work: without this
    # the rescue commit below would commit it and pass for progress.
    own.run("reset", "-q", "--hard", "HEAD", cwd=cwd)
    own.run("clean", "-q", "-fd", cwd=cwd)
    tip = ctx.git.rev_parse(f"refs/heads/{c.branch}")  # what the turn starts from
    before = since or tip
    asked = list(ids)
    watched = watch(ctx, cwd)
    try:
        result = ask_with_failover(
            ctx, seat=seat, node=NAME, build=build, cwd=cwd, allow_write=True, label=c.label
        )
        answer, status, error = _answer(ctx, seat, result, asked, cwd, build(False))
    except BaseException:
        watched.abandon()
        raise
    back = hand_back(
        ctx,
        seat=seat,
        tree=cwd,
        branch=c.branch,
        since=tip,
        watched=watched,
        message=RESCUE_MESSAGE,
    )
    if found := [*back.own, *back.shared]:
        ctx.event(NAME, f"{seat}: git control files tampered and restored: " + "; ".join(found))
        with ctx.lock:
            rec = ctx.run.seats.get(seat)
            if rec is not None:
                rec.violations = [*rec.violations, *found]
    rescued = back.rescued
    after = back.head
    progressed = after != before and tree(ctx, after) != tree(ctx, before)
    base = ctx.run.base_sha or ctx.run.base
    with ctx.lock:
        c.head = after
        c.files = ctx.git.numstat(base, after)
        c.commits = ctx.git.commit_count(base, after)
        ctx.save()
    return FixReport(
        seat=seat,
        agent=ctx.run.seats[seat].agent,
        status=status,
        asked=asked,
        adopted=list(answer.adopted) if answer else [],
        rejected=[Rejected(id=r.id, reason=r.reason) for r in answer.rejected] if answer else [],
        head_before=before,
        head_after=after,
        progressed=progressed,
        rescued=rescued,
        error=error,
    )


def run(ctx: Context) -> None:
    rv = ensure_review(ctx)
    g = ctx.config.graph
    if rv.rounds and not rv.rounds[-1].closed:
        rnd = rv.rounds[-1]
        open_ = open_blocking(rv, ctx.run.operator_fixes)
        red = rnd.e2e is not None and rnd.e2e.passed is False
        owed = rnd.fix is None or rnd.fix.status in RETRYABLE  # never asked, or lost
        if (open_ or red) and rnd.round < g.review_rounds and owed:
            report = fix_turn(ctx, open_, rnd.e2e, since=rnd.head)
            with ctx.lock:
                rnd.fix = report
                rnd.progressed = report.progressed
                ctx.save()
            ctx.event(
                NAME,
                f"round {rnd.round}: {report.status}; adopted {', '.join(report.adopted) or 'none'}"
                f"; rejected {', '.join(r.id for r in report.rejected) or 'none'}; "
                + ("new tree" if report.progressed else "no new tree"),
            )
            _stop_if_lost(ctx, rnd.round, report)
        elif rnd.fix is not None and rnd.fix.status in RETRYABLE:
            # A lost turn whose findings were closed since (``magi fix``): what git measured.
            with ctx.lock:
                tip = ctx.git.rev_parse(f"refs/heads/{winner(ctx).branch}")
                rnd.progressed = tree(ctx, tip) != tree(ctx, rnd.head)
                ctx.save()
        with ctx.lock:
            rnd.closed = True
            ctx.save()
    conclude(ctx)


def _stop_if_lost(ctx: Context, round_no: int, report: FixReport) -> None:
    """A turn that never answered leaves the round open: the run can be resumed into it."""
    how = report.error or report.status
    if report.status in RETRYABLE:
        raise Stop(
            RunStatus.STALLED,
            f"review round {round_no}: the fixer's turn was lost ({how}); "
            f"`magi run --resume {ctx.run.id}` asks it again in this round",
        )
    if report.status == "error":
        raise Stop(
            RunStatus.FAILED,
            f"review round {round_no}: the fixer's turn failed ({how}); "
            f"`magi run --resume {ctx.run.id} --retry-failed` asks it again in this round",
        )


def conclude(ctx: Context) -> None:
    """Record how the loop ended; blocked stops the run here with the reason."""
    rv = ensure_review(ctx)
    g = ctx.config.graph
    d = decide(
        rv,
        max_rounds=g.review_rounds,
        incomplete=g.incomplete_review,
        operator_fixes=ctx.run.operator_fixes,
    )
    if d.verdict == "continue":
        return
    with ctx.lock:
        rv.outcome, rv.reason = d.outcome, d.reason
        ctx.save()
    if d.verdict == "blocked":
        raise Stop(RunStatus.BLOCKED, f"review: {d.reason}")


def done(ctx: Context) -> bool:
    """The loop's ``until``: the latest round is closed and the loop does not go on."""
    rv = ctx.run.review
    g = ctx.config.graph
    if g.review_rounds == 0:
        return True
    if rv is None:
        return False
    return (
        decide(
            rv,
            max_rounds=g.review_rounds,
            incomplete=g.incomplete_review,
            operator_fixes=ctx.run.operator_fixes,
        ).verdict
        != "continue"
    )
