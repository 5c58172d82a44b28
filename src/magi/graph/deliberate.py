"""deliberate: on a split, judges argue in sequential rounds; code relays the transcript.

Deliberation is sequential by design: a turn must be able to answer the one before it.
Each judge continues its own conversation; a judge with no live conversation is re-sent its
full judging context rather than left to argue from memory it does not have.
"""

from __future__ import annotations

from collections.abc import Sequence

from magi.core.compete.prompts import deliberation_prompt
from magi.core.compete.tally import first_choices_split
from magi.core.seats.runners import joined_seats, stage_seats
from magi.core.text.answers import DeliberationAnswer
from magi.core.text.bounds import cap
from magi.graph.context import Context, Stop
from magi.graph.fork import fork_wave
from magi.graph.judge import ensure_judge_worktree
from magi.graph.packets import judge_context, viable_labels
from magi.model.run import Ranking, RunStatus, upsert
from magi.seats import RETRYABLE, ask_structured
from magi.seats.ask import ROUND

NAME = "deliberate"
STATUS = RunStatus.DELIBERATING

Transcript = list[tuple[str, Sequence[str], str]]


def transcript(ctx: Context) -> Transcript:
    return [(t.seat, t.ranking, t.text) for t in ctx.run.deliberation if t.status == "ok"]


def latest_rankings(ctx: Context) -> dict[str, list[str] | None]:
    """Each seated judge's most recent ranking: its last deliberation turn, else its first."""
    out: dict[str, list[str] | None] = {
        j.seat: (list(j.ranking) if j.status == "ok" else None) for j in ctx.run.judgements
    }
    for t in ctx.run.deliberation:
        if t.status == "ok":
            out[t.seat] = list(t.ranking)
    return out


def why_no_deliberation(judgements: Sequence[Ranking], rounds: int) -> str:
    """Why no judge argued, as it happened: agreement needs two judges that ranked."""
    if rounds == 0:
        return "deliberate_rounds = 0"
    ranked = [j.seat for j in judgements if j.status == "ok" and j.ranking]
    lost = ", ".join(f"{j.seat} {j.status}" for j in judgements if j.seat not in ranked)
    if not ranked:
        return f"no judge ranked the candidates ({lost or 'no judge sat'})"
    if len(ranked) == 1:
        return f"only {ranked[0]} ranked the candidates ({lost or 'the only judge'})"
    return "first choices agree"


def run(ctx: Context) -> None:
    r = ctx.run
    if r.deliberated or r.judge_skipped:
        return
    labels = viable_labels(ctx)
    rounds = ctx.config.graph.deliberate_rounds
    firsts = {j.seat: (j.ranking if j.status == "ok" else None) for j in r.judgements}
    if rounds == 0 or not first_choices_split(firsts, labels):
        r.deliberated = True
        ctx.event(NAME, f"no deliberation: {why_no_deliberation(r.judgements, rounds)}")
        ctx.save()
        return
    if stage_seats(ctx.environ) is not None and r.fork_node == NAME:
        _forked_turn(ctx, rounds, labels)
    ctx.event(NAME, "first choices split: deliberating")
    seated = [j.seat for j in r.judgements if j.status == "ok"]
    for rnd in range(1, rounds + 1):
        for seat in seated:
            if any(
                t.round == rnd and t.seat == seat and t.status not in RETRYABLE
                for t in r.deliberation
            ):
                continue  # recorded before a resume
            if seat in joined_seats(ctx.environ, NAME, rnd):
                continue  # its seat job asked it in this pass, whatever it ended in
            # A judge on another runner argues there, from a panel: one turn a fork.
            fork_wave(ctx, "deliberate", [seat], round=rnd)
            _turn(ctx, seat, rnd, rounds, labels)
        if not first_choices_split(latest_rankings(ctx), labels):
            ctx.event(NAME, f"first choices agree after round {rnd}")
            break
    r.deliberated = True
    ctx.save()


def _forked_turn(ctx: Context, rounds: int, labels: list[str]) -> None:
    """A deliberation fork's seat job: the one turn it was forked for, then the join's."""
    r = ctx.run
    seat, rnd = (r.fork_seats or [""])[0], r.fork_round
    done = any(
        t.round == rnd and t.seat == seat and t.status not in RETRYABLE for t in r.deliberation
    )
    if seat and not done:
        _turn(ctx, seat, rnd, rounds, labels)
    raise Stop(RunStatus.HANDED_OFF, "the wave's other seats are other runners'")


def _turn(ctx: Context, seat: str, rnd: int, rounds: int, labels: list[str]) -> None:
    ctx.cache[ROUND] = rnd  # a seat that passes to another runner's agent forks this turn
    cwd = ensure_judge_worktree(ctx, seat)
    so_far = transcript(ctx)

    def build(live: bool) -> str:
        return deliberation_prompt(
            round=rnd,
            rounds=rounds,
            seat=seat,
            transcript=so_far,
            context=None if live else judge_context(ctx, seat),
            prompts=ctx.config.prompts,
            language=ctx.config.graph.language,
        )

    answer, status, error = ask_structured(
        ctx,
        seat=seat,
        node=NAME,
        build=build,
        shape=DeliberationAnswer,
        labels=labels,
        cwd=cwd,
    )
    with ctx.lock:
        turn = Ranking(
            seat=seat,
            status=status,
            ranking=list(answer.ranking) if answer else [],
            text=cap(answer.argument if answer else error, ctx.config.graph.text_max_chars),
            round=rnd,
        )
        ctx.run.deliberation = upsert(ctx.run.deliberation, turn, key=lambda t: (t.round, t.seat))
        ctx.save()
