"""At start-up, the receiver asks GitHub to send again what it did not finish.

GitHub never resends a delivery by itself; it keeps each one, and what the receiver
answered, for three days, and sends one again when asked (``POST
/app/hook/deliveries/{id}/attempts``, with the App's JWT). Which ones to ask for is
``magi.core.threads.redelivery``. The App's handlers are written for redeliveries (claims
are refs, replies are read back from the App's own markers), so a delivery sent twice
does its work once.
https://docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from magi.core.threads.redelivery import WORKING, attempted_at, to_replay, verdict
from magi.github.port import GitHubError

if TYPE_CHECKING:  # githubkit only where the real GitHub is used
    from magi.github.auth import AppAuth

__all__ = ["WINDOW", "redeliver_unfinished"]

WINDOW = timedelta(hours=24)  # how far back a start-up looks (GitHub keeps three days)
PAGES = 20  # at most 2,000 deliveries read at a start-up; more is said in the log
_NEXT = re.compile(r'<[^>]*[?&]cursor=([^&>]+)[^>]*>;\s*rel="next"')


async def _page(auth: AppAuth, cursor: str | None) -> tuple[list[Mapping[str, Any]], str | None]:
    """One page of ``GET /app/hook/deliveries``, newest first, and the next page's cursor."""
    rest = auth.app.rest.apps
    link: list[str] = []

    async def listed(**kw: Any) -> Any:
        response = await rest.async_list_webhook_deliveries(**kw)
        link.append(response.headers.get("link", ""))
        return response

    kw: dict[str, Any] = {"per_page": 100}
    if cursor:
        kw["cursor"] = cursor
    data = await auth._app_port._call(listed, **kw)
    rows: list[Mapping[str, Any]] = [r for r in data or [] if isinstance(r, dict)]
    m = _NEXT.search(link[-1] if link else "")
    return rows, (str(m[1]) if m else None)


async def _recent(auth: AppAuth, since: datetime, log: logging.Logger) -> list[Mapping[str, Any]]:
    rows: list[Mapping[str, Any]] = []
    cursor: str | None = None
    for _ in range(PAGES):
        page, cursor = await _page(auth, cursor)
        rows.extend(page)
        last = attempted_at(page[-1]) if page else None
        if cursor is None or last is None or last < since:
            return rows  # the rest is older than ``since``
    log.warning(f"redelivery: read the newest {len(rows)} deliveries only; older ones not checked")
    return rows


async def _still_working(auth: AppAuth, delivery_id: int) -> bool:
    """Whether a ``202`` answer said the work was still going (this receiver's words)."""
    rest = auth.app.rest.apps
    data = await auth._app_port._call(rest.async_get_webhook_delivery, delivery_id)
    payload = ((data or {}).get("response") or {}).get("payload") or ""
    return isinstance(payload, str) and f'"status":"{WORKING}"' in payload.replace(" ", "")


async def redeliver_unfinished(
    auth: AppAuth, now: datetime, log: logging.Logger, replays: set[str] | None = None
) -> list[int]:
    """Ask GitHub to send again, oldest first, each delivery first sent in the last
    ``WINDOW`` that this receiver (or the one before it) did not finish and that was not
    redelivered twice already; returns the delivery ids asked for. Each guid asked for is
    added to ``replays`` before the ask (its redelivery may arrive before the ask returns):
    the handlers read a replayed payload as old (``Delivery.replayed``)."""
    asked: list[int] = []
    again = auth.app.rest.apps.async_redeliver_webhook_delivery
    try:
        rows = await _recent(auth, now - WINDOW, log)
        for row in to_replay(rows, now - WINDOW):
            code, delivery_id = int(row.get("status_code") or 0), int(row["id"])
            kind = verdict(code)
            if kind == "done" or (kind == "ask" and not await _still_working(auth, delivery_id)):
                continue
            if replays is not None:
                replays.add(str(row["guid"]))
            await auth._app_port._call(again, delivery_id)
            asked.append(delivery_id)
            log.info(
                "redelivery",
                extra={"delivery": row.get("guid"), "event": row.get("event"), "answered": code},
            )
    except GitHubError as exc:
        log.error(f"redelivery: GitHub answered {exc.status or 'nothing'}: {exc.message}"[:300])
    return asked
