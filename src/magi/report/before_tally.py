"""The copy of a run that may leave the runner before its tally: nothing in it ties a
candidate to an agent.

A run that stops before its tally (a question it parks on, a panel out of quota, a budget
hold, a stop) is still published: the agents job uploads its record as the workflow's
artifact and publish stores it in ``refs/magi/runs/<id>``, both readable by everyone who
can read the repository. The posting gate already hides every roster id, kind and model in
it (``magi.core.threads.posting.gate_json``), but hiding the names is not enough when the
rest of the record can be put back together with what the repository holds in the open:

* **the seed.** Labels are drawn by ``shuffle_labels(n, seed)`` over the implementers in
  the order ``[roles] implementers`` lists them, and that list is in the committed config:
  the seed alone says who wrote A. The copy carries ``seed = 0``.
* **who sat where.** Stored ids become ``agent-<n>`` in roster order, the committed
  config's order again, and judges sit in ``[roles] judges`` order: so every seat, every
  turn and every failover list says ``[redacted]`` (a judge who is also an implementer would
  otherwise tie the two: "the agent that failed its login in impl-B lost judge-1 too"),
  and the sentences that tell a hand-on (``held by``, ``lost to``, ``handed to``) say only
  that a seat passed on. CLI sessions, whose id formats differ from CLI to CLI, are dropped.
* **what an implementer's CLI said, and how it worked.** Its raw output (in the CLI's own
  format) and its replies are withheld, as are the candidates' summaries and no-op
  evidence (its words, in its style) and what its code printed under the checks; a failed
  turn's error and failure kind are replaced by a neutral sentence; its turns are listed
  in seat order, each starting when the wave did and lasting no time (a timeout's
  duration is the agent's configured timeout; the order and time they ended in, its
  speed), the events' times are the run's start, and the implement wave's events are one
  block in the order of their words, not the order the seats ended in.
* **what the judges read and wrote.** A judge's packet holds every candidate's summary
  and patch, and its reasons quote them: before the tally only magi's implement prompts
  (the task) go out of ``artifacts/``, and the judges' texts say ``[withheld ...]``; their
  rankings and votes (labels only) stay.
* **how spend was reported.** Whether dollars are reported or only tokens tells CLIs apart,
  and so would two snapshots' difference: every turn's spend is one dollar figure (a
  model's name keying its tokens would be hidden anyway, collapsing its prices), the
  implementers' pooled on the first of them, so budgets over published records still add
  up (on the wave's first day, for a wave that crosses midnight).

A leak the scan found keeps its label and place, not its term (usually the author's own
name). The candidates' patches go out only after the tally (compete writes no bundle
before it). Once the tally is stored the whole record is published, and this copy is
replaced by it.

* **which candidates a stage finished.** A run handed off in the middle of its implement
  wave (a seat's agent is logged in on another runner: ``magi.core.seats.runners``) is
  published between its stages, and the runner labels each stage ran on are public: which
  candidates were done after which stage would say which agent wrote them. Until the wave
  is whole the copy shows every candidate pending, with no turn and no event of the wave;
  the prompts (the task) still go out. The next stage's labels are the first the run waits
  for in the roster's order, never in the candidates'.

What is left: when the wave started, how long the job ran, whether a seat
failed or timed out (the tracking comment says it anyway); and a per-agent timeout that
differs from the others' could be matched with a candidate that timed out.
"""

from __future__ import annotations

import re

from magi.core.figures.pricing import price_table, spend, turn_cost
from magi.core.seats.runners import PANEL_NODES, agent_labels, same_labels
from magi.core.threads.posting import hide_roster
from magi.model.run import Candidate, Run, RunStatus, Usage

__all__ = [
    "HIDDEN",
    "HIDDEN_ERROR",
    "PANEL_NODES",
    "panel_copy",
    "public_copy",
    "public_event",
    "published_before_tally",
    "wave_split",
]

HIDDEN = "[redacted]"
HIDDEN_ERROR = "the turn failed; what its CLI said is withheld until the tally"
HIDDEN_TEXT = "[withheld until the tally]"
PASSED_ON = (
    "a seat passed to the next agent of the roster; which, and why, is withheld until the tally"
)
_SEED = re.compile(r"\bseed \d+")
_HAND_ON = re.compile(r"\b(?:held by|lost to|handed to)\b")


