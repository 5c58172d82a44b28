"""The merge gate over the port, the one irreversible step, shared by the App and the workflow.

A writer's ``merge`` comment on a magi PR is an approval, recorded as a marker in magi's own
reply (``approval comment= sha= login=``) and pinned to the head SHA at the comment: a head
pushed after the comment voids it. "After" is by GitHub's clock, the time GitHub's activity
log gives the push (``list_activities``), never the head commit's committer date, which
whoever made the commit chose (a backdated commit pushed after the comment is not approved);
a head whose push the log does not show is not approved either. ``evaluate`` re-reads the
PR, its checks and statuses and decides with ``magi.core.threads.approval.decide``; the approver's
permission is re-checked right before merging; a merge is a squash with the SHA
precondition, one at a time per PR (the ``merging`` ref is the lock), then the issue is
closed and the claim and candidate branches deleted. Each refusal or wait is said once per
(approval, reason, head). GitHub's 405s are read apart (``magi.core.threads.refusal``): a
race ("Base branch was modified") is tried again, bounded; a branch rule is said with who
acts next; a merge queue gets the PR enqueued. The approval reply promises only what the
branch's rules (``GET /rules/branches/{branch}``) allow, and ``mergeable: null`` is never
polled or guessed: the next event about the PR reads it again.

The App (``magi.app.merge``) calls this on deliveries; without the App, the workflow's merge
job calls it from ``magi action merge`` with the event GitHub wrote to disk. Both pass a
``Gate``: whose comments are magi's, the clock, the sleep, and the same-change rule.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from magi.core.threads import markers
from magi.core.threads.approval import (
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
from magi.core.threads.landing import BEHIND
from magi.core.threads.markers import Seal
from magi.core.threads.posting import code, inert
from magi.core.threads.refusal import MERGE_TRIES, Why, read_refusal, when_it_merges
from magi.errors import ConfigError
from magi.github.models import CheckRun, Comment, MergeResult, PullRequest, Repo
from magi.github.port import GitHubError, GitHubPort
from magi.github.state import claim_ref, own_bodies, refs_under, reply_once, repo_config

__all__ = [
    "Gate",
    "SameChange",
    "approval_voided",
    "evaluate",
    "is_magi_pull",
    "issue_of",
    "magi_pulls_of",
    "merge",
    "merging_ref",
    "on_comment",
    "pushed_at",
    "run_of",
    "tidy",
    "wake",
]

# Issue 11 passes git patch-id --stable equality here; until then only the same SHA counts.
SameChange = Callable[[str, str], bool]
MERGEABLE_WAIT = 2.0  # seconds between bounded re-reads (the activity log, a merge race)
PUSH_READS = 3  # the activity log can trail a push by a moment: read again, bounded


def _now() -> datetime:
    return datetime.now(UTC)


def _when(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(frozen=True)
class Gate:
    """Who decides: magi's login (whose comments count), the seal (which markers are magi's),
    the clock, the sleep, same-change."""

    app_login: str
    seal: Seal
    clock: Callable[[], datetime] = _now
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    same_change: SameChange | None = None

    def own(self, comments: list[Comment]) -> list[str]:
        """The bodies of the comments magi wrote (the only ones whose markers count)."""
        return own_bodies(self.app_login, comments)


def is_magi_pull(pull: PullRequest, seal: Seal) -> bool:
    """A PR magi opened: its head is a ``magi/<run>/...`` branch *in the base's own
    repository*, and its body carries magi's sealed ``pr`` marker naming that run.

    The branch name alone is no proof: anyone can open a fork PR from a branch named
    ``magi/<someone's run>/x``; its head is in the fork, so it is not magi's (nor is a head
    whose repository is unknown, as when the fork was deleted). A writer's own branch in the
    repository named ``magi/...`` is not magi's either: only publish writes the marker.
    """
    run = run_of(pull)
    if run is None or not pull.head.ref.startswith("magi/") or not same_repo(pull):
        return False
    return bool(seal.find([pull.body], markers.PR, run=run))


def same_repo(pull: PullRequest) -> bool:
    """The PR's head lives in the repository of its base (by id when both say one)."""
    head, base = pull.head.repo, pull.base.repo
    if head is None or base is None:
        return False
    if head.id is not None and base.id is not None:
        return head.id == base.id
    return bool(head.full_name) and head.full_name.lower() == base.full_name.lower()


