"""magi's pull requests: which PRs are magi's, their run and issue, and the magi PRs of a head.

Several behaviours wake when CI reports on a commit (the merge gate decides again, landing
plans its next step). Each keeps its own small router, bedevere-style, but the question
"which magi PRs is this check event about" is answered once (``magi.github.gate``, which
the workflow's merge gate shares): ``check_suite``, ``check_run`` and ``workflow_run`` name
their PRs (the list is empty for a fork's PR, or when GitHub leaves it out), a ``status``
names only a commit, so then it is the open magi PRs whose head is that commit.
``on_checks`` registers a behaviour's action for the check events it wants, each PR in turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from magi.app.context import AppContext
from magi.app.events import (
    Base,
    CheckRunEvent,
    CheckSuiteEvent,
    Delivery,
    PullBranch,
    PullRef,
    Router,
    StatusEvent,
    WorkflowRunEvent,
)
from magi.core.threads.relevance import NamedPull, excludes
from magi.github.gate import is_magi_pull as is_magi_pull  # shared with the workflow's gate
from magi.github.gate import issue_of as issue_of
from magi.github.gate import magi_pulls_of as magi_pulls_of
from magi.github.gate import run_of as run_of
from magi.github.models import Repo
from magi.github.port import GitHubPort

# A behaviour's action for one PR: (ctx, gh, repo, pr number, default branch) -> outcome.
Act = Callable[[AppContext, GitHubPort, Repo, int, str], Awaitable[str]]
CHECKS: dict[str, tuple[str | None, type[Base]]] = {
    "check_suite": ("completed", CheckSuiteEvent),
    "check_run": ("completed", CheckRunEvent),
    "status": (None, StatusEvent),
    "workflow_run": ("completed", WorkflowRunEvent),
}


def head_of(payload: Base) -> tuple[str, list[int]]:
    """The commit a check event reports on, and the PRs it names (maybe none)."""
    if isinstance(payload, CheckSuiteEvent):
        s = payload.check_suite
        return s.head_sha, [p.number for p in s.pull_requests]
    if isinstance(payload, CheckRunEvent):
        s = payload.check_run
        return s.head_sha, [p.number for p in s.pull_requests]
    if isinstance(payload, WorkflowRunEvent):
        w = payload.workflow_run
        return w.head_sha, [p.number for p in w.pull_requests]
    if isinstance(payload, StatusEvent):
        return payload.sha, []
    raise TypeError(f"{type(payload).__name__} is not a check event")


async def wake(ctx: AppContext, d: Delivery[Any], act: Act) -> str:
    """Run ``act`` for every magi PR the check event ``d`` is about; the outcomes, joined."""
    sha, named = head_of(d.payload)
    gh = await ctx.ports(d.installation, d.repo)
    branch = d.payload.repository.default_branch
    outcomes = [
        await act(ctx, gh, d.repo, n, branch)
        for n in await magi_pulls_of(gh, d.repo, sha, named, ctx.seal)
    ]
    return ",".join(outcomes) or "no-pr"


def _finished(payload: Any) -> bool:
    # A pending status changes no decision: nothing is queued for it.
    return not isinstance(payload, StatusEvent) or payload.state != "pending"


def _named(refs: Iterable[PullRef]) -> list[NamedPull]:
    def rid(b: PullBranch | None) -> int | None:
        return b.repo.id if b is not None and b.repo is not None else None

    return [NamedPull(r.head.ref if r.head else None, rid(r.head), rid(r.base)) for r in refs]


def not_magis(payload: Any) -> bool:
    """The payload alone shows the check event is about no magi PR (``relevance``): it is
    dropped before any call. Only ever a *no*: what it lets through is read from GitHub."""
    repo = payload.repository.id
    if isinstance(payload, CheckSuiteEvent):
        s = payload.check_suite
        return excludes(named=_named(s.pull_requests), head_branch=s.head_branch)
    if isinstance(payload, CheckRunEvent):
        c = payload.check_run
        branch = c.check_suite.head_branch if c.check_suite else None
        return excludes(named=_named(c.pull_requests), head_branch=branch)
    if isinstance(payload, WorkflowRunEvent):
        w = payload.workflow_run
        head = w.head_repository.id if w.head_repository else None
        named = _named(w.pull_requests)
        return excludes(named=named, head_branch=w.head_branch, head_repo=head, repo=repo)
    if isinstance(payload, StatusEvent):
        names = None if payload.branches is None else [b.name for b in payload.branches]
        return excludes(branches=names)
    return False


def _wanted(payload: Any) -> bool:
    return not not_magis(payload)


def _finished_and_wanted(payload: Any) -> bool:
    return _finished(payload) and _wanted(payload)


def on_checks(router: Router, act: Act, events: Iterable[str], *, pending: bool = True) -> None:
    """Route the check ``events`` to ``act`` on ``router``; ``pending=False`` leaves pending
    statuses out."""

    async def handler(ctx: AppContext, d: Delivery[Any]) -> str:
        return await wake(ctx, d, act)

    handler.__module__ = getattr(act, "__module__", handler.__module__)  # the log's step
    for event in events:
        action, model = CHECKS[event]
        router.on(event, action, model, _wanted if pending else _finished_and_wanted)(handler)