def public_event(message: str) -> str:
    """A sentence of magi's as it may be read before the tally: a hand-on says only that,
    and a seed is not given (the run's first log line names it, for a local reader)."""
    if _HAND_ON.search(message):
        return PASSED_ON
    return _SEED.sub("seed withheld until the tally", message)


def published_before_tally(name: str, run: Run | None = None) -> bool:
    """Whether artifact ``name`` may go out before the tally: magi's implement prompts (the
    task as each seat got it), nothing an agent wrote or a judge read. None at all while
    ``run``'s wave is split between runners (``wave_split``): which seats have a prompt
    says which the stage asked."""
    if run is not None and wave_split(run):
        return False
    return name.startswith("implement-") and name.endswith(".prompt.md")


def wave_split(run: Run) -> bool:
    """The implement wave is handed off, or forked, before it was whole."""
    return run.status is RunStatus.HANDED_OFF and "implement" not in run.timings


def public_copy(run: Run) -> Run:
    """``run`` as it may be published before its tally (see the module docstring)."""
    out = run.model_copy(deep=True)
    if wave_split(out):
        _wave_withheld(out)
    # The runners the run waits for, in the roster's order: in the order its seats asked,
    # the first would be the lowest label's.
    out.handoff = _roster_order(out)
    prices = price_table(out.config.budget.prices)
    implementers = _implementers_withheld(out)
    for seat in out.seats.values():
        seat.agent = HIDDEN
        seat.session_id = None
        seat.session_host = None  # which runner ran a seat would say who sat there
        seat.session_total = None  # its models' names and a CLI's way of counting
        seat.cli_version = None  # a version number names its CLI
        seat.failover_from = []
    for c in out.candidates:
        c.summary = HIDDEN_TEXT if c.summary else ""
        c.noop_evidence = HIDDEN_TEXT if c.noop_evidence else None
        if c.verification is not None and c.verification.tail:
            c.verification.tail = HIDDEN_TEXT  # what the candidate's own code printed
    for ranking in (*out.judgements, *out.deliberation):
        ranking.text = HIDDEN_TEXT if ranking.text else ranking.text
    for vote in out.votes:
        vote.rationale = HIDDEN_TEXT if vote.rationale else vote.rationale
    _events_withheld(out)
    for turn in out.turns:
        turn.agent = HIDDEN
        turn.session_id = None
        if turn.seat in implementers:
            continue  # their spend is pooled already
        cost = turn_cost(turn.usage, prices)
        turn.usage = Usage(cost_usd=round(cost.usd, 6)) if cost is not None else Usage()
    return out


def panel_copy(run: Run, own: set[str]) -> Run:
    """``run`` as a judge's seat job on a runner that may not learn authors holds it;
    ``own``: the seats the fork asks there.

    The judges read the viable candidates by label (their summaries, patches, checks), so
    those stay, as does the agent that holds each of the fork's own seats (its seat job
    runs it). What ties a candidate to an agent goes, as in ``public_copy``:

    * the seed; who sat in each implementer's seat and how long its turns took; what its
      CLI said (replies, raw output, errors, questions);
    * the implement wave's event times and order; a leak's term; every roster id, kind
      and model an event names;
    * who holds the other judges' seats; whom a judge's seat passed from, and what its
      earlier holders did (the agent that failed, and how, beside an implementer's failed
      turn, names its author). So a seat job passing a seat on may try an agent that lost
      it before; the join keeps the whole list.

    The events of the judges' waves keep their times, so the join takes what the seat job
    adds and nothing twice (``agents_job.fork.absorb``).
    """
    out = run.model_copy(deep=True)
    implementers = _implementers_withheld(out)
    for name, seat in out.seats.items():
        if name in implementers:
            continue
        seat.failover_from = []  # whom it passed from: an agent that failed, beside impl-B's
        if name not in own:
            seat.agent = HIDDEN
            seat.session_id = seat.session_host = None
            seat.session_total = None
            seat.cli_version = None
    held = {name: seat.agent for name, seat in out.seats.items()}
    prices = price_table(out.config.budget.prices)
    for turn in out.turns:
        if turn.seat in implementers or turn.agent == held.get(turn.seat):
            continue
        turn.agent = HIDDEN
        turn.session_id = None
        turn.raw_artifact = turn.reply_artifact = None
        turn.error = HIDDEN_ERROR if turn.error is not None else None
        turn.failure = None
        cost = turn_cost(turn.usage, prices)  # a model's name keys its tokens
        turn.usage = Usage(cost_usd=round(cost.usd, 6)) if cost is not None else Usage()
    for c in out.candidates:
        if not c.viable:  # no judge reads it: its words and its code stay with the pool
            c.summary = HIDDEN_TEXT if c.summary else ""
            c.noop_evidence = HIDDEN_TEXT if c.noop_evidence else None
            c.head = None
    _events_withheld(out, keep=PANEL_NODES)
    for event in out.events:
        event.message = hide_roster(event.message, out.config.agents)
    out.questions = [q for q in out.questions if q.seat not in implementers]
    out.redactions = [
        r for r in out.redactions if r.where.removeprefix("prompt:") not in implementers
    ]
    out.processes = []
    return out


