"""A forked wave: what one seat job did, sealed, and the join that takes it in.

A wave whose seats need several runners' logins is forked (``magi.graph.fork``): one seat
job per label set runs at the same time as the others, each from the record as the fork
left it, each asking only its own seats. A seat's work touches only what is keyed by that
seat: ``seats[<seat>]``, its turns, its questions, the redactions of its prompts
(``prompt:<seat>``), the artifacts whose names carry it, and what the wave records per
seat: an implementer's candidate and its branch's objects, a judge's first judgement
(``judgements``), a judge's vote (``votes``), a reviewer's seat in the open round and its
findings (their ids carry the seat). So a seat job's result is that, and nothing
else (``delta``), sealed with the pool's runner key as a ``fork`` (it cannot stand for a
whole run, nor a run for it), and the join puts each delta in place of the seats' state at
the fork (``absorb``): no two records are merged, and what one seat job did cannot touch
another's seats.
"""

from __future__ import annotations

import json
from typing import Any

from magi.action.seal import BUNDLE, bundle_of
from magi.core.review.loop import finding_id, reviewer_number
from magi.core.seats.runners import PANEL_NODES, agent_labels, same_labels
from magi.errors import ActionError, StaleFork
from magi.git.repo import Git
from magi.model.review import FindingRecord, ReviewRound, ReviewSeat
from magi.model.run import (
    Candidate,
    Event,
    Question,
    Ranking,
    Redaction,
    Run,
    Seat,
    Turn,
    Vote,
)
from magi.state.store import Store

__all__ = ["DELTA", "StaleFork", "absorb", "artifact_names", "delta", "fork_seats", "slug"]

DELTA = "fork.json"


def slug(labels: list[str]) -> str:
    """A label set as a file name of the record ref (``fork/<slug>.sealed``)."""
    return "+".join(labels)


def _wave(run: Run) -> list[str]:
    """Every seat of the forked wave, in seat order: the implementers', the judges', or the
    open review round's."""
    if run.fork_node == "implement":
        return [c.seat for c in run.candidates]
    if run.fork_node == "review":
        rnd = _open_round(run)
        return [s.seat for s in rnd.seats] if rnd is not None else []
    return [j.seat for j in run.judges]  # a deliberation's fork asks them in turn


def _open_round(run: Run) -> ReviewRound | None:
    """The review round a review wave was forked in: the last, still open."""
    if run.review is None or not run.review.rounds or run.review.rounds[-1].closed:
        return None
    return run.review.rounds[-1]


def fork_seats(run: Run, labels: list[str]) -> list[str]:
    """The seats of the fork's group ``labels``: those whose agent needs exactly these."""
    out = []
    known = {a.id for a in run.config.agents}
    for seat in run.fork_seats or _wave(run):
        if run.seats[seat].agent not in known:
            continue  # a judges' panel withholds who holds the seats it does not ask
        agent = run.config.agent(run.seats[seat].agent)
        if same_labels(agent_labels(run.config, agent)) == same_labels(labels):
            out.append(seat)
    return out


def artifact_names(run: Run, seats: list[str]) -> list[str]:
    """The artifacts of ``seats``' turns (``<node>-<seat>-t<n>.*``)."""
    return sorted(
        name
        for t in run.turns
        if t.seat in seats
        for name in (t.prompt_artifact, t.reply_artifact, t.raw_artifact)
        if name
    )


def delta(
    run: Run, store: Store, git: Git, seats: list[str], labels: list[str]
) -> dict[str, bytes]:
    """What this seat job did for ``seats``, as the members of a sealed ``fork``."""
    mine = set(seats)
    body: dict[str, Any] = {
        "fork_id": run.fork_id,
        "node": run.fork_node,
        "labels": labels,
        "seats": seats,
        "candidates": [c.model_dump(mode="json") for c in run.candidates if c.seat in mine],
        "judgements": [
            j.model_dump(mode="json")
            for j in run.judgements
            if j.seat in mine and run.fork_node == "judge"
        ],
        "votes": [
            v.model_dump(mode="json")
            for v in run.votes
            if v.seat in mine and run.fork_node == "vote"
        ],
        "deliberation": [
            d.model_dump(mode="json")
            for d in run.deliberation
            if d.seat in mine and run.fork_node == "deliberate"
        ],
        "review": _review_delta(run, mine),
        "seat_records": {s: run.seats[s].model_dump(mode="json") for s in seats},
        "turns": [t.model_dump(mode="json") for t in run.turns if t.seat in mine],
        "questions": [q.model_dump(mode="json") for q in run.questions if q.seat in mine],
        "redactions": [
            r.model_dump(mode="json")
            for r in run.redactions
            if r.where.removeprefix("prompt:") in mine
        ],
        "events": [e.model_dump(mode="json") for e in run.events if e.node == run.fork_node],
    }
    members = {DELTA: json.dumps(body, indent=1).encode()}
    folder = store.run_dir(run.id)
    for name in artifact_names(run, seats):
        path = folder / name
        if path.is_file() and not path.is_symlink():
            members[name] = path.read_bytes()
    bundle = bundle_of(git, run, [c for c in run.candidates if c.seat in mine])
    if bundle is not None:
        members[BUNDLE] = bundle
    return members