def run_of(pull: PullRequest) -> str | None:
    parts = pull.head.ref.split("/")
    return parts[1] if len(parts) >= 3 else None


def issue_of(pull: PullRequest, seal: Seal) -> int | None:
    """The issue a magi PR is for, from its sealed ``pr`` marker (never a closing keyword)."""
    return seal.issue_of_pull(pull.body)


async def magi_pulls_of(
    gh: GitHubPort, repo: Repo, sha: str, named: Iterable[int], seal: Seal
) -> list[int]:
    """The PRs a check on ``sha`` concerns: those it named, else the open magi PRs at ``sha``.

    Named PRs are not filtered here (that takes a read per PR; each action reads its PR
    anyway and leaves a PR that is not magi's alone).
    """
    numbers = list(dict.fromkeys(named))
    if numbers:
        return numbers
    return [
        p.number for p in await gh.list_pulls(repo) if p.head.sha == sha and is_magi_pull(p, seal)
    ]


def merging_ref(number: int) -> str:
    return f"refs/magi/merging/pr-{number}"


async def on_comment(
    g: Gate,
    gh: GitHubPort,
    repo: Repo,
    number: int,
    facts: CommentFacts,
    comment_id: int,
    created_at: datetime | None,
    default_branch: str,
) -> str:
    """A ``merge`` comment on PR ``number``: record the approval, then decide; or say why not."""
    if read_approval(facts, g.app_login) is Approval.NOT_ONE:
        return "not-an-approval"
    pull = await gh.get_pull(repo, number)
    if not is_magi_pull(pull, g.seal):
        return "not-a-magi-pr"
    level = (await gh.permission(repo, facts.login)).permission
    kind = read_approval(
        CommentFacts(facts.body, facts.login, facts.user_type, facts.action, level, facts.user_id),
        g.app_login,
    )
    if kind is not Approval.APPROVED:
        words = approval_refusal(kind, facts.login, level)
        # A person without write access is told once per thread, however often they say it.
        key = (
            f"stranger-merge-{facts.login}"
            if kind is Approval.NOT_A_WRITER
            else (f"approval-{comment_id}")
        )
        await reply_once(g.seal, gh, repo, number, key, f"Not merging: {words}", pull.head.sha)
        return str(kind.value)
    sha = pull.head.sha
    pushed, why = await _push_before(g, gh, repo, pull, created_at)
    if pushed is None or created_at is None:
        await reply_once(
            g.seal, gh, repo, number, f"approval-{comment_id}", f"Not merging: {why}", sha
        )
        return "push-time-unknown"
    if pushed >= created_at:  # same second: the writer cannot have seen it
        await reply_once(
            g.seal,
            gh,
            repo,
            number,
            f"approval-{comment_id}",
            f"Not merging: the head moved after this `merge` was written (GitHub took the "
            f"push of `{sha[:12]}` at {_when(pushed)}, the comment is from {_when(created_at)}); "
            "new commits need a new `merge`.",
            sha,
        )
        return "head-moved"
    own = g.own(await gh.list_comments(repo, number))
    if g.seal.find(own, markers.APPROVAL, comment=str(comment_id)):
        return await evaluate(g, gh, repo, number, default_branch)  # a redelivery
    promise = when_it_merges(await _rules_of(gh, repo, pull.base.ref))
    await gh.create_comment(
        repo,
        number,
        f"Approval by @{facts.login} recorded for `{sha[:12]}`. {promise}; a new push needs "
        "a new `merge`.\n\n"
        + g.seal.marker(
            markers.APPROVAL,
            comment=comment_id,
            sha=sha,
            login=facts.login,
            **({"uid": facts.user_id} if facts.user_id else {}),
        ),
    )
    # The reaction says "recorded" only once the approval is: a failed reply leaves none.
    await gh.react_to_comment(repo, comment_id, "+1")
    return await evaluate(g, gh, repo, number, default_branch)


