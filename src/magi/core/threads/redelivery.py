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

Only each delivery's newest attempt counts (a redelivery shares its delivery's ``guid``),
and only attempts at or after ``since``.
https://docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries
https://docs.github.com/en/rest/apps/webhooks#list-deliveries-for-an-app-webhook
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

__all__ = ["WORKING", "Verdict", "newest_attempts", "verdict"]

WORKING = "working"  # the 202 body's status: the work was still going when answered

Verdict = str  # "again", "ask" (a 202: read its answer first), "done"


def verdict(status_code: int) -> Verdict:
    """What an attempt answered ``status_code`` means for a receiver starting up."""
    if status_code == 0 or status_code >= 500:
        return "again"
    if status_code == 202:
        return "ask"
    return "done"


def _when(row: Mapping[str, Any]) -> datetime | None:
    raw = row.get("delivered_at")
    if not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None


def newest_attempts(rows: Iterable[Mapping[str, Any]], since: datetime) -> list[Mapping[str, Any]]:
    """Each delivery's newest attempt at or after ``since`` (rows come newest first, as
    GitHub lists them); a row without a ``guid``, ``id`` or time is skipped."""
    seen: set[str] = set()
    out: list[Mapping[str, Any]] = []
    for row in rows:
        guid, when = row.get("guid"), _when(row)
        if not isinstance(guid, str) or not isinstance(row.get("id"), int) or when is None:
            continue
        if guid in seen:
            continue
        seen.add(guid)
        if when >= since:
            out.append(row)
    return out
