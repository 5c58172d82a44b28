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
* **an implementer seat's agent.** Stored ids become ``agent-<n>`` in roster order, the
  committed config's order again; so an implementer seat, its turns and its failovers say
  ``[redacted]`` instead, and their CLI sessions (whose id formats differ from CLI to CLI)
  are dropped.
* **what an implementer's CLI printed.** Its raw output (``*.raw.txt``) is in the CLI's own
  format (one stream of JSON events or another, its own error wording), which names the CLI
  as plainly as its name: it is withheld, and a failed turn's error is replaced by a
  neutral sentence. Its usage (whether dollars are reported or only tokens tells the CLIs
  apart too) is pooled onto the wave's first turn, so budgets over published records still
  add up.

Judges are not authors: their seats keep their aliases. Once the tally is stored the
whole record is published, and this copy is replaced by it.
"""

from __future__ import annotations

from dataclasses import dataclass

from magi.model.run import Run, Usage

__all__ = ["HIDDEN", "HIDDEN_ERROR", "PublicCopy", "public_copy"]

HIDDEN = "[redacted]"
HIDDEN_ERROR = "the turn failed; what its CLI said is withheld until the tally"


@dataclass(frozen=True)
class PublicCopy:
    run: Run
    withheld: frozenset[str]  # artifact file names (``artifacts/<name>``) its turns name
    implementers: frozenset[str]  # impl-A ...

    def publishes(self, name: str) -> bool:
        """Whether artifact ``name`` may go out with the copy: no implementer's raw CLI
        output, whether a turn names it or it is only named like one."""
        if name in self.withheld:
            return False
        raw = name.endswith(".raw.txt")
        return not (raw and any(f"-{seat}-" in name for seat in self.implementers))


def public_copy(run: Run) -> PublicCopy:
    """``run`` as it may be published before its tally (see the module docstring)."""
    out = run.model_copy(deep=True)
    out.seed = 0
    implementers = {c.seat for c in out.candidates}
    for name, seat in out.seats.items():
        if name in implementers:
            seat.agent = HIDDEN
            seat.session_id = None
            seat.failover_from = []
    withheld: set[str] = set()
    pooled = Usage()
    first = None
    for turn in out.turns:
        if turn.seat not in implementers:
            continue
        turn.agent = HIDDEN
        turn.session_id = None
        if turn.raw_artifact is not None:
            withheld.add(turn.raw_artifact.rsplit("/", 1)[-1])
            turn.raw_artifact = None
        if turn.error is not None:
            turn.error = HIDDEN_ERROR
        pooled = pooled + turn.usage
        turn.usage = Usage()
        first = first or turn
    if first is not None:
        first.usage = pooled
    return PublicCopy(out, frozenset(withheld), frozenset(implementers))
