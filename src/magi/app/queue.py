"""A merge queue's group asks for checks: magi's own ``magi`` check answers it.

On a branch with a merge queue GitHub merges a PR only through the queue: it makes a merge
group (the base with the PR on it, on ``gh-readonly-queue/<base>/pr-<n>-<head>``), sends
``merge_group`` with ``checks_requested``, and merges once every required check is green on
the group's commit. CI workflows run there by themselves (``on: merge_group``); magi's own
``magi`` check is made by magi's publish job on the PR's head, never on a group, so a
repository that requires it would stall its queue. magi answers it: the group's ``magi``
check carries the conclusion magi gave the PR's head (what was verified is the same change;
the queue's own CI judges the merged result). A group whose PR is not magi's, or whose head
has no finished ``magi`` check, gets no answer from magi.
https://docs.github.com/en/webhooks/webhook-events-and-payloads#merge_group
https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/managing-a-merge-queue#triggering-merge-group-checks-with-third-party-ci-providers
"""

from __future__ import annotations

import re

from magi.app.context import AppContext
from magi.app.events import Delivery, MergeGroupEvent
from magi.app.pulls import is_magi_pull
from magi.github.port import GitHubError

__all__ = ["CHECK", "checks_requested", "group_pull"]

CHECK = "magi"  # the check magi's publish job makes on a PR's head
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
    ours = [c for c in await gh.list_check_runs(d.repo, head) if c.name == CHECK]
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
