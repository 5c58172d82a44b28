"""The one retry layer for GitHub calls: tenacity over githubkit, bounded, honouring limits.

githubkit's own retry is off (``auto_retry=False``, see ``magi.github.auth``); this is the
one place that retries, and only what a retry can fix:

    secondary limit, Retry-After (403 or 429)         wait what GitHub says
    secondary limit, x-ratelimit-remaining 0          wait until x-ratelimit-reset
    secondary limit, no header (a 429, or a 403       60 s, doubled at each further try
      whose message names the secondary limit)
    primary limit (x-ratelimit-remaining 0)           wait until x-ratelimit-reset
    5xx, network errors, timeouts                     1 s, 2 s, 4 s ... (cap 30 s)
    422 "Reference update failed" (a ref write GitHub  1 s, 2 s, 4 s ...
      failed to make, now and then; nothing was written:
      github/rest-api-description#4887)

at most ``attempts`` tries. A primary limit is waited out only up to ``max_wait`` (one that
resets in 40 minutes is a failure to report, not a reason to hold a worker). A secondary
limit is waited out up to ``SECONDARY_MAX`` (an hour): the content-creation limit (about 80
writes a minute, 500 an hour) asks for waits past ``max_wait``, and failing there would fail
a large publish halfway. Every wait is logged with its reason and the request; one of
``max_wait`` or more is also handed to ``notice`` (when given), for a caller to say on the
issue. Anything else, and whatever is left after the last try, is a ``GitHubError``
carrying the status. The sleep is injected, so tests never wait.
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits
https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#handle-rate-limit-errors-appropriately
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from githubkit.exception import (
    PrimaryRateLimitExceeded,
    RateLimitExceeded,
    RequestError,
    RequestFailed,
)
from githubkit.response import Response
from pydantic import ValidationError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from magi.github.port import GitHubError

SECONDARY_WAIT = 60.0
SECONDARY_MAX = 3600.0
log = logging.getLogger("magi.github")

Notice = Callable[[float, str], Awaitable[None]]


def _secondary(exc: BaseException) -> bool:
    """A secondary limit githubkit did not name (it needs a header): any 429, or a 403
    whose message says so."""
    if not isinstance(exc, RequestFailed) or isinstance(exc, RateLimitExceeded):
        return False
    status = exc.response.status_code
    return status == 429 or (status == 403 and "secondary rate limit" in exc.response.text.lower())


def limit_of(exc: BaseException | None) -> str | None:
    """``primary`` or ``secondary`` for a rate-limit answer, else None."""
    if isinstance(exc, PrimaryRateLimitExceeded):
        return "primary"
    if isinstance(exc, RateLimitExceeded) or (exc is not None and _secondary(exc)):
        return "secondary"
    return None


def _refused_token(exc: BaseException) -> RequestFailed | None:
    """The installation-token exchange GitHub refused, which githubkit's auth flow wraps in
    a ``RequestError`` that looks like a network error: a wrong key, a wrong App id, or an
    App not installed there (401, 403 or 404). Waiting cannot fix any of them."""
    inner = getattr(exc, "exc", None) if isinstance(exc, RequestError) else None
    if isinstance(inner, RequestFailed) and inner.response.status_code < 500:
        return inner
    return None


def _ref_not_written(exc: BaseException) -> bool:
    """GitHub's intermittent 422 "Reference update failed" on a ref write."""
    if not isinstance(exc, RequestFailed) or exc.response.status_code != 422:
        return False
    return "reference update failed" in exc.response.text.lower()


def retryable(exc: BaseException) -> bool:
    """Whether waiting and trying again can help."""
    if isinstance(exc, RateLimitExceeded) or _secondary(exc) or _ref_not_written(exc):
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


def _invalid(exc: ValidationError) -> str:
    """The one problem githubkit found in a body that says what to fix: a body model with
    alternatives (oneOf) reports each alternative's misses, so a value's own error (a
    string too long) is named before a field or a value another alternative wants."""
    errors = exc.errors()
    alternatives = {"missing", "literal_error", "union_tag_invalid", "model_type"}
    own = [e for e in errors if e.get("type") not in alternatives]
    if not (own or errors):
        return str(exc)
    pick = (own or errors)[0]
    loc = (str(p) for p in pick["loc"])
    where = ".".join(p for p in loc if not p[:1].isupper() and not p.startswith("literal["))
    return f"{where}: {pick['msg']}"


def _request(exc: BaseException | None) -> str:
    """``METHOD /path`` of the request ``exc`` answered (no query: it may carry nothing
    secret, but a path is what a reader needs)."""
    request = getattr(exc, "request", None)
    return f"{request.method} {request.url.path}" if request is not None else "a request"


@dataclass(frozen=True)
class Retry:
    """How one port retries: tries, the longest wait on a primary limit, the sleep itself,
    and who is told of a long wait."""

    attempts: int = 5
    max_wait: float = 120.0
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep)
    notice: Notice | None = None

    def wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        kind = limit_of(exc)
        if isinstance(exc, RateLimitExceeded):
            wait = exc.retry_after.total_seconds()
        elif kind == "secondary":
            wait = SECONDARY_WAIT * 2.0 ** (state.attempt_number - 1)
        else:
            wait = min(30.0, 2.0 ** (state.attempt_number - 1))
        cap = SECONDARY_MAX if kind == "secondary" else self.max_wait
        if wait > cap:
            raise GitHubError(
                f"rate limited ({kind} limit) for {wait:.0f} s, longer than magi waits",
                status=429,
                transient=True,
            ) from exc
        return max(wait, 0.0)

    async def _before_sleep(self, state: RetryCallState) -> None:
        """Say each wait in the log, and a long one to ``notice``."""
        exc = state.outcome.exception() if state.outcome else None
        seconds = state.next_action.sleep if state.next_action else 0.0
        kind = limit_of(exc)
        why = f"GitHub's {kind} rate limit" if kind else f"{type(exc).__name__}"
        then = f"try {state.attempt_number + 1} of {self.attempts}"
        words = f"{why} on {_request(exc)}: waiting {seconds:.0f} s ({then})"
        log.warning(words)
        if self.notice is not None and kind and seconds >= self.max_wait:
            try:
                await self.notice(seconds, words)
            except Exception as error:  # saying it must never stop the wait
                log.warning(f"the long wait could not be said: {error}")

    async def call(self, fn: Callable[..., Awaitable[Response[Any]]], *a: Any, **kw: Any) -> Any:
        """One request, retried as the module docstring says; returns its JSON (or None)."""
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(retryable),
                wait=self.wait,
                stop=stop_after_attempt(self.attempts),
                sleep=self.sleep,
                before_sleep=self._before_sleep,
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
            transient = status >= 500 or _ref_not_written(exc)
            raise GitHubError(message(exc), status=status, transient=transient) from exc
        except ValidationError as exc:  # githubkit checks a body against the schema first
            raise GitHubError(
                f"the request was refused before it was sent: {_invalid(exc)}", status=422
            ) from exc
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
