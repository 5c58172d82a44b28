"""The report for scripts (``magi show --json``): the view as JSON-ready values.

The keys of schema 1's report are kept exactly (scripts read them); ``warnings``, ``seats``
and ``stopped`` are added. Values go through pydantic's own JSON conversion, so datetimes
read as they do in ``run.json``.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic_core import to_jsonable_python

from magi.core.review.report import review_json
from magi.model.run import Run
from magi.report.view import USAGE_KEYS, CandidateView, RunView, UsageRow, build


def _plain(value: object) -> Any:
    return to_jsonable_python(value)


def _candidate(c: CandidateView) -> dict[str, Any]:
    data: dict[str, Any] = _plain(asdict(c))
    return data


def _usage(rows: tuple[UsageRow, ...]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        data = {"turns": row.turns, "seconds": row.seconds}
        data.update({key: getattr(row, key) for key in USAGE_KEYS})
        out[row.seat] = data
    return out


def view_json(view: RunView) -> dict[str, Any]:
    """The JSON report of a view."""
    return {
        "id": view.id,
        "status": view.status,
        "reason": view.reason,
        "created_at": view.created_at.isoformat(),
        "repo": view.repo,
        "base": view.base,
        "base_sha": view.base_sha,
        "seed": view.seed,
        "winner": view.winner,
        "authors_revealed": view.revealed,
        "task": view.task,
        "candidates": [_candidate(c) for c in view.candidates],
        "judges": [
            {"seat": j.seat, "agent": j.agent, "cli": j.cli, "order": list(j.order)}
            for j in view.judges
        ],
        "judgements": _plain(view.judgements),
        "deliberation": _plain(view.deliberation),
        "votes": _plain(view.votes),
        "tally": None if view.tally is None else _plain(view.tally),
        "leaks": _plain(view.leaks),
        "events": _plain(view.events),
        "timings": dict(view.timings),
        "usage": _usage(view.usage),
        "merge": view.merge,
        "warnings": list(view.warnings),
        "seats": [
            {
                "seat": s.name,
                "agent": s.agent,
                "status": s.status,
                "reason": s.reason,
                "holders": _plain(s.holders),
            }
            for s in view.seats
        ],
        "stopped": None if view.stopped is None else _plain(view.stopped),
    }


def report_json(run: Run) -> dict[str, Any]:
    """The report as a JSON-ready dict, for ``--json``."""
    # review, operator_fixes, gate, merge_record, follow_ups: the winner's road
    questions = [q.model_dump(mode="json") for q in run.questions]
    return {**view_json(build(run)), **review_json(run), "questions": questions}


def seat_usage(run: Run) -> dict[str, dict[str, Any]]:
    """Tokens, cost, turns and seconds per seat, summed over its turns, plus ``total``."""
    return _usage(build(run).usage)


def node_seconds(run: Run) -> dict[str, float | None]:
    """Wall seconds per node; computed from the timestamps when only those were stored."""
    return dict(build(run).timings)
