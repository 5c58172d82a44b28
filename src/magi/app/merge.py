"""The merge gate, the one irreversible step: a writer's ``merge`` on a magi PR, then green.

An approval is recorded as a marker in the App's own reply (``approval comment= sha=
login=``), pinned to the head SHA at the comment: a head commit made after the comment
voids it at once. Every later event that may change the answer (a check or status
finishing, a workflow run completing) re-reads the PR and decides again with
``magi.core.approval.decide``; permission is re-checked right before merging. Each refusal
or wait is said once per (approval, reason, head) so the thread does not fill up.
A merge is a squash with the SHA precondition; then the issue is closed, the candidate
branches and the claim deleted, and the outcome commented.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from magi.app.context import AppContext, reply_once, repo_config
from magi.app.events import Delivery, IssueCommentEvent
from magi.app.events import Router as _Router
from magi.app.labeled import claim_ref
from magi.app.pulls import is_magi_pull, issue_of, on_checks, run_of
from magi.core import markers
from magi.core.approval import (
    Approval,
    Check,
    CommentFacts,
    Outcome,
    PullFacts,
    approval_refusal,
    decide,
    is_merge_word,
    may_write,
    read_approval,
    status_check,
)
from magi.core.landing import BEHIND
from magi.errors import ConfigError
from magi.github.models import PullRequest, Repo
from magi.github.port import GitHubError, GitHubPort

router = _Router()
# Issue 11 passes git patch-id --stable equality here; until then only the same SHA counts.
SameChange = Callable[[str, str], bool]
MERGEABLE_READS = 3
MERGEABLE_WAIT = 2.0


def _maybe_approval(p: IssueCommentEvent) -> bool:
    return p.issue.pull_request is not None and is_merge_word(p.comment.body)


@router.on("issue_comment", "created", IssueCommentEvent, _maybe_approval)
@router.on("issue_comment", "edited", IssueCommentEvent, _maybe_approval)
async def comment(ctx: AppContext, d: Delivery[IssueCommentEvent]) -> str:
    p = d.payload
    if p.issue.pull_request is None or p.comment.user is None:
        return "not-a-pr"
    facts = CommentFacts(p.comment.body, p.comment.user.login, p.comment.user.type, p.action or "")
    if read_approval(facts, ctx.app_login) is Approval.NOT_ONE:
        return "not-an-approval"
    repo, number = d.repo, p.issue.number
    gh = await ctx.ports(d.installation, repo)
    pull = await gh.get_pull(repo, number)
    if not is_magi_pull(pull):
        return "not-a-magi-pr"
    level = (await gh.permission(repo, facts.login)).permission
    kind = read_approval(
        CommentFacts(facts.body, facts.login, facts.user_type, facts.action, level), ctx.app_login
    )
    if kind is not Approval.APPROVED:
        words = approval_refusal(kind, facts.login, level)
        key = f"approval-{p.comment.id}"
        await reply_once(ctx, gh, repo, number, key, f"Not merging: {words}", pull.head.sha)
        return str(kind.value)
    sha = pull.head.sha
    head = await gh.get_commit(repo, sha)
    made = p.comment.created_at
    if made is not None and head.committed_at is not None and head.committed_at > made:
        await reply_once(
            ctx,
            gh,
            repo,
            number,
            f"approval-{p.comment.id}",
            "Not merging: the head moved after this `merge` was written; new commits need a "
            "new `merge`.",
            sha,
        )
        return "head-moved"
    own = ctx.own(await gh.list_comments(repo, number))
    if markers.find(own, markers.APPROVAL, comment=str(p.comment.id)):
        return await evaluate(ctx, gh, repo, number, p.repository.default_branch)  # redelivery
    await gh.react_to_comment(repo, p.comment.id, "+1")
    await gh.create_comment(
        repo,
        number,
        f"Approval by @{facts.login} recorded for `{sha[:12]}`. magi merges once every check "
        "is green; a new push needs a new `merge`.\n\n"
        + markers.marker(markers.APPROVAL, comment=p.comment.id, sha=sha, login=facts.login),
    )
    return await evaluate(ctx, gh, repo, number, p.repository.default_branch)


async def evaluate(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    number: int,
    default_branch: str,
    same_change: SameChange | None = None,
) -> str:
    """Decide again for PR ``number`` from its recorded approval; merge or say why not."""
    approval = markers.latest(ctx.own(await gh.list_comments(repo, number)), markers.APPROVAL)
    if approval is None:
        return "no-approval"  # silence is a hold
    pull = await gh.get_pull(repo, number)
    if not is_magi_pull(pull) or pull.merged:
        return "not-open"
    for _ in range(MERGEABLE_READS):
        # GitHub computes `mergeable` in the background after a push and answers null
        # meanwhile: read again, a little later, a bounded number of times.
        # https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request
        if pull.mergeable is not None:
            break
        await ctx.sleep(MERGEABLE_WAIT)
        pull = await gh.get_pull(repo, number)
    try:
        config = await repo_config(gh, repo, default_branch)
        required, land = config.github.required_checks, config.graph.land
    except ConfigError:
        required, land = [], True
    checks = [
        Check(c.name, c.status, c.conclusion) for c in await gh.list_check_runs(repo, pull.head.sha)
    ]
    combined = await gh.combined_status(repo, pull.head.sha)
    if combined.total_count:
        checks += [status_check(s.context, s.state) for s in combined.statuses]
    head = await gh.get_commit(repo, pull.head.sha)
    facts = PullFacts(
        number=pull.number,
        head_sha=pull.head.sha,
        state=pull.state,
        merged=pull.merged,
        draft=pull.draft,
        mergeable=pull.mergeable,
        pushed_at=head.committed_at,
    )
    same_change = same_change or ctx.same_change
    kw = {"same_change": same_change} if same_change else {}
    decision = decide(facts, approval["sha"], checks, ctx.clock(), required=required, **kw)
    if decision.outcome is Outcome.MERGE and land and pull.mergeable_state in BEHIND:
        return "rebasing"  # landing rebases first (magi.app.landing); the approval waits
    key = f"gate-{approval['comment']}-{decision.reason}-{pull.head.sha[:12]}"
    if decision.outcome is not Outcome.MERGE:
        words = f"Not merging yet: {decision.message}"
        await reply_once(ctx, gh, repo, number, key, words, pull.head.sha)
        return decision.reason
    login = approval.get("login", "")
    if not may_write((await gh.permission(repo, login)).permission):
        await reply_once(
            ctx,
            gh,
            repo,
            number,
            f"{key}-perm",
            f"Not merging: @{login} no longer has write permission; a writer must say `merge`.",
            pull.head.sha,
        )
        return "approver-lost-permission"
    # One merge per PR however many events decide "merge" at once (a check_run, its
    # check_suite and its workflow_run arrive together): the merging ref is the lock.
    lock = merging_ref(pull.number)
    if not await gh.create_ref(repo, lock, pull.head.sha):
        return "merging-elsewhere"
    try:
        return await _merge(ctx, gh, repo, pull, key)
    finally:
        await _tidy(gh.delete_ref(repo, lock))


def merging_ref(number: int) -> str:
    return f"refs/magi/merging/pr-{number}"


async def _merge(ctx: AppContext, gh: GitHubPort, repo: Repo, pull: PullRequest, key: str) -> str:
    try:
        result = await gh.merge_pull(
            repo,
            pull.number,
            sha=pull.head.sha,
            method="squash",
            title=f"{pull.title} (#{pull.number})",
        )
    except GitHubError as exc:
        if exc.status == 409:
            words = "the head moved while merging; new commits need a new `merge`."
        elif exc.status == 405:
            words = f"GitHub refused the merge: {exc.message}"
        else:
            raise
        await reply_once(
            ctx,
            gh,
            repo,
            pull.number,
            f"{key}-{exc.status}",
            f"Not merging: {words}",
            pull.head.sha,
        )
        return f"merge-refused-{exc.status}"
    # The merge is done and cannot be undone; each clean-up step after it is on its own, so
    # one GitHub failure does not skip the rest, and the comment says what is left to do.
    issue, run = issue_of(pull), run_of(pull)
    left: list[str] = []
    if issue is not None:
        if not await _tidy(gh.close_issue(repo, issue)):
            left.append(f"close #{issue}")
        if not await _tidy(gh.delete_ref(repo, claim_ref(issue))):
            left.append(f"delete `{claim_ref(issue)}`")
    if run is not None:
        try:
            refs = await gh.matching_refs(repo, f"heads/magi/{run}/")
        except GitHubError:
            refs = []
            left.append(f"delete the branches `magi/{run}/*`")
        for ref in refs:
            if not await _tidy(gh.delete_ref(repo, ref.ref.removeprefix("refs/"))):
                left.append(f"delete `{ref.ref}`")
    for thread in {pull.number, issue} - {None}:  # the reply-once records have served
        try:
            said = await gh.matching_refs(repo, f"magi/said/{thread}/")
        except GitHubError:
            said = []
        for ref in said:
            await _tidy(gh.delete_ref(repo, ref.ref.removeprefix("refs/")))
    done = f" Closed #{issue}." if issue is not None and f"close #{issue}" not in left else ""
    tail = (
        " GitHub refused some of the clean-up; still to do: " + ", ".join(left) + "."
        if left
        else " The candidate branches are deleted."
    )
    await gh.create_comment(
        repo,
        pull.number,
        f"Merged as `{(result.sha or '')[:12]}` (squash of `{pull.head.sha[:12]}`).{done}{tail}",
    )
    return "merged"


async def _tidy(step: Awaitable[object]) -> bool:
    try:
        await step
    except GitHubError:
        return False
    return True


# A check or status finishing, or a workflow run completing, may change the answer.
on_checks(router, evaluate, ["check_suite", "check_run", "status", "workflow_run"])

__all__ = ["evaluate", "is_magi_pull", "issue_of", "merging_ref", "router", "run_of"]