def _review_delta(run: Run, mine: set[str]) -> dict[str, Any] | None:
    """The open round's seats of ``mine`` and their findings, in a review wave's fork."""
    rnd = _open_round(run) if run.fork_node == "review" else None
    if rnd is None:
        return None
    return {
        "round": rnd.round,
        "head": rnd.head,
        "seats": [s.model_dump(mode="json") for s in rnd.seats if s.seat in mine],
        "findings": [f.model_dump(mode="json") for f in rnd.findings if f.seat in mine],
    }


def _review_answers(
    run: Run, data: Any, mine: set[str], where: str
) -> tuple[ReviewRound, list[ReviewSeat], list[FindingRecord]] | None:
    """A review wave's seat job's answers, checked: its own seats of the open round, and
    their findings numbered again as magi numbers them (``finding_id``), whatever ids the
    result carried. Nothing of the run is changed here."""
    if data is None:
        return None
    rnd = _open_round(run)
    if run.fork_node != "review" or rnd is None:
        raise ActionError(f"{where}: it holds answers of a wave other than {run.fork_node}")
    try:
        if not isinstance(data, dict) or (data["round"], data["head"]) != (rnd.round, rnd.head):
            raise ActionError(f"{where}: it is not the result of review round {rnd.round}")
        seats = [ReviewSeat.model_validate(x) for x in data["seats"]]
        findings = [FindingRecord.model_validate(x) for x in data["findings"]]
    except (KeyError, TypeError, ValueError) as e:
        raise ActionError(f"{where}: what it holds does not validate: {e}") from None
    if {x.seat for x in seats} - mine or {f.seat for f in findings} - mine:
        raise ActionError(f"{where}: it holds seats that are not its own")
    if any(f.round != rnd.round for f in findings):
        raise ActionError(f"{where}: it holds findings of another round")
    numbered: list[FindingRecord] = []
    for seat in sorted({f.seat for f in findings}):
        try:
            reviewer = reviewer_number(seat)
        except ValueError as e:
            raise ActionError(f"{where}: {e}") from None
        theirs = [f for f in findings if f.seat == seat]
        numbered += [
            f.model_copy(update={"id": finding_id(rnd.round, reviewer, n)})
            for n, f in enumerate(theirs, start=1)
        ]
    return rnd, seats, numbered


def _apply_review(
    answers: tuple[ReviewRound, list[ReviewSeat], list[FindingRecord]], mine: set[str]
) -> None:
    rnd, seats, findings = answers
    got = {x.seat: x for x in seats}
    rnd.seats = [got.get(x.seat, x) for x in rnd.seats]
    order = {x.seat: i for i, x in enumerate(rnd.seats)}
    kept = [f for f in rnd.findings if f.seat not in mine]
    rnd.findings = sorted(
        [*kept, *findings],
        key=lambda f: (order.get(f.seat, len(order)), int(f.id.rsplit("-", 1)[1])),
    )


def _read(members: dict[str, bytes], where: str) -> dict[str, Any]:
    try:
        data = json.loads(members[DELTA].decode("utf-8"))
    except (KeyError, UnicodeDecodeError, ValueError) as e:
        raise ActionError(f"{where}: its {DELTA} does not read: {e}") from None
    if not isinstance(data, dict):
        raise ActionError(f"{where}: its {DELTA} is not an object")
    return data


