"""The one retry layer for GitHub calls: tenacity over githubkit, bounded, honouring limits.

githubkit's own retry is off (``auto_retry=False``, see ``magi.github.auth``); this is the
one place that retries, and only what a retry can fix:

    RateLimitExceeded (403/429 with Retry-After or x-ratelimit-*)  wait what GitHub says
    403 "secondary rate limit" without a header                    wait 60 s
    5xx, network errors, timeouts                                  1 s, 2 s, 4 s ... (cap 30 s)

at most ``attempts`` tries, and never a wait longer than ``max_wait`` (a primary limit that
resets in 40 minutes is a failure to report, not a reason to hold a worker). Anything else,
and whatever is left after the last try, is a ``GitHubError`` carrying the status. The
sleep is injected, so tests never wait.
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from githubkit.exception import RateLimitExceeded, RequestError, RequestFailed
from githubkit.response import Response
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from magi.github.port import GitHubError

SECONDARY_WAIT = 60.0


def _secondary(exc: BaseException) -> bool:
    if not isinstance(exc, RequestFailed) or exc.response.status_code != 403:
        return False
    return "secondary rate limit" in exc.response.text.lower()


def _refused_token(exc: BaseException) -> RequestFailed | None:
    """The installation-token exchange GitHub refused, which githubkit's auth flow wraps in
    a ``RequestError`` that looks like a network error: a wrong key, a wrong App id, or an
    App not installed there (401, 403 or 404). Waiting cannot fix any of them."""
    inner = getattr(exc, "exc", None) if isinstance(exc, RequestError) else None
    if isinstance(inner, RequestFailed) and inner.response.status_code < 500:
        return inner
    return None


def retryable(exc: BaseException) -> bool:
    """Whether waiting and trying again can help."""
    if isinstance(exc, RateLimitExceeded) or _secondary(exc):
        return True
    if isinstance(exc, RequestFailed):
        return exc.response.status_code >= 500
    if _refused_token(exc) is not None:
        return False
    return isinstance(exc, RequestError)  # network error or timeout


def token_refusal(status: int, detail: str, url: str) -> str:
    """The words for a refused token exchange or App call, naming what to check."""
    if status == 404:
        return (
            f"GitHub answered 404 for {url}: the App is not installed on this repository (or "
            "GITHUB_APP_ID names another App). Install it, or check the id."
        )
    return (
        f"GitHub refused the App's credentials ({status}: {detail}) at {url}: "
        "GITHUB_APP_PRIVATE_KEY does not match the App GITHUB_APP_ID names, or the key was "
        "revoked. Generate a key for that App and set it."
    )


def message(exc: RequestFailed) -> str:
    try:
        data = exc.response.json()
    except ValueError:
        return exc.response.text[:200]
    return str(data.get("message", ""))[:300] if isinstance(data, dict) else ""


@dataclass(frozen=True)
class Retry:
    """How one port retries: tries, the longest wait it will sleep, and the sleep itself."""

    attempts: int = 5
    max_wait: float = 120.0
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep)

    def wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RateLimitExceeded):
            wait = exc.retry_after.total_seconds()
        elif exc is not None and _secondary(exc):
            wait = SECONDARY_WAIT
        else:
            wait = min(30.0, 2.0 ** (state.attempt_number - 1))
        if wait > self.max_wait:
            raise GitHubError(
                f"rate limited for {wait:.0f} s, longer than magi waits", status=429, transient=True
            ) from exc
        return max(wait, 0.0)

    async def call(self, fn: Callable[..., Awaitable[Response[Any]]], *a: Any, **kw: Any) -> Any:
        """One request, retried as the module docstring says; returns its JSON (or None)."""
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(retryable),
                wait=self.wait,
                stop=stop_after_attempt(self.attempts),
                sleep=self.sleep,
                reraise=True,
            ):
                with attempt:
                    response = await fn(*a, **kw)
                    return response.json() if response.content else None
        except RequestFailed as exc:
            status = exc.response.status_code
            if status == 401:  # the credential itself (the App's JWT, or its token) is refused
                words = token_refusal(status, message(exc), str(exc.request.url))
                raise GitHubError(words, status=status, auth=True) from exc
            raise GitHubError(message(exc), status=status, transient=status >= 500) from exc
        except RequestError as exc:
            refused = _refused_token(exc)
            if refused is not None:
                status = refused.response.status_code
                words = token_refusal(status, message(refused), str(refused.request.url))
                raise GitHubError(words, status=status, auth=True) from exc
            raise GitHubError(
                f"no answer from GitHub: {exc.__class__.__name__}", transient=True
            ) from exc
        raise GitHubError("no attempt was made")  # pragma: no cover - tenacity always tries
