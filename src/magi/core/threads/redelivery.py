"""Which of GitHub's recorded deliveries a receiver starting up asks GitHub to send again.

The receiver keeps no state: GitHub's own record of each delivery, and what the receiver
answered it, is the journal. The receiver answers ``200`` once a delivery's work is done
(or there was none), and ``202`` with the body ``WORKING`` when the work outlived the time
it waits before answering (the work goes on after the answer). So, at start-up:

- a delivery GitHub recorded without an answer (``status_code`` 0: the receiver was down,
  killed mid-delivery, or slower than GitHub's 10 s) or with a 5xx (the receiver could not
  work) was never done: it is asked again;
- one answered ``202`` may have been killed after its answer: it is asked again when the
  answer's body says ``WORKING`` (``GET /app/hook/deliveries/{id}`` holds the body; an older
  receiver answered every delivery ``202`` with other words, and those are not replayed);
- one answered with another 2xx was done; a 4xx was refused (a bad signature, a body that is
  not a delivery), and asking again would be refused again.

A delivery is its ``guid``: GitHub lists each attempt (the first, and every redelivery,
``redelivery: true``) as a row of its own with that ``guid``. Its newest attempt says what
was answered; its FIRST attempt says how old the event is. Every redelivery is a new
attempt, so a window measured from the newest one would replay a delivery that always
outlives the wait at every start, forever. So a delivery is replayed only when:

- its first attempt (``redelivery: false``) was read and is at or after ``since`` (one
  whose first attempt is past the rows read is older than them, hence than ``since``);
- it has had fewer than ``MAX_ATTEMPTS`` attempts (two redeliveries at most, whoever asked);

and the deliveries to replay come oldest first (by first attempt), the order the events
happened in: "label, then unlabel" while the receiver was down is asked again in that order.
https://docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries
https://docs.github.com/en/rest/apps/webhooks#list-deliveries-for-an-app-webhook
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

__all__ = ["MAX_ATTEMPTS", "WORKING", "Verdict", "attempted_at", "to_replay", "verdict"]

WORKING = "working"  # the 202 body's status: the work was still going when answered
MAX_ATTEMPTS = 3  # a delivery's first attempt and two redeliveries: no more are asked

Verdict = str  # "again", "ask" (a 202: read its answer first), "done"


def verdict(status_code: int) -> Verdict:
    """What an attempt answered ``status_code`` means for a receiver starting up."""
    if status_code == 0 or status_code >= 500:
        return "again"
    if status_code == 202:
        return "ask"
    return "done"


def attempted_at(row: Mapping[str, Any]) -> datetime | None:
    """When GitHub made this attempt (``delivered_at``), or None when the row says no time."""
    raw = row.get("delivered_at")
    if not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None


def _by_guid(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Each delivery's attempts, oldest first; a row without a ``guid``, ``id`` or time is
    skipped."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        guid = row.get("guid")
        if isinstance(guid, str) and isinstance(row.get("id"), int) and attempted_at(row):
            out.setdefault(guid, []).append(row)
    for attempts in out.values():
        attempts.sort(key=lambda r: (attempted_at(r), r["id"]))
    return out


def to_replay(rows: Iterable[Mapping[str, Any]], since: datetime) -> list[Mapping[str, Any]]:
    """The newest attempt of each delivery that may be asked again (see above), oldest
    delivery first; whether it is asked again is then its ``verdict``."""
    picked: list[tuple[datetime, Mapping[str, Any]]] = []
    for attempts in _by_guid(rows).values():
        first, newest = attempts[0], attempts[-1]
        when = attempted_at(first)
        if first.get("redelivery") is not False or when is None or when < since:
            continue  # its first attempt is older than what was read, or than ``since``
        if len(attempts) >= MAX_ATTEMPTS:
            continue
        picked.append((when, newest))
    picked.sort(key=lambda p: p[0])
    return [row for _, row in picked]
