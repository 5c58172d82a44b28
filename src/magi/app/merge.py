"""The merge gate, the one irreversible step: a writer's ``merge`` on a magi PR, then green.

An approval is recorded as a marker in the App's own reply (``approval comment= sha=
login=``), pinned to the head SHA at the comment: a head GitHub took after the comment (by
the push time in GitHub's activity log, never a committer date) voids it at once. Every
later event that may change the answer (a check or status finishing, a workflow run
completing) re-reads the PR and decides again with ``magi.core.threads.approval.decide``;
permission is re-checked right before merging. Each refusal or wait is said once per
(approval, reason, head) so the thread does not fill up.
A merge is a squash with the SHA precondition; then the issue is closed, the candidate
branches and the claim deleted, and the outcome commented. The gate itself is
``magi.github.gate``, which the workflow's merge job (without the App) runs too; this
module routes the App's deliveries to it.
"""

from __future__ import annotations

from magi.app import queue
from magi.app.context import AppContext
from magi.app.events import Delivery, IssueCommentEvent, MergeGroupEvent
from magi.app.events import Router as _Router
from magi.app.pulls import on_checks
from magi.core.threads.approval import Approval, CommentFacts, is_merge_word, read_approval
from magi.github import gate
from magi.github.gate import SameChange, is_magi_pull, issue_of, merging_ref, run_of
from magi.github.models import PullRequest, Repo
from magi.github.port import GitHubPort

__all__ = [
    "SameChange",
    "comment",
    "evaluate",
    "is_magi_pull",
    "issue_of",
    "merging_ref",
    "router",
    "run_of",
]

router = _Router()


def _maybe_approval(p: IssueCommentEvent) -> bool:
    return p.issue.pull_request is not None and is_merge_word(p.comment.body)


@router.on("issue_comment", "created", IssueCommentEvent, _maybe_approval)
@router.on("issue_comment", "edited", IssueCommentEvent, _maybe_approval)
async def comment(ctx: AppContext, d: Delivery[IssueCommentEvent]) -> str:
    p = d.payload
    if p.issue.pull_request is None or p.comment.user is None:
        return "not-a-pr"
    user = p.comment.user
    facts = CommentFacts(p.comment.body, user.login, user.type, p.action or "", None, user.id)
    if read_approval(facts, ctx.app_login) is Approval.NOT_ONE:
        return "not-an-approval"  # before any port is made
    gh = await ctx.ports(d.installation, d.repo)
    return await gate.on_comment(
        _gate(ctx),
        gh,
        d.repo,
        p.issue.number,
        facts,
        p.comment.id,
        p.comment.created_at,
        p.repository.default_branch,
    )


def _gate(ctx: AppContext) -> gate.Gate:
    return gate.Gate(ctx.app_login, ctx.seal, ctx.clock, ctx.sleep, ctx.same_change)


async def evaluate(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    number: int,
    default_branch: str,
    same_change: SameChange | None = None,
) -> str:
    """Decide again for PR ``number`` from its recorded approval; merge or say why not."""
    return await gate.evaluate(_gate(ctx), gh, repo, number, default_branch, same_change)


async def _merge(ctx: AppContext, gh: GitHubPort, repo: Repo, pull: PullRequest, key: str) -> str:
    return await gate.merge(ctx.seal, gh, repo, pull, key, ctx.sleep)


# A merge queue's group asks for checks: magi's own `magi` check answers (magi.app.queue).
router.on("merge_group", "checks_requested", MergeGroupEvent)(queue.checks_requested)

# A check or status finishing, or a workflow run completing, may change the answer.
on_checks(router, evaluate, ["check_suite", "check_run", "status", "workflow_run"])
