"""vote: each judge asked alone, told nobody sees the answer, with no tally to drift toward."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from magi.core.compete.prompts import vote_prompt
from magi.core.seats.runners import joined_seats
from magi.core.text.answers import VoteAnswer
from magi.core.text.bounds import cap
from magi.graph.context import Context, seat_order
from magi.graph.deliberate import transcript
from magi.graph.fork import fork_wave
from magi.graph.judge import ensure_judge_worktree
from magi.graph.packets import judge_context, viable_labels
from magi.model.run import RunStatus, Vote, upsert
from magi.seats import RETRYABLE, ask_structured

NAME = "vote"
STATUS = RunStatus.VOTING


def run(ctx: Context) -> None:
    r = ctx.run
    if r.judge_skipped:
        return
    labels = viable_labels(ctx)
    done = {v.seat for v in r.votes if v.status not in RETRYABLE}
    done |= joined_seats(ctx.environ, "vote")  # asked by a join's seat jobs in this pass
    # A judge whose first judgement never came is not asked to vote blind of the candidates.
    todo = [j.seat for j in r.judgements if j.status == "ok" and j.seat not in done]
    if not todo:
        return
    fork_wave(ctx, "vote", todo)
    for seat in todo:  # git worktree add takes repository locks: one at a time, before the wave
        ensure_judge_worktree(ctx, seat)
    with ThreadPoolExecutor(
        max_workers=min(ctx.config.graph.max_parallel, len(todo)), thread_name_prefix="vote"
    ) as pool:
        for f in [pool.submit(_one, ctx, seat, labels) for seat in todo]:
            f.result()


def _one(ctx: Context, seat: str, labels: list[str]) -> None:
    cwd = ensure_judge_worktree(ctx, seat)
    said = transcript(ctx)

    def build(live: bool) -> str:
        return vote_prompt(
            labels=labels,
            context=None if live else judge_context(ctx, seat),
            transcript=said,
            prompts=ctx.config.prompts,
            language=ctx.config.graph.language,
            seat=seat,
        )

    answer, status, error = ask_structured(
        ctx,
        seat=seat,
        node=NAME,
        build=build,
        shape=VoteAnswer,
        labels=labels,
        cwd=cwd,
    )
    with ctx.lock:
        vote = Vote(
            seat=seat,
            status=status,
            vote=answer.vote if answer else None,
            rationale=cap(answer.rationale if answer else error, ctx.config.graph.text_max_chars),
        )
        votes = upsert(ctx.run.votes, vote, key=lambda v: v.seat)
        ctx.run.votes = sorted(votes, key=lambda v: seat_order(v.seat))
        ctx.save()
