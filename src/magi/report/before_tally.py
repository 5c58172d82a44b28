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
* **what an implementer's CLI said, and how it worked.** Its raw output (``*.raw.txt``, in
  the CLI's own format) and its replies are withheld, as are the candidates' summaries and
  no-op evidence (its words, in its style); a failed turn's error and failure kind are
  replaced by a neutral sentence; its turns are listed in seat order with no duration (a
  timeout's duration is the agent's configured timeout; the order they ended in, their
  speed). Their spend is pooled as one dollar figure on the first of them (whether dollars
  are reported or only tokens tells CLIs apart, and so would two snapshots' difference):
  budgets over published records still add up. A leak the scan found keeps its label and
  place, not its term (the term is usually the author's own name).

Judges keep their seats and order; the candidates' patches go out only after the tally
(compete writes no bundle before it). Once the tally is stored the whole record is
published, and this copy is replaced by it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from magi.core.figures.pricing import price_table, spend
from magi.model.run import Run, Usage

__all__ = ["HIDDEN", "HIDDEN_ERROR", "PublicCopy", "public_copy", "public_event"]

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


@dataclass(frozen=True)
class PublicCopy:
    run: Run
    withheld: frozenset[str]  # artifact file names (``artifacts/<name>``) its turns name
    implementers: frozenset[str]  # impl-A ...

    def publishes(self, name: str) -> bool:
        """Whether artifact ``name`` may go out with the copy: no implementer's raw CLI
        output or reply, whether a turn names it or it is only named like one."""
        if name in self.withheld:
            return False
        theirs = name.endswith((".raw.txt", ".reply.md"))
        return not (theirs and any(f"-{seat}-" in name for seat in self.implementers))


def public_copy(run: Run) -> PublicCopy:
    """``run`` as it may be published before its tally (see the module docstring)."""
    out = run.model_copy(deep=True)
    out.seed = 0
    implementers = {c.seat for c in out.candidates}
    for seat in out.seats.values():
        seat.agent = HIDDEN
        seat.session_id = None
        seat.failover_from = []
    for c in out.candidates:
        c.summary = HIDDEN_TEXT if c.summary else ""
        c.noop_evidence = HIDDEN_TEXT if c.noop_evidence else None
    for leak in out.leaks:
        leak.term = HIDDEN
    for event in out.events:
        event.message = public_event(event.message)
    withheld: set[str] = set()
    theirs = [t for t in out.turns if t.seat in implementers]
    spent = spend(theirs, price_table(out.config.budget.prices))
    for turn in out.turns:
        turn.agent = HIDDEN
        turn.session_id = None
        if turn.seat not in implementers:
            continue
        for name in (turn.raw_artifact, turn.reply_artifact):
            if name is not None:
                withheld.add(name.rsplit("/", 1)[-1])
        turn.raw_artifact = turn.reply_artifact = None
        turn.error = HIDDEN_ERROR if turn.error is not None else None
        turn.failure = None
        turn.duration_s = 0.0
        turn.usage = Usage()
    ordered = sorted(theirs, key=lambda t: (t.seat, t.turn, t.started_at))
    if ordered:
        ordered[0].usage = Usage(cost_usd=round(spent.usd, 6)) if spent.metered else Usage()
        slots = iter(ordered)
        out.turns = [next(slots) if t.seat in implementers else t for t in out.turns]
    return PublicCopy(out, frozenset(withheld), frozenset(implementers))
