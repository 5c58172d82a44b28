"""Decision mode: positions alone, the clerk's grouping, the weighted count, bounded debate.

Round 1 asks every seat alone. The clerk groups the positions by meaning (seeing only
``P1``, ``P2`` ...), code counts (``core.council.rules.count_positions``). When nothing passes,
each seat gets its own debate prompt with the others as Sage A, Sage B ..., and the
positions are grouped and counted again, at most ``debate_limit`` times. Suggested
changes get ids as they are raised and are put to every seat in the next round.
"""

from __future__ import annotations

from magi.core.council.answers import ClerkAnswer, DebateAnswer, PositionAnswer
from magi.core.council.prompts import clerk_prompt, debate_prompt, position_prompt, text
from magi.core.council.rules import (
    PanelSeat,
    change_outcome,
    count_positions,
    debate_limit,
    grouping,
    item_labels,
    sage_aliases,
)
from magi.council.rounds import Council, Job, ask_phase
from magi.council.setup import panel_of
from magi.state.council import ChangeRecord, PositionGroup, RoundTally

__all__ = ["clerk_groups", "run_decision"]

# (position, rationale, confidence) a seat holds now.
Held = dict[str, tuple[str, str, float | None]]


def clerk_answer(
    c: Council, round_no: int, items: list[tuple[str, str]], kind: str
) -> ClerkAnswer | None:
    """The clerk's valid answer on ``items`` (label, text), or None (no clerk, or none valid)."""
    labels = [label for label, _ in items]
    if len(labels) < 2 or c.rec.clerk is None:
        return None
    prompt = clerk_prompt(c.rec.question.cleaned, items, kind, c.rec.language)
    job = Job(seat="clerk", agent=c.rec.clerk, prompt=prompt, labels=labels)
    return ask_phase(c, f"clerk-{kind}", round_no, [job], ClerkAnswer)["clerk"]


def clerk_groups(
    c: Council, round_no: int, items: list[tuple[str, str]], kind: str
) -> tuple[list[list[str]], bool]:
    """The clerk's groups of ``items`` (label, text), or every label alone; (groups, by_clerk)."""
    labels = [label for label, _ in items]
    answer = clerk_answer(c, round_no, items, kind)
    groups = grouping(labels, answer.groups if answer is not None else None)
    return groups, answer is not None


def _tally(c: Council, panel: list[PanelSeat], held: Held, round_no: int) -> bool:
    seats = [s.seat for s in panel if s.seat in held]
    labels = item_labels("P", len(seats))
    by_label = dict(zip(labels, seats, strict=True))
    items = [(label, held[by_label[label]][0]) for label in labels]
    groups, by_clerk = clerk_groups(c, round_no, items, "positions")
    seat_groups = [[by_label[label] for label in g] for g in groups]
    count = count_positions(
        panel,
        {s: held[s][0] for s in seats},
        seat_groups,
        c.rec.threshold,
        c.rec.min_supporters,
    )
    tally = RoundTally(
        round=round_no,
        groups=[
            PositionGroup(seats=list(p.seats), weight=p.weight, text=p.text)
            for p in count.positions
        ],
        total=count.total,
        passed=count.positions.index(count.passed) if count.passed is not None else None,
        grouped_by="clerk" if by_clerk else "alone",
        reason=count.reason,
    )
    with c.lock:
        c.rec.tallies = [t for t in c.rec.tallies if t.round != round_no] + [tally]
        c.save()
    return count.passed is not None


def _raise(c: Council, round_no: int, seat: str, suggestions: list[str]) -> None:
    with c.lock:
        for body in suggestions:
            if any(
                ch.round == round_no and ch.seat == seat and ch.text == body for ch in c.rec.changes
            ):
                continue  # resumed: already recorded
            cid = f"S{len(c.rec.changes) + 1}"
            c.rec.changes.append(ChangeRecord(id=cid, round=round_no, seat=seat, text=body))