def absorb(
    run: Run,
    members: dict[str, bytes],
    labels: list[str],
    store: Store,
    git: Git,
    where: str,
    host: str | None = None,
    seats: list[str] | None = None,
) -> list[str]:
    """Put what the seat job of ``labels`` did in place of its seats' state at the fork;
    the labels of the candidates it settled. ActionError when it speaks for other seats,
    or for another wave; StaleFork when it is an earlier fork's. ``seats``: the group's
    seats as the fork made them (the join reads every group's before it absorbs any: a
    seat handed to another group's agent by failover moves between groups). Everything
    is checked before anything of ``run`` is changed."""
    data = _read(members, where)
    if data.get("fork_id", "") != run.fork_id:
        raise StaleFork(f"{where}: it is the result of an earlier fork of this run")
    seats = fork_seats(run, labels) if seats is None else seats
    if data.get("labels") != labels or sorted(data.get("seats") or []) != sorted(seats):
        raise ActionError(f"{where}: it is not the result of the seats of {', '.join(labels)}")
    if data.get("node", "implement") != run.fork_node:
        raise ActionError(f"{where}: it is not a result of the {run.fork_node} wave")
    mine = set(seats)
    try:
        candidates = {c.seat: c for c in map(Candidate.model_validate, data["candidates"])}
        records = {k: Seat.model_validate(v) for k, v in data["seat_records"].items()}
        turns = [Turn.model_validate(t) for t in data["turns"]]
        questions = [Question.model_validate(q) for q in data["questions"]]
        redactions = [Redaction.model_validate(r) for r in data["redactions"]]
        events = [Event.model_validate(e) for e in data["events"]]
        judgements = [Ranking.model_validate(j) for j in data.get("judgements", [])]
        votes = [Vote.model_validate(v) for v in data.get("votes", [])]
        argued = [Ranking.model_validate(d) for d in data.get("deliberation", [])]
    except (KeyError, TypeError, ValueError) as e:
        raise ActionError(f"{where}: what it holds does not validate: {e}") from None
    said = {*candidates, *records, *(t.seat for t in turns), *(q.seat for q in questions)}
    said |= {j.seat for j in judgements} | {v.seat for v in votes} | {d.seat for d in argued}
    if said - mine:
        raise ActionError(f"{where}: it holds seats that are not its own")
    if (
        (judgements and run.fork_node != "judge")
        or (votes and run.fork_node != "vote")
        or (argued and run.fork_node != "deliberate")
    ):
        raise ActionError(f"{where}: it holds answers of a wave other than {run.fork_node}")
    viable = set(run.labels)
    named = [x for j in (*judgements, *argued) for x in j.ranking]
    named += [v.vote for v in votes if v.vote]
    if set(named) - viable:
        raise ActionError(f"{where}: it names candidates the run does not have")
    review = _review_answers(run, data.get("review"), mine, where)
    for c in run.candidates:
        got = candidates.get(c.seat)
        if got is not None and (got.label != c.label or got.branch != c.branch):
            raise ActionError(f"{where}: candidate {c.label} is not the fork's")
    moving = [
        c
        for c in run.candidates
        if c.seat in candidates
        and candidates[c.seat].head
        and candidates[c.seat].head != run.base_sha
    ]
    if moving and members.get(BUNDLE) is None:
        raise ActionError(f"{where}: its candidates moved and it holds no bundle")
    # Checked: now taken in.
    order = {seat: i for i, seat in enumerate(_wave(run))}
    if judgements:
        kept = [j for j in run.judgements if j.seat not in mine]
        run.judgements = sorted([*kept, *judgements], key=lambda j: order.get(j.seat, len(order)))
    if votes:
        kept_votes = [v for v in run.votes if v.seat not in mine]
        run.votes = sorted([*kept_votes, *votes], key=lambda v: order.get(v.seat, len(order)))
    if argued:
        # In the order the judges argued: by round, then in seat order.
        kept_args = [d for d in run.deliberation if d.seat not in mine]
        run.deliberation = sorted(
            [*kept_args, *argued], key=lambda d: (d.round, order.get(d.seat, len(order)))
        )
    if review is not None:
        _apply_review(review, mine)
    for i, c in enumerate(run.candidates):
        if c.seat in candidates:
            run.candidates[i] = candidates[c.seat].model_copy(update={"worktree": c.worktree})
    for name, seat in records.items():
        if seat.session_host is None or seat.session_host != host:
            # Its conversation lives on the seat job's runner, not here: full context next.
            seat.session_id = seat.session_host = None
        # A panel's seat job never saw whom the seat passed from: the join's list stays.
        before = run.seats[name].failover_from if name in run.seats else []
        seat.failover_from = [*before, *(a for a in seat.failover_from if a not in before)]
    run.seats.update(records)
    have = {(t.seat, t.node, t.turn) for t in run.turns}
    run.turns += [t for t in turns if (t.seat, t.node, t.turn) not in have]
    run.questions = [q for q in run.questions if q.seat not in mine] + questions
    run.redactions = [r for r in run.redactions if r.where.removeprefix("prompt:") not in mine]
    run.redactions += redactions
    # A panel's copy of an event is worded as a judges' runner may read it, and is still
    # the same event: a judges' wave's are known by time and node (the seat job's own are
    # later than any here), any other by their words too.
    panel = run.fork_node in PANEL_NODES

    def known(e: Event) -> tuple[object, ...]:
        return (e.at, e.node) if panel else (e.at, e.node, e.message)

    seen = {known(e) for e in run.events}
    run.events += [e for e in events if known(e) not in seen]
    folder = store.run_dir(run.id) / "artifacts"
    folder.mkdir(parents=True, exist_ok=True)
    for name, blob in members.items():
        if (
            name.startswith("artifacts/")
            and not (folder / name.removeprefix("artifacts/")).exists()
        ):
            (folder / name.removeprefix("artifacts/")).write_bytes(blob)
    moved = [run.candidate(candidates[s].label) for s in seats if s in candidates]
    _fetch(git, run, moved, members.get(BUNDLE), where)
    return [c.label for c in moved if c.head]


def _fetch(git: Git, run: Run, moved: list[Candidate], bundle: bytes | None, where: str) -> None:
    """The settled candidates' branches into this checkout from the bundle, each at its
    recorded head, and a clone this runner has of one put on that head."""
    from magi.action.agents_job.adopt import _current, _fetch_candidates

    heads = [c for c in moved if c.head and c.head != run.base_sha]
    if heads and bundle is None:
        raise ActionError(f"{where}: its candidates moved and it holds no bundle")
    if heads and bundle is not None:
        _fetch_candidates(git, run.model_copy(update={"candidates": heads}), bundle, where)
    for c in heads:
        _current(git, c.worktree, c.branch, c.head or "")