async def _rules_of(
    gh: GitHubPort, repo: Repo, branch: str
) -> list[tuple[str, dict[str, object]]] | None:
    """The rules GitHub lists for ``branch`` (None when it will not say)."""
    try:
        return [(r.type, r.parameters) for r in await gh.branch_rules(repo, branch)]
    except GitHubError:
        return None


def approval_voided(approval: Mapping[str, str], thread: Iterable[Comment]) -> str:
    """Why the comment an approval names no longer approves ("" while it does).

    The marker is sealed, so it is magi's; this re-reads what it points at before the one
    irreversible step: the comment must still be on this PR, by the writer the marker
    names, unedited, and still the whole word ``merge``. Deleting or editing the comment
    takes the approval back."""
    found = [c for c in thread if str(c.id) == approval.get("comment", "")]
    if not found:
        return "was deleted (or is not on this pull request)"
    c = found[0]
    uid = approval.get("uid", "")
    if c.user is None or (
        str(c.user.id) != uid
        if uid and c.user.id
        else c.user.login.lower() != approval.get("login", "").lower()
    ):
        return "is not by the writer the approval names"
    if c.created_at and c.updated_at and c.updated_at > c.created_at:
        return "was edited"
    if not is_merge_word(c.body):
        return "no longer says `merge`"
    return ""


NO_ACTIVITY_API = (
    "GitHub answered 404 for the repository activity log (`GET /repos/{owner}/{repo}/activity`; "
    "a GitHub Enterprise Server without it), the only record of when a push arrived, so magi "
    "cannot approve here: a `merge` cannot be told from a push made after it. Merge by hand."
)


async def _push_before(
    g: Gate, gh: GitHubPort, repo: Repo, pull: PullRequest, created_at: datetime | None
) -> tuple[datetime | None, str]:
    """GitHub's time for the push of ``pull``'s head, or None and why it cannot be had."""
    if created_at is None:
        return None, "the comment carries no creation time to pin it to. Say `merge` again."
    try:
        pushed = await pushed_at(gh, repo, pull, sleep=g.sleep, reads=PUSH_READS)
    except GitHubError as exc:
        if exc.status != 404:
            raise
        return None, NO_ACTIVITY_API
    if pushed is None:
        return None, (
            f"GitHub's activity log does not show yet that {code(pull.head.ref)} was pushed to "
            f"`{pull.head.sha[:12]}`, so magi cannot tell that this `merge` came after it. Say "
            "`merge` again in a minute; if this repeats, GitHub keeps no record of that push: "
            "merge by hand."
        )
    return pushed, ""


async def head_checks(
    gh: GitHubPort, repo: Repo, sha: str, runs: Sequence[CheckRun] | None = None
) -> list[Check]:
    """Every check run and commit status on ``sha``, as the pure decisions read them
    (``runs``: the check runs on ``sha`` when the caller read them already)."""
    if runs is None:
        runs = await gh.list_check_runs(repo, sha)
    checks = [Check(c.name, c.status, c.conclusion) for c in runs]
    combined = await gh.combined_status(repo, sha)
    if combined.total_count:
        checks += [status_check(s.context, s.state) for s in combined.statuses]
    return checks


async def pushed_at(
    gh: GitHubPort,
    repo: Repo,
    pull: PullRequest,
    *,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    reads: int = 1,
) -> datetime | None:
    """When GitHub took the push that set ``pull``'s branch to its head, by GitHub's clock.

    Only the branch's newest change counts, and it must have set the branch to the head: an
    older entry with that SHA may be from before a later push the log does not show yet
    (the log can trail a push by a moment). Otherwise None, after ``reads`` reads
    ``MERGEABLE_WAIT`` apart. A GitHub without the endpoint raises (404) like any failure.
    """
    ref = f"refs/heads/{pull.head.ref}"
    for attempt in range(reads):
        log = [a for a in await gh.list_activities(repo, ref) if a.ref == ref]
        # newest first; a stable sort keeps GitHub's own order within one second
        newest = sorted(log, key=lambda a: a.timestamp, reverse=True)[:1]
        if (
            newest
            and newest[0].after == pull.head.sha
            and newest[0].activity_type != "branch_deletion"
        ):
            return newest[0].timestamp
        if sleep is not None and attempt + 1 < reads:
            await sleep(MERGEABLE_WAIT)
    return None