def run_decision(c: Council) -> None:
    rec = c.rec
    panel = panel_of(rec)
    evidence = c.evidence
    lang = rec.language
    done = c.timed("ask")
    jobs = [
        Job(
            s.seat,
            s.agent,
            position_prompt(rec.question.cleaned, evidence, _persona(c, s.seat), lang),
        )
        for s in panel
    ]
    first = ask_phase(c, "ask", 0, jobs, PositionAnswer)
    held: Held = {}
    for seat, answer in first.items():
        if answer is not None:
            held[seat] = (answer.position, answer.rationale, answer.confidence)
            _raise(c, 0, seat, answer.suggestions)
    done()
    if len(held) < 2:
        _finish(c, "inconclusive", None, f"{len(held)} seat(s) answered; nothing to count")
        return
    passed = _tally(c, panel, held, 0)
    limit = debate_limit(len(held), rec.rounds)
    round_no = 0
    while not passed and round_no < limit:
        round_no += 1
        done = c.timed(f"debate-{round_no}")
        held = _debate(c, panel, held, round_no)
        rec.debate_rounds = round_no
        done()
        if len(held) < 2:
            _finish(c, "inconclusive", None, f"{len(held)} seat(s) answered debate {round_no}")
            return
        passed = _tally(c, panel, held, round_no)
        # A council that lost seats in this round is held to the limit of what is left:
        # two seats get one debate round, however many sat down.
        limit = min(limit, debate_limit(len(held), rec.rounds))
    last = rec.tallies[-1]
    if last.passed is not None:
        _finish(c, "passed", last.groups[last.passed].text, last.reason)
    else:
        ran = (
            f"after {rec.debate_rounds} debate round(s)"
            if rec.debate_rounds
            else "no debate allowed"
        )
        _finish(c, "no_consensus", None, f"{last.reason}; {ran}")


def _persona(c: Council, seat: str) -> str | None:
    for s in c.rec.panel_seats:
        if s.seat == seat:
            return s.personality_text
    return None


def _debate(c: Council, panel: list[PanelSeat], held: Held, round_no: int) -> Held:
    rec = c.rec
    order = [s.seat for s in panel if s.seat in held]
    open_changes = [ch for ch in rec.changes if ch.outcome == "open" and ch.round < round_no]
    ids = [ch.id for ch in open_changes]
    jobs = []
    for s in panel:
        if s.seat not in held:
            continue
        aliases = sage_aliases(s.seat, order, text(rec.language, "sage"))
        others = [(aliases[o], held[o][0], held[o][1]) for o in order if o != s.seat]
        prompt = debate_prompt(
            rec.question.cleaned,
            round_no=round_no,
            own=held[s.seat][:2],
            others=others,
            changes=[(ch.id, ch.text) for ch in open_changes],
            personality=_persona(c, s.seat),
            lang=rec.language,
            evidence=c.evidence,
        )
        jobs.append(Job(s.seat, s.agent, prompt, ids=ids))
    answers = ask_phase(c, "debate", round_no, jobs, DebateAnswer)
    now: Held = {}
    for seat, answer in answers.items():
        if answer is None:
            continue  # out of this round: counts zero, stays in the total
        now[seat] = (answer.position, answer.rationale, answer.confidence)
        for vote in answer.changes:
            ch = next(x for x in open_changes if x.id == vote.id)
            ch.votes[seat] = vote.adopt
            ch.reasons[seat] = vote.reason
        _raise(c, round_no, seat, answer.suggestions)
    for ch in open_changes:
        ch.outcome = change_outcome(panel, ch.votes, rec.threshold)
    c.persist()
    return now


def _finish(c: Council, verdict: str, position: str | None, reason: str) -> None:
    with c.lock:
        c.rec.verdict = verdict  # type: ignore[assignment]
        c.rec.position = position
        c.rec.reason = reason
        c.save()
