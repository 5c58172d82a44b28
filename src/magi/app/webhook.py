"""The webhook edge: verify, bound, parse, route, acknowledge; the work runs after the answer.

Order matters and is the point of this module:

1. refuse a body over 25 MB (413) from its Content-Length, or while streaming it, without
   ever holding more than the limit;
2. verify ``X-Hub-Signature-256`` over the raw bytes, ``sha256=`` form only (githubkit's
   ``verify`` would fall back to SHA-1 without the prefix), constant-time: missing or wrong
   is 401 and nothing else happens;
3. parse: not JSON, not an object, nested too deep, or not the shape its route needs is a
   400 with the reason, never a 5xx;
4. route on ``X-GitHub-Event`` and ``action``; unknown ones and bot senders (except check
   events) are acknowledged and ignored;
5. do the work, and answer when it is done: ``200``. GitHub gives a delivery 10 s, so the
   answer waits ``answer_within`` (8 s) at most; work still going then is answered ``202``
   ``{"status": "working"}`` and goes on after the answer. GitHub keeps each delivery with
   what was answered and never resends one by itself: that record is what a receiver
   starting up reads to ask again for what it did not finish (``magi.app.redeliver``).
   https://docs.github.com/en/webhooks/using-webhooks/best-practices-for-using-webhooks
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from githubkit.webhooks import verify
from pydantic import ValidationError
from pydantic_core import from_json
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route as Route_

from magi.app.context import AppContext
from magi.app.events import CHECK_EVENTS, Base, Delivery, Route, Router
from magi.core.threads.approval import is_bot
from magi.core.threads.redelivery import WORKING
from magi.github.port import GitHubError

MAX_BODY = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB
MAX_WORK = 32  # handlers at once: GitHub allows <= 100 concurrent requests
ANSWER_WITHIN = 8.0  # seconds a delivery waits for its work: GitHub gives 10
IGNORED = frozenset({"ignored", "ignored-bot"})  # 200: nothing for magi, said as such


async def _read_bounded(request: Request) -> bytes | None:
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


_SIGNATURE = re.compile(r"sha256=[0-9a-fA-F]{64}")


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """Whether ``header`` is a valid ``sha256=`` HMAC of ``body``; other forms are refused.

    Only the exact ASCII shape reaches the constant-time compare: odd bytes of the right
    length (``hmac.compare_digest`` raises on non-ASCII text) are a 401, never a 500."""
    if not header or not _SIGNATURE.fullmatch(header):
        return False
    return verify(secret, body, header)


async def _finish(work: asyncio.Future[None]) -> None:
    await work


def _reason(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "body"
    return f"{where}: {err['msg']}"


def _answer(code: int, **body: Any) -> JSONResponse:
    return JSONResponse(body, status_code=code)


class Edge:
    """The ``/webhook`` and ``/healthz`` endpoints over a composed router."""

    def __init__(
        self,
        ctx: AppContext,
        secret: str,
        router: Router,
        *,
        recover: Callable[[], Awaitable[str | None]] | None = None,
        answer_within: float = ANSWER_WITHIN,
    ) -> None:
        self.ctx = ctx
        self.answer_within = answer_within
        self._going: set[asyncio.Future[None]] = set()  # work answered 202, still running
        # The guids this receiver's start-up asked GitHub to send again (``Delivery.replayed``).
        self.replays: set[str] = set()
        self.secret = secret
        self.router = router
        self._work: asyncio.Semaphore | None = None
        # What keeps the App from working (its credentials refused, GitHub unreachable at
        # start-up), said by /healthz with a 503 instead of the process dying; ``recover``
        # tries again and returns the problem that is left (None: healthy).
        self.problem: str | None = None
        self.recover = recover

    def routes(self) -> list[Route_]:
        # Plain Starlette routes: the edge reads the raw body itself, and FastAPI's
        # dependency resolution would only add cost to every delivery.
        return [
            Route_("/webhook", self.webhook, methods=["POST"]),
            Route_("/healthz", self.healthz, methods=["GET"]),
        ]

    async def healthz(self, request: Request) -> JSONResponse:
        if self.problem is not None and self.recover is not None:
            self.problem = await self.recover()
        if self.problem is not None:
            return _answer(503, status="unhealthy", problem=self.problem)
        return _answer(200, status="ok")

    async def webhook(self, request: Request) -> JSONResponse:
        started = time.perf_counter()
        headers = request.headers
        delivery = headers.get("x-github-delivery", "")[:64]
        event = headers.get("x-github-event", "")[:64]
        body = await _read_bounded(request)
        if body is None:
            return self._done(413, delivery, event, None, "too-large", started)
        if not signature_ok(self.secret, body, headers.get("x-hub-signature-256")):
            return self._done(401, delivery, event, None, "bad-signature", started)
        if self.problem is not None:
            # GitHub refused the App's key, or cannot be reached (and without its own login
            # the App cannot tell its comments from anyone's): nothing of the delivery could
            # be done. GitHub keeps a failed delivery, to be redelivered once /healthz (each
            # call of which tries again) is 200.
            return self._done(503, delivery, event, None, "unhealthy", started)
        if not event:
            return self._done(400, delivery, event, None, "no X-GitHub-Event header", started)
        outcome = self.accept(event, body)
        if isinstance(outcome, str):
            code = 400 if outcome not in IGNORED else 200
            return self._done(code, delivery, event, None, outcome, started)
        action, parsed = outcome
        work = asyncio.ensure_future(self._handle(delivery, event, parsed))
        done, _ = await asyncio.wait({work}, timeout=self.answer_within)
        if work in done:
            return self._done(200, delivery, event, action, "done", started)
        # Past the wait: answered 202 "working", and uvicorn's graceful shutdown (SIGTERM)
        # still waits for the work, as for any background task of a response.
        self._going.add(work)
        work.add_done_callback(self._going.discard)
        response = self._done(202, delivery, event, action, WORKING, started)
        response.background = BackgroundTask(_finish, work)
        return response

    def accept(self, event: str, body: bytes) -> str | tuple[str | None, list[tuple[Route, Base]]]:
        """The work one delivery asks for, or why none (one of ``IGNORED``, or a 400's
        reason). The receiver and the workflow's ``receive`` job (``magi.app.serverless``)
        both decide by it: one set of rules for which events magi acts on."""
        if not self.router.match(event, None, any_action=True):
            # An event magi never handles is not even parsed (a push can be megabytes).
            return "ignored"
        outcome = self._parse(event, body)
        if isinstance(outcome, str):
            return outcome
        action, parsed = outcome
        sender = parsed[0][1].sender
        if event not in CHECK_EVENTS and is_bot(sender.login, sender.type, self.ctx.app_login):
            return "ignored-bot"
        # Most comments are not for magi: a route that says so up front queues no work.
        parsed = [(r, p) for r, p in parsed if r.wants is None or r.wants(p)]
        return (action, parsed) if parsed else "ignored"

    def _parse(self, event: str, body: bytes) -> str | tuple[str | None, list[tuple[Route, Base]]]:
        """The routes and payloads for a body, or why not ("ignored" or a 400's reason)."""
        models = {r.model for r in self.router.match(event, None, any_action=True)}
        if len(models) == 1:
            # Fast path: validate straight from the bytes (pydantic-core skips building
            # Python objects for the many fields magi ignores). Any failure takes the slow
            # path, which says precisely what is wrong.
            try:
                payload = models.pop().model_validate_json(body)
            except ValidationError:
                pass
            else:
                routes = self.router.match(event, payload.action)
                return (payload.action, [(r, payload) for r in routes]) if routes else "ignored"
        try:
            # pydantic-core refuses nesting deeper than 200 levels instead of recursing.
            data = from_json(body)
        except ValueError as exc:
            return "nested too deep" if "recursion" in str(exc) else "body is not JSON"
        if not isinstance(data, dict):
            return "body is not a JSON object"
        action = data.get("action") if isinstance(data.get("action"), str) else None
        routes = self.router.match(event, action)
        if not routes:
            return "ignored"
        parsed: dict[type[Base], Base] = {}
        try:
            for r in routes:  # one validation per payload model, however many routes share it
                if r.model not in parsed:
                    parsed[r.model] = r.model.model_validate(data)
        except ValidationError as exc:
            return _reason(exc)
        return action, [(r, parsed[r.model]) for r in routes]

    def _done(
        self,
        status: int,
        delivery: str,
        event: str,
        action: str | None,
        outcome: str,
        started: float,
    ) -> JSONResponse:
        ms = round((time.perf_counter() - started) * 1000, 2)
        level = 20 if status < 400 else 30
        self.ctx.log.log(
            level,
            "delivery",
            extra={
                "delivery": delivery,
                "event": event,
                "action": action,
                "outcome": outcome,
                "ms": ms,
            },
        )
        if status >= 400:
            return _answer(status, error=outcome)
        return _answer(status, status=outcome)

    async def _handle(self, delivery: str, event: str, parsed: list[tuple[Route, Base]]) -> None:
        if self._work is None:
            self._work = asyncio.Semaphore(MAX_WORK)
        async with self._work:
            for route, payload in parsed:
                d = Delivery(delivery, event, payload, replayed=delivery in self.replays)
                await self._run(route, d)

    async def _run(self, route: Route, d: Delivery[Any]) -> None:
        started = time.perf_counter()
        extra: dict[str, Any] = {
            "delivery": d.id,
            "repo": d.repo.full_name,
            "event": d.event,
            "action": d.payload.action,
            "step": route.handler.__module__.rsplit(".", 1)[-1],
        }
        try:
            outcome = await route.handler(self.ctx, d)
        except GitHubError as exc:
            extra |= {"outcome": "failed", "error": f"{exc.status}: {exc.message}"[:300]}
            if exc.auth and exc.status == 401:  # the App's key or id: /healthz says so
                self.problem = exc.message
            self.ctx.log.error("handled", extra={**extra, "ms": self._ms(started)})
            return
        except Exception as exc:  # a handler bug must not kill the worker or leak a body
            extra |= {"outcome": "crashed", "error": exc.__class__.__name__}
            self.ctx.log.exception("handled", extra={**extra, "ms": self._ms(started)})
            return
        self.ctx.log.info("handled", extra={**extra, "outcome": outcome, "ms": self._ms(started)})

    @staticmethod
    def _ms(started: float) -> float:
        return round((time.perf_counter() - started) * 1000, 2)