async def pull_facts(gh: GitHubPort, repo: Repo, pull: PullRequest) -> PullFacts:
    """The PR as the pure decisions read it, with when its head was pushed.

    The push time only tells "no checks yet" (waiting, within three minutes of the push)
    from "no checks at all" (unknown): neither merges, so where the activity log shows no
    push, or cannot be read, the committer date stands in for it.
    """
    try:
        pushed = await pushed_at(gh, repo, pull)
    except GitHubError:
        pushed = None
    if pushed is None:
        pushed = (await gh.get_commit(repo, pull.head.sha)).committed_at
    return PullFacts(
        number=pull.number,
        head_sha=pull.head.sha,
        state=pull.state,
        merged=pull.merged,
        draft=pull.draft,
        mergeable=pull.mergeable,
        pushed_at=pushed,
    )


async def evaluate(
    g: Gate,
    gh: GitHubPort,
    repo: Repo,
    number: int,
    default_branch: str,
    same_change: SameChange | None = None,
) -> str:
    """Decide again for PR ``number`` from its recorded approval; merge or say why not."""
    thread = await gh.list_comments(repo, number)
    approval = g.seal.latest(g.own(thread), markers.APPROVAL)
    if approval is None:
        return "no-approval"  # silence is a hold
    pull = await gh.get_pull(repo, number)
    if not is_magi_pull(pull, g.seal) or pull.merged:
        return "not-open"
    gone = approval_voided(approval, thread)
    if gone:
        await reply_once(
            g.seal,
            gh,
            repo,
            number,
            f"voided-{approval.get('comment', '')}",
            f"Not merging: the `merge` comment this approval was recorded for {gone}. "
            "A writer must say `merge` again.",
            pull.head.sha,
        )
        return "approval-voided"
    # GitHub computes `mergeable` in the background after a push and answers null meanwhile
    # (this read starts the computation); it sends no event when it is done. A null is
    # never guessed: ``decide`` waits, and the next event about this PR reads it again.
    # https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request
    try:
        config = await repo_config(gh, repo, default_branch)
        required, land = config.github.required_checks, config.graph.land
    except ConfigError:
        required, land = [], True
    checks = await head_checks(gh, repo, pull.head.sha)
    facts = await pull_facts(gh, repo, pull)
    same_change = same_change or g.same_change
    kw = {"same_change": same_change} if same_change else {}
    decision = decide(facts, approval["sha"], checks, g.clock(), required=required, **kw)
    if decision.outcome is Outcome.MERGE and land and pull.mergeable_state in BEHIND:
        return "rebasing"  # landing rebases first (magi.app.landing); the approval waits
    key = f"gate-{approval['comment']}-{decision.reason}-{pull.head.sha[:12]}"
    if decision.outcome is not Outcome.MERGE:
        words = f"Not merging yet: {decision.message}"
        await reply_once(g.seal, gh, repo, number, key, words, pull.head.sha)
        return decision.reason
    login = approval.get("login", "")
    if not may_write((await gh.permission(repo, login)).permission):
        await reply_once(
            g.seal,
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
        return await merge(g.seal, gh, repo, pull, key, g.sleep)
    finally:
        await tidy(gh.delete_ref(repo, lock))


async def wake(
    g: Gate, gh: GitHubPort, repo: Repo, default_branch: str, sha: str, numbers: list[int]
) -> str:
    """Something on ``sha`` finished: decide again for the magi PRs it concerns."""
    numbers = await magi_pulls_of(gh, repo, sha, numbers, g.seal)
    outcomes = [await evaluate(g, gh, repo, n, default_branch) for n in numbers]
    return ",".join(outcomes) or "no-pr"


async def merge(
    seal: Seal,
    gh: GitHubPort,
    repo: Repo,
    pull: PullRequest,
    key: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> str:
    """Squash-merge ``pull`` at its head SHA (GitHub refuses if it moved), then clean up.

    A 405 is read (``magi.core.threads.refusal``): a race with another merge ("Base branch
    was modified") is tried again, ``MERGE_TRIES`` attempts in all; a rule that needs a
    person or time (a required review, a required check, an up-to-date branch, a merge
    queue) is said with the next step, once per reason and head.
    """
    try:
        result = await _merge_once(gh, repo, pull, sleep)
    except GitHubError as exc:
        if exc.status == 409:
            words, why = "the head moved while merging; new commits need a new `merge`.", ""
        elif exc.status == 405:
            refusal = read_refusal(exc.message)
            if refusal.why is Why.QUEUE:
                return await _enqueue(seal, gh, repo, pull, key, refusal.message)
            words, why = refusal.message, f"-{refusal.why.value}"
        else:
            raise
        await reply_once(
            seal,
            gh,
            repo,
            pull.number,
            f"{key}-{exc.status}{why}",
            f"Not merging: {words}",
            pull.head.sha,
        )
        return f"merge-refused-{exc.status}{why}"
    return await _after_merge(seal, gh, repo, pull, result)


async def _enqueue(
    seal: Seal, gh: GitHubPort, repo: Repo, pull: PullRequest, key: str, refused: str
) -> str:
    """The branch merges only through its merge queue: add the PR (GraphQL
    ``enqueuePullRequest``, pinned to the approved head), once per approval and head (saying
    so is the claim); GitHub merges it when the queue's checks pass on the merged result."""
    sha = pull.head.sha
    said = await reply_once(
        seal,
        gh,
        repo,
        pull.number,
        f"{key}-queue",
        f"Adding `{sha[:12]}` to the merge queue: this branch merges only through it. GitHub "
        "merges it once the queue's checks pass on the merged result; magi answers its own "
        "`magi` check for the queue.",
        sha,
    )
    if not said:
        return "enqueued-already"
    try:
        await gh.enqueue_pull(repo, pull.number, sha=sha)
    except GitHubError as exc:
        if exc.status not in (404, 422):
            raise
        words = f"{refused} GitHub would not add it: {inert(exc.message)}"
        await reply_once(
            seal, gh, repo, pull.number, f"{key}-queue-refused", f"Not merging: {words}", sha
        )
        return "enqueue-refused"
    return "enqueued"


async def _merge_once(
    gh: GitHubPort, repo: Repo, pull: PullRequest, sleep: Callable[[float], Awaitable[None]]
) -> MergeResult:
    """The merge call, tried again (bounded) while GitHub says the base raced it."""
    attempt = 1
    while True:
        try:
            return await gh.merge_pull(
                repo,
                pull.number,
                sha=pull.head.sha,
                method="squash",
                title=f"{pull.title} (#{pull.number})",
            )
        except GitHubError as exc:
            if exc.status != 405 or not read_refusal(exc.message).retry or attempt == MERGE_TRIES:
                raise
        await sleep(MERGEABLE_WAIT * attempt)
        attempt += 1


async def _after_merge(
    seal: Seal, gh: GitHubPort, repo: Repo, pull: PullRequest, result: MergeResult
) -> str:
    # The merge is done and cannot be undone; each clean-up step after it is on its own, so
    # one GitHub failure does not skip the rest, and the comment says what is left to do.
    issue, run = issue_of(pull, seal), run_of(pull)
    left: list[str] = []
    if issue is not None:
        if not await tidy(gh.close_issue(repo, issue)):
            left.append(f"close #{issue}")
        if not await tidy(gh.delete_ref(repo, claim_ref(issue))):
            left.append(f"delete `{claim_ref(issue)}`")
    if run is not None:
        try:
            refs, _ = refs_under(
                await gh.matching_refs(repo, f"heads/magi/{run}/"), f"heads/magi/{run}/"
            )
        except GitHubError:
            refs = []
            left.append(f"delete the branches `magi/{run}/*`")
        for ref in refs:
            if not await tidy(gh.delete_ref(repo, ref.ref.removeprefix("refs/"))):
                left.append(f"delete `{ref.ref}`")
    for thread in {pull.number, issue} - {None}:  # the reply-once records have served
        try:
            said, _ = refs_under(
                await gh.matching_refs(repo, f"magi/said/{thread}/"), f"magi/said/{thread}/"
            )
        except GitHubError:
            said = []
        for ref in said:
            await tidy(gh.delete_ref(repo, ref.ref.removeprefix("refs/")))
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


async def tidy(step: Awaitable[object]) -> bool:
    try:
        await step
    except GitHubError:
        return False
    return True
