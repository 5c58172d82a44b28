"""An HTTP double of GitHub's REST API for testing the githubkit adapter over real HTTP.

``GitHubHTTP`` is an ``httpx`` transport handler (plug it in with ``httpx.MockTransport``)
that answers only routes listed in GitHub's own API description (``operations.tsv``): every
route it serves is checked against that list when the double is built, and any request it
does not serve is recorded in ``unanswered`` and fails the test (``assert_clean``). Bodies are
GitHub's published example for the operation (``github_api/examples.json``) with the
fake's values laid over it, so the adapter parses what GitHub really sends, extra fields and
all. State lives in a ``FakeGitHub``, so the double and the in-memory fake agree. The one
GraphQL call magi makes (a PR's draft state) goes to ``magi.testing.github_graphql``.

A job log's 302 points at a download host the double also serves (``downloads`` records
what reached it, headers and all, so a test can see no token went there).

The double speaks one REST version, magi's (``magi.github.port.API_VERSION``): a REST
request naming another (or none, which GitHub takes as 2022-11-28) is unanswered, and what
that version removed (``REMOVED``, the ``x-github-breaking-changes`` of GitHub's description)
is absent from every body it sends, whatever the example held.

Faults for retry tests: ``inject(method, path_regex, status, headers=, body=, times=)`` and
``timeout(method, path_regex, times=)``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from magi.github.models import Repo
from magi.github.port import API_VERSION, GitHubError
from magi.testing import github_graphql
from magi.testing.github import FakeGitHub
from magi.testing.github_app_routes import AppSide
from magi.testing.github_routes import DOWNLOAD_HOST, ROUTES, Handler, download, over

DATA = Path(__file__).parent / "github_api"
OPERATIONS = DATA / "operations.tsv"
EXAMPLES = DATA / "examples.json"
GIT_EXAMPLES = DATA / "examples-git.json"  # the Git Data API's, from GitHub's REST docs
APP_EXAMPLES = DATA / "examples-app.json"  # the App's webhook and installations (app check)


# What API 2026-03-10 removed from the objects the double sends, by changeset (the
# description's x-github-breaking-changes patches on pull-request, pull-request-simple,
# issue and repository): each name is dropped wherever it appears in an answer.
# https://docs.github.com/en/rest/about-the-rest-api/breaking-changes (a request without
# the header is answered as 2022-11-28)
REMOVED = {
    "remove_pull_request_merge_commit_sha": "merge_commit_sha",
    "remove_singular_assignee_from_issues_and_pull_requests": "assignee",
    "remove_has_downloads": "has_downloads",
    "remove_use_squash_pr_title_as_default": "use_squash_pr_title_as_default",
}


CONTENT_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
CONTENT_WINDOW = 60.0

# githubkit's auth flow mints installation tokens without the version header (GitHub
# answers it as 2022-11-28); no version changed that operation, so the double serves it.
TOKEN_EXCHANGE = re.compile(r"^POST /app/installations/[^/]+/access_tokens$")


def versioned(body: Any) -> Any:
    """``body`` without what ``API_VERSION`` removed (``REMOVED``), at any depth."""
    if isinstance(body, dict):
        gone = set(REMOVED.values())
        return {k: versioned(v) for k, v in body.items() if k not in gone}
    if isinstance(body, list):
        return [versioned(v) for v in body]
    return body


def load_operations(path: Path) -> list[tuple[str, re.Pattern[str]]]:
    """``operations.tsv`` as (METHOD, compiled path) pairs, ``{param}`` -> ``[^/]+``."""
    ops = []
    for line in path.read_text(encoding="utf-8").splitlines():
        method, template, *_ = line.split("\t")
        ops.append((method, re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$")))
    return ops


def extract_examples(path: Path) -> dict[tuple[str, str], Any]:
    """The first 2xx JSON example per (METHOD, path template) in an OpenAPI description."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    shared = spec.get("components", {}).get("examples", {})
    found: dict[tuple[str, str], Any] = {}
    for template, methods in spec["paths"].items():
        for method, op in methods.items():
            for code, resp in sorted(op.get("responses", {}).items()):
                content = resp.get("content", {}).get("application/json", {})
                for ex in (content.get("examples") or {}).values():
                    value = ex.get("value")
                    if "$ref" in ex:
                        value = shared[ex["$ref"].rsplit("/", 1)[-1]].get("value")
                    if code.startswith("2") and value is not None:
                        found.setdefault((method.upper(), template), value)
    return found


