"""What a record must hold before the next node may spend anything on it.

The store validates each field, but a field that is absent loads with its default: a
record that lost ``labels`` loaded as a run with no labels, re-invoked every judge, then
crashed, and ``magi fold`` deleted every candidate branch (issue 7). So before a resume
starts a seat, the record is checked as a whole: what prep wrote must agree with itself,
every seat named anywhere must be a seat of the run, and the shape of the config it ran
with must match what prep made (a recorded config that no longer validates, such as an
unbounded timeout, is refused by ``Store.load`` already). Any problem is a StateError
naming each, and nothing runs.
"""

from __future__ import annotations

from magi.errors import StateError
from magi.model.run import Run

_SHOWN = 8


def problems(run: Run) -> list[str]:
    """Every inconsistency that would make a node act on a guess (empty: the record is whole)."""
    found: list[str] = []
    cfg = run.config  # typed: a config that no longer validates fails at load already
    if run.candidates or run.judges or run.judgements or run.votes or run.tally:
        labels = sorted(c.label for c in run.candidates)
        if not run.candidates:
            found.append("candidates: missing, but the run has judges, judgements or votes")
        if run.labels != labels:
            found.append(f"labels: {run.labels} does not match the candidates' {labels}")
        if not run.base_sha:
            found.append("base_sha: missing")
        if not run.worktree_root:
            found.append("worktree_root: missing")
        if len(run.candidates) != cfg.graph.candidates:
            found.append(
                f"candidates: {len(run.candidates)} recorded, the config asks for "
                f"{cfg.graph.candidates}"
            )
        if run.candidates and len(run.judges) != cfg.graph.judges:
            found.append(
                f"judges: {len(run.judges)} recorded, the config asks for {cfg.graph.judges}"
            )
    seats = {j.seat for j in run.judges}
    for kind, named in (
        ("judgements", {t.seat for t in run.judgements}),
        ("deliberation", {t.seat for t in run.deliberation}),
        ("votes", {v.seat for v in run.votes}),
    ):
        if unknown := sorted(named - seats):
            found.append(f"{kind}: seats {', '.join(unknown)} are not judges of this run")
    for c in run.candidates:
        if c.seat not in run.seats:
            found.append(f"seats: {c.seat} (candidate {c.label}) has no seat record")
        if c.status == "ok" and c.produced and not c.head:
            found.append(f"candidates[{c.label}].head: missing for a finished implementer")
    for j in run.judges:
        if sorted(j.order) != sorted(run.labels):
            found.append(f"judges[{j.seat}].order: {j.order} is not the run's labels")
    if run.tally is not None and run.tally.winner and run.tally.winner not in run.labels:
        found.append(f"tally.winner: {run.tally.winner} is not a label of this run")
    return found


def require_whole(run: Run) -> None:
    """Raise a StateError listing what the record lacks; before anything is spent on it."""
    found = problems(run)
    if found:
        shown = "\n  ".join(found[:_SHOWN])
        more = f"\n  and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
        raise StateError(
            f"run {run.id}: the record is not whole, so nothing was started:\n  {shown}{more}\n"
            f"`magi fold --force {run.id}` discards the run"
        )