def _implementers_withheld(out: Run) -> set[str]:
    """Out of ``out``: the seed, who sat in each implementer's seat, and how its turns went
    (their spend and egress refusals pooled on the first, so budgets still add up); the
    implementers' seats."""
    out.seed = 0
    implementers = {c.seat for c in out.candidates}
    for name in implementers:
        seat = out.seats.get(name)
        if seat is not None:
            seat.agent = HIDDEN
            seat.session_id = None
            seat.session_host = None
            seat.session_total = None
            seat.cli_version = None
            seat.failover_from = []
    for leak in out.leaks:
        leak.term = HIDDEN
    prices = price_table(out.config.budget.prices)
    theirs = [t for t in out.turns if t.seat in implementers]
    spent = spend(theirs, prices)
    refused = sorted(host for t in theirs for host in t.refused)
    wave = min((t.started_at for t in theirs), default=None)
    for turn in theirs:
        turn.agent = HIDDEN
        turn.session_id = None
        turn.raw_artifact = turn.reply_artifact = None
        turn.error = HIDDEN_ERROR if turn.error is not None else None
        turn.failure = None
        turn.duration_s = 0.0
        turn.started_at = wave or turn.started_at
        turn.usage = Usage()
        turn.refused = []
    ordered = sorted(theirs, key=lambda t: (t.seat, t.turn))
    if ordered:
        ordered[0].usage = Usage(cost_usd=round(spent.usd, 6)) if spent.metered else Usage()
        ordered[0].refused = refused  # pooled too: which seat a refusal was could tell
        slots = iter(ordered)
        out.turns = [next(slots) if t.seat in implementers else t for t in out.turns]
    return implementers


def _events_withheld(out: Run, keep: frozenset[str] = frozenset()) -> None:
    """Events as they may be read before the tally: a hand-on says only that, no seed,
    every time (but those of the nodes ``keep``) the run's start, and the implement wave's
    in the order of their words (the order they came in is the order its seats ended, and,
    for a wave split between runners, which stage finished which candidate)."""
    for event in out.events:
        event.message = public_event(event.message)
        if event.node not in keep:
            event.at = out.created_at
    block = sorted((e for e in out.events if e.node == "implement"), key=lambda e: e.message)
    if block:
        first = next(i for i, e in enumerate(out.events) if e.node == "implement")
        rest = [e for e in out.events if e.node != "implement"]
        out.events = [*rest[:first], *block, *rest[first:]]


def _wave_withheld(out: Run) -> None:
    """A wave split between runners: no candidate, turn or event of it shows how far it got."""
    seats = {c.seat for c in out.candidates}
    out.candidates = [
        Candidate(label=c.label, seat=c.seat, branch=c.branch, worktree=c.worktree)
        for c in out.candidates
    ]
    out.turns = [t for t in out.turns if t.seat not in seats]
    out.events = [e for e in out.events if e.node != "implement"]
    out.questions = [q for q in out.questions if q.seat not in seats]


def _roster_order(out: Run) -> list[list[str]]:
    rank: dict[tuple[str, ...], int] = {}
    for i, agent in enumerate(out.config.agents):
        rank.setdefault(same_labels(agent_labels(out.config, agent)), i)
    return sorted(out.handoff, key=lambda labels: rank.get(same_labels(labels), len(rank)))
