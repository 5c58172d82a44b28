"""A merge queue's group asks for checks: magi's own ``magi`` check answers it.

On a branch with a merge queue GitHub merges a PR only through the queue: it makes a merge
group (the base with the PR on it, on ``gh-readonly-queue/<base>/pr-<n>-<head>``), sends
``merge_group`` with ``checks_requested``, and merges once every required check is green on
the group's commit. CI workflows run there by themselves (``on: merge_group``); magi's own
``magi`` check is made by magi's publish job on the PR's head, never on a group, so a
repository that requires it would stall its queue. magi answers it: the group's ``magi``
check carries the conclusion magi gave the PR's head (what was verified is the same change;
the queue's own CI judges the merged result). A group whose PR is not magi's, or whose head
has no finished ``magi`` check made by magi's own App (``app.slug``: another App or a
workflow may name a check ``magi``), gets no answer from magi.

A magi PR taken out of the queue (``pull_request`` ``dequeued``) is said on the PR with
GitHub's reason and the next step (``magi.core.threads.dequeue``): a removal that is the
queue's own doing (cleared, rolled back, its checks timed out) is added back once per head
while the writer's ``merge`` still stands on it and no person stopped it since (landing's
stops, ``magi.core.threads.landing.held_back``: said why instead); a conflict goes to
landing (the fixer: ``magi.app.landing`` routes the event and plans the PR when this says
``TO_LANDING``).
https://docs.github.com/en/webhooks/webhook-events-and-payloads#merge_group
https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/managing-a-merge-queue#triggering-merge-group-checks-with-third-party-ci-providers
"""

from __future__ import annotations

import re

from magi.app.context import AppContext, reply_once, repo_config
from magi.app.events import Delivery, DequeuedEvent, MergeGroupEvent
from magi.app.pulls import is_magi_pull
from magi.core.threads import markers
from magi.core.threads.dequeue import AGAIN, Next, after_dequeue
from magi.core.threads.landing import Review, held_back
from magi.core.threads.posting import inert
from magi.errors import ConfigError
from magi.github.models import PullRequest
from magi.github.port import GitHubError, GitHubPort
from magi.model.config import Config

__all__ = ["CHECK", "TO_LANDING", "checks_requested", "dequeued", "group_pull"]

CHECK = "magi"  # the check magi's publish job makes on a PR's head
TO_LANDING = "dequeued-to-landing"  # a conflict: ``magi.app.landing`` plans the PR next
_GROUP = re.compile(r"^(?:refs/heads/)?gh-readonly-queue/.+/pr-(\d+)-([0-9a-f]{40})$")


def group_pull(head_ref: str) -> tuple[int, str] | None:
    """The PR and head a merge group's branch names, or None."""
    m = _GROUP.match(head_ref)
    return (int(m[1]), m[2]) if m else None


async def checks_requested(ctx: AppContext, d: Delivery[MergeGroupEvent]) -> str:
    group = d.payload.merge_group
    named = group_pull(group.head_ref)
    if named is None:
        return "not-a-queue-group"
    number, head = named
    gh = await ctx.ports(d.installation, d.repo)
    try:
        pull = await gh.get_pull(d.repo, number)
    except GitHubError as exc:
        if exc.status != 404:
            raise
        return "no-such-pr"
    if not is_magi_pull(pull, ctx.seal):
        return "not-a-magi-pr"
    slug = ctx.app_login.lower().removesuffix("[bot]")
    ours = [
        c
        for c in await gh.list_check_runs(d.repo, head)
        if c.name == CHECK and c.app is not None and c.app.slug.lower() == slug
    ]  # magi's own: any App (or a workflow) may make a check run named `magi`
    done = [c for c in ours if c.status == "completed" and c.conclusion]
    if not done:
        return "no-magi-check"
    conclusion = done[-1].conclusion or "neutral"
    await gh.create_check_run(
        d.repo,
        name=CHECK,
        head_sha=group.head_sha,
        status="completed",
        conclusion=conclusion,
        summary=(
            f"The merge queue's group for #{number}: magi's check on the pull request's head "
            f"`{head[:12]}` is {conclusion}; the queue's own CI checks the merged result."
        ),
    )
    return f"answered-{conclusion}"


async def _held(
    ctx: AppContext, gh: GitHubPort, d: Delivery[DequeuedEvent], pull: PullRequest
) -> str:
    """Why a person's stop keeps the PR out of the queue (landing's own stops), or ""."""
    try:
        config = await repo_config(gh, d.repo, d.payload.repository.default_branch)
    except ConfigError:
        config = Config()  # as landing plans with a config it cannot read
    try:
        labels = frozenset(lb.name for lb in (await gh.get_issue(d.repo, pull.number)).labels)
    except GitHubError as exc:
        if exc.status != 404:
            raise
        labels = frozenset()
    reviews = tuple(
        Review(r.user.login, r.state) for r in await gh.list_reviews(d.repo, pull.number) if r.user
    )
    return held_back(land=config.graph.land, labels=labels, reviews=reviews)


async def dequeued(ctx: AppContext, d: Delivery[DequeuedEvent]) -> str:
    """A magi PR left the merge queue: say why and the next step; add it back once per head
    when the queue let go of it on its own and the ``merge`` stands (see the docstring)."""
    p = d.payload
    if not is_magi_pull(p.pull_request, ctx.seal):
        return "not-a-magi-pr"  # decided from the payload: no call
    gh = await ctx.ports(d.installation, d.repo)
    pull = await gh.get_pull(d.repo, p.pull_request.number)
    if pull.merged or pull.state != "open":
        return "not-open"
    own = ctx.own(await gh.list_comments(d.repo, pull.number))
    approval = ctx.seal.latest(own, markers.APPROVAL)
    head = pull.head.sha
    stands = approval is not None and approval.get("sha") == head
    key = f"requeue-{head[:12]}"
    requeued = bool(ctx.seal.find(own, markers.REFUSAL, key=key))
    plan = after_dequeue(p.reason, stands=stands, requeued=requeued)
    if plan.next is Next.REQUEUE and (held := await _held(ctx, gh, d, pull)):
        plan = after_dequeue(p.reason, stands=stands, requeued=requeued, held=held)
    if plan.next is Next.NOTHING:
        return "dequeued-merged"
    if plan.next is Next.REQUEUE:
        # Saying it is the once-per-head claim (reply_once creates a ref first).
        if not await reply_once(ctx, gh, d.repo, pull.number, key, plan.message, head):
            return "requeued-already"
        try:
            await gh.enqueue_pull(d.repo, pull.number, sha=head)
        except GitHubError as exc:
            if exc.status not in (404, 422):
                raise
            words = f"GitHub would not add it back: {inert(exc.message)}; {AGAIN}."
            await reply_once(ctx, gh, d.repo, pull.number, f"{key}-refused", words, head)
            return "requeue-refused"
        return "requeued"
    reason = p.reason.strip().upper() or "NONE"
    await reply_once(
        ctx, gh, d.repo, pull.number, f"dequeued-{reason}-{head[:12]}", plan.message, head
    )
    return TO_LANDING if plan.next is Next.LAND else f"dequeued-{reason.lower()}"