def load_examples(path: Path = EXAMPLES) -> dict[tuple[str, str], Any]:
    """The shipped examples (see ``github_api/SOURCE.md``), keyed (METHOD, path template)."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return {tuple(k.split(" ", 1)): v for k, v in data.items()}  # type: ignore[misc]


@dataclass
class Fault:
    method: str
    path: re.Pattern[str]
    times: int
    status: int = 0  # 0: a timeout
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass
class Hold:
    """The next matching request waits: ``arrived`` is set when it comes, and it is
    answered only once ``release`` is set (a test kills its client in between)."""

    method: str
    path: re.Pattern[str]
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    pattern: re.Pattern[str]
    handler: Handler


class GitHubHTTP:
    """See the module docstring."""

    def __init__(
        self,
        fake: FakeGitHub,
        operations: Path = OPERATIONS,
        *,
        app: tuple[str, str] | None = None,
        client_id: str = "",
        app_permissions: dict[str, str] | None = None,
        content_limit: int | None = None,
    ) -> None:
        """``content_limit``: the content-creation limit, writes per ``CONTENT_WINDOW``
        seconds of the double's own clock (``advance``); past it a write is answered 403
        with GitHub's secondary-limit words and a ``retry-after`` (None: no limit).
        ``app``: (App id, the App's public key PEM). With it, the App endpoints check
        the JWT as GitHub does (RS256 over the key, ``iss`` the App's id or its
        ``client_id``) and answer 401 "A JSON web token could not be decoded" otherwise;
        without it they accept any. ``app_permissions``: what ``GET /app`` says the App
        asks for (None: GitHub's example)."""
        self.fake = fake
        self.app = app
        self.client_id = client_id
        self.app_permissions = app_permissions
        self.examples = {
            **load_examples(),
            **load_examples(GIT_EXAMPLES),
            **load_examples(APP_EXAMPLES),
        }
        known = load_operations(operations)
        self.routes: list[Route] = []
        for method, template, fn in ROUTES:
            concrete = re.sub(r"\{[^}]+\}", "x", template)
            if not any(m == method and p.match(concrete) for m, p in known):
                raise AssertionError(f"the double serves {method} {template}, not in GitHub's API")
            rx = re.sub(r"\{[^}]+\}", "([^/]+)", template)
            last_may_slash = "/git/" in template or "/contents/" in template
            if last_may_slash and template.endswith("}"):  # a ref or a path holds "/"
                rx = rx[: rx.rfind("([^/]+)")] + "(.+)"
            self.routes.append(Route(method, template, re.compile("^" + rx + "$"), fn))
        self.unanswered: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.faults: list[Fault] = []
        self.holds: list[Hold] = []
        self.tokens_minted = 0
        # manifest flow codes -> what the conversion answers (an App GitHub made from it)
        self.manifest_codes: dict[str, dict[str, Any]] = {}
        self.downloads: list[httpx.Request] = []  # requests to the log download host
        self.app_side = AppSide()  # the App's webhook and installations (github_app_routes)
        self.content_limit = content_limit
        self.now = 0.0  # the double's clock, in seconds: moved by ``advance``
        self.writes: list[float] = []  # when each content-creating request was taken

    def advance(self, seconds: float) -> None:
        """Time passes for the double (a test's injected sleep calls this)."""
        self.now += seconds

    def _over_content_limit(self, method: str, path: str) -> httpx.Response | None:
        """GitHub's content-creation limit: "no more than 80 content-generating requests per
        minute and no more than 500 [...] per hour"; past it, a secondary-limit 403.
        https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits
        """
        if self.content_limit is None or method not in CONTENT_METHODS:
            return None
        if TOKEN_EXCHANGE.match(f"{method} {path}"):
            return None
        recent = [t for t in self.writes if t > self.now - CONTENT_WINDOW]
        if len(recent) < self.content_limit:
            self.writes = [*recent, self.now]
            return None
        wait = max(1, int(recent[0] + CONTENT_WINDOW - self.now + 0.999))
        return httpx.Response(
            403,
            headers={"retry-after": str(wait)},
            json={
                "message": "You have exceeded a secondary rate limit. Please wait a few "
                "minutes before you try again.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
            },
        )

    def inject(
        self,
        method: str,
        path: str,
        status: int,
        *,
        times: int = 1,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> None:
        self.faults.append(Fault(method, re.compile(path), times, status, headers or {}, body))

    def timeout(self, method: str, path: str, *, times: int = 1) -> None:
        self.faults.append(Fault(method, re.compile(path), times))

    def hold(self, method: str, path: str) -> Hold:
        """Hold the next ``method`` request whose path matches ``path`` (see ``Hold``)."""
        held = Hold(method, re.compile(path))
        self.holds.append(held)
        return held

    def assert_clean(self) -> None:
        if self.unanswered:
            raise AssertionError(f"requests outside the double: {self.unanswered}")

    def example(self, method: str, template: str) -> Any:
        return self.examples.get((method, template), {})

    def shaped(self, method: str, template: str, ours: Mapping[str, Any]) -> dict[str, Any]:
        return over(self.example(method, template), ours)

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == DOWNLOAD_HOST:  # not GitHub's API: where a 302 points
            self.downloads.append(request)
            return download(self, request)
        method, path = request.method, request.url.path
        prefix = "/api/v3"
        if path.startswith(prefix):
            path = path[len(prefix) :]
        self.requests.append((method, path))
        if method == "POST" and request.url.path in github_graphql.PATHS:
            return await github_graphql.answer(self, request)  # drafts: not a REST operation
        version = request.headers.get("x-github-api-version", "2022-11-28")
        if version != API_VERSION and not TOKEN_EXCHANGE.match(f"{method} {path}"):
            self.unanswered.append(f"{method} {path} (X-GitHub-Api-Version {version})")
            raise AssertionError(f"the double speaks API {API_VERSION}, not {version}")
        for held in self.holds:
            if held.method == method and held.path.search(path) and not held.arrived.is_set():
                held.arrived.set()
                await held.release.wait()
        if (limited := self._over_content_limit(method, path)) is not None:
            return limited
        for fault in self.faults:
            if fault.times and fault.method == method and fault.path.search(path):
                fault.times -= 1
                if not fault.status:
                    raise httpx.ReadTimeout("injected timeout", request=request)
                return httpx.Response(
                    fault.status,
                    headers=dict(fault.headers),
                    json=fault.body or {"message": "injected"},
                )
        for r in self.routes:
            m = r.pattern.match(path) if r.method == method else None
            if m is None:
                continue
            names = re.findall(r"\{([^}]+)\}", r.template)
            params = dict(
                zip(names, (httpx.URL("/" + g).path[1:] for g in m.groups()), strict=True)
            )
            repo = Repo(owner=params.get("owner", "-"), name=params.get("repo", "-"))
            try:
                result = await r.handler(self, repo, params, request)
            except GitHubError as exc:
                return httpx.Response(exc.status or 500, json={"message": exc.message})
            if isinstance(result, httpx.Response):
                return result
            status, body = result
            if body is None:
                return httpx.Response(status)
            return httpx.Response(status, json=versioned(body))
        self.unanswered.append(f"{method} {path}")
        raise AssertionError(f"the GitHub double has no route for {method} {path}")


def asgi(double: GitHubHTTP) -> Any:
    """The double as an ASGI app, to serve it on a socket (App processes as its clients)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        query = scope.get("query_string", b"").decode()
        url = f"http://github.test{scope['path']}" + (f"?{query}" if query else "")
        headers = [(k.decode(), v.decode()) for k, v in scope["headers"]]
        request = httpx.Request(scope["method"], url, headers=headers, content=b"".join(chunks))
        try:
            response = await double(request)
        except (AssertionError, httpx.TimeoutException):
            response = httpx.Response(599, json={"message": "the double refused this request"})
        raw = [
            (k.encode(), v.encode())
            for k, v in response.headers.items()
            if k.lower() not in {"content-length", "transfer-encoding"}
        ]
        body = response.content
        raw.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": response.status_code, "headers": raw})
        await send({"type": "http.response.body", "body": body})

    return app
