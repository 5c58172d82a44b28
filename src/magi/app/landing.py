"""Landing a magi PR, event by event: dispatch fix rounds and rebases, hold, fold when closed.

Event-driven: no loop waits for CI. A check or status finishing on a magi PR's head, a
review requesting changes, a review comment, or a push wakes this module; it reads the PR,
asks ``magi.core.threads.landing.plan`` for the next step and acts: dispatch ``land`` (a fix round)
or ``rebase`` to the runner, label ``magi:held`` with what still fails, or merge when
``land_approval = false`` was chosen (with an approval, ``magi.app.merge`` merges).
One job per PR and head: the dispatch is claimed by creating ``refs/magi/land/<pr>/<head>``
(GitHub creates a ref once), so simultaneous events start one job; events during a job
change nothing for that head, and the job's push makes a new head, the next claim. The
workflow's per-PR concurrency group keeps at most one job running and one queued. A job
that crashed gives its lock back (``magi.app.land_lock``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from magi.app import queue
from magi.app.context import AppContext, reply_once, repo_config
from magi.app.ending import record_ending
from magi.app.events import (
    Delivery,
    DequeuedEvent,
    PullRequestEvent,
    PushEvent,
    ReviewCommentEvent,
    ReviewEvent,
    Router,
)
from magi.app.labeled import claim_ref
from magi.app.land_lock import JOB_TAG, claim, give_back, handed_on, job_completed, land_ref
from magi.app.merge import _merge, evaluate
from magi.app.progress import WorkflowJobEvent, magi_job
from magi.app.pulls import is_magi_pull, issue_of, on_checks, run_of
from magi.app.rerun import rerun_once
from magi.core.threads import markers
from magi.core.threads.approval import is_bot, reviewer_counts
from magi.core.threads.landing import HELD, LandFacts, Plan, Review, Step, plan
from magi.errors import ConfigError
from magi.github.gate import head_checks, pull_facts
from magi.github.models import CheckRun, PullRequest, Repo, User
from magi.github.port import GitHubError, GitHubPort
from magi.github.state import delete_under, dispatch_inputs
from magi.model.config import Config

router = Router()
LAND = "land"  # marker of a dispatched landing job: step=, round=, sha=
TRACKING = "tracking"


async def _config(gh: GitHubPort, repo: Repo, branch: str) -> Config:
    try:
        return await repo_config(gh, repo, branch)
    except ConfigError:
        return Config()


async def facts_of(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    pull: PullRequest,
    config: Config,
    reviews: tuple[Review, ...] = (),
    runs: Sequence[CheckRun] | None = None,
) -> LandFacts:
    """What ``plan`` needs, read from GitHub and from the App's own markers (``runs``: the
    head's check runs when read already)."""
    own = ctx.own(await gh.list_comments(repo, pull.number))
    rounds = {m.get("round") for m in ctx.seal.find(own, LAND, step="fix")}
    head = pull.head.sha
    approval = ctx.seal.latest(own, markers.APPROVAL)
    try:
        labels = frozenset(lb.name for lb in (await gh.get_issue(repo, pull.number)).labels)
    except GitHubError as exc:
        if exc.status != 404:
            raise
        labels = frozenset()
    g = config.graph
    return LandFacts(
        pull=await pull_facts(gh, repo, pull),
        checks=await head_checks(gh, repo, pull.head.sha, runs),
        reviews=reviews,
        mergeable_state=pull.mergeable_state,
        labels=labels,
        rounds_used=len(rounds),
        land=g.land,
        land_approval=g.land_approval,
        land_rounds=g.land_rounds,
        approved_sha=approval["sha"] if approval else None,
        required=config.github.required_checks,
        # magi's rebase of this head stopped at a conflict and handed it on (rebase job)
        conflict=bool(ctx.seal.find(own, LAND, step="conflict", sha=head, to="fixer")),
        conflict_tried=bool(ctx.seal.find(own, LAND, step="fix", sha=head, conflict="1")),
    )


async def land(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    number: int,
    branch: str,
    reviews: tuple[Review, ...] = (),
) -> str:
    """Decide and act for PR ``number``; the outcome names what was done."""
    pull = await gh.get_pull(repo, number)
    if not is_magi_pull(pull, ctx.seal):
        return "not-a-magi-pr"
    config = await _config(gh, repo, branch)
    runs = await gh.list_check_runs(repo, pull.head.sha)  # read once: plan and re-run
    f = await facts_of(ctx, gh, repo, pull, config, reviews, runs)
    p = plan(f, ctx.clock())
    if p.step is Step.DONE:
        return await fold(ctx, gh, repo, pull)
    if p.step is Step.FIX and (rerun := await rerun_once(ctx, gh, repo, pull, p.names, runs)):
        return rerun  # a red check re-run once before a fix round is spent on it
    if p.step in (Step.FIX, Step.REBASE):
        return await _dispatch(ctx, gh, repo, pull, config, p, f.rounds_used + 1, branch)
    if p.step is Step.HOLD:
        await gh.add_labels(repo, number, [HELD])
        await reply_once(
            ctx,
            gh,
            repo,
            number,
            f"held-{pull.head.sha[:12]}",
            f"Landing held: {p.message}",
            pull.head.sha,
        )
        return "held"
    if p.step is Step.MERGE and not f.land_approval:
        return await _merge(ctx, gh, repo, pull, f"land-{pull.head.sha[:12]}")
    if p.step is Step.WAIT and p.reason == "checks-unknown" and not f.land_approval:
        await reply_once(
            ctx,
            gh,
            repo,
            number,
            f"unknown-{pull.head.sha[:12]}",
            f"Not merging: {p.message}",
            pull.head.sha,
        )
    return p.reason


async def _dispatch(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    pull: PullRequest,
    config: Config,
    p: Plan,
    round_no: int,
    branch: str,
) -> str:
    lock = await claim(ctx, gh, repo, pull)
    if lock is None:
        return "coalesced"  # a job for this head is queued or running
    step = "fix" if p.step is Step.FIX else "rebase"
    issue = issue_of(pull, ctx.seal)
    inputs = {
        "run_id": run_of(pull) or "",
        "issue": str(issue or ""),
        "command": LAND if step == "fix" else "rebase",
        "pr": str(pull.number),
    }
    if step == "fix":
        inputs["round"] = str(round_no)
    try:
        sent = await gh.dispatch_workflow(
            repo, config.github.workflow, branch, dispatch_inputs(config, **inputs)
        )
    except GitHubError:
        await give_back(gh, repo, pull, lock)  # no job will ever end and release it
        raise
    attrs: dict[str, object] = {"step": step, "sha": pull.head.sha, "lock": lock}
    if sent.workflow_run_id is not None:
        attrs["job"] = sent.workflow_run_id
    if step == "fix":
        attrs["round"] = round_no
    if p.reason == "conflict":
        attrs["conflict"] = 1  # the fixer gets this head's conflict once
    await gh.create_comment(
        repo,
        pull.number,
        f"Landing: {p.message}\n\n" + ctx.seal.marker(LAND, **attrs),
    )
    return f"dispatched-{step}"


async def fold(
    ctx: AppContext, gh: GitHubPort, repo: Repo, pull: PullRequest, delivery: str = ""
) -> str:
    """A magi PR merged (by magi or by hand) or closed: branches, claim, issue, tracking,
    and the ending written into the run record (``magi.app.ending``)."""
    run = run_of(pull)
    if run is not None:
        await delete_under(gh, repo, f"heads/magi/{run}/")
    for prefix in (
        f"magi/land/{pull.number}/",
        f"magi/said/{pull.number}/",
        f"magi/rerun/{pull.number}/",
    ):
        await delete_under(gh, repo, prefix)
    issue = issue_of(pull, ctx.seal)
    ending = "merged" if pull.merged else "closed"
    if issue is not None:
        await gh.delete_ref(repo, claim_ref(issue))
        if pull.merged:
            await gh.close_issue(repo, issue)
        await _track(ctx, gh, repo, issue, pull, ending)
    if run is not None:
        await record_ending(ctx, gh, repo, run, pull, delivery)
    return f"folded-{ending}"


async def _track(
    ctx: AppContext, gh: GitHubPort, repo: Repo, issue: int, pull: PullRequest, ending: str
) -> None:
    line = f"**Landing:** #{pull.number} {ending}."
    for c in await gh.list_comments(repo, issue):
        if c.body in ctx.own([c]) and ctx.seal.find([c.body], TRACKING, issue=str(issue)):
            if line not in c.body:
                head, sep, tail = c.body.rpartition("<!-- magi:")
                body = f"{head.rstrip()}\n\n{line}\n\n{sep}{tail}" if sep else f"{c.body}\n{line}"
                await gh.update_comment(repo, c.id, body)
            return


# A check or status finishing on a magi PR's head: plan the next step (a pending status
# changes nothing, so nothing is queued for it).
on_checks(router, land, ["check_suite", "check_run", "status"], pending=False)


async def _reviewer_counts(
    ctx: AppContext, gh: GitHubPort, d: Delivery[Any], user: User | None
) -> bool:
    """A review spends agents only from a writer or a bot ``[github] trusted_bots`` names."""
    if user is None:
        return False
    config = await _config(gh, d.repo, d.payload.repository.default_branch)
    trusted = config.github.trusted_bots
    level = None if is_bot(user.login, user.type) else (await gh.permission(d.repo, user.login))
    counts = reviewer_counts(user.login, user.type, level.permission if level else None, trusted)
    ctx.step(d.id, d.repo, "reviewer", "counts" if counts else "ignored")
    return counts


@router.on("pull_request_review", "submitted", ReviewEvent)
async def review(ctx: AppContext, d: Delivery[ReviewEvent]) -> str:
    p = d.payload
    gh = await ctx.ports(d.installation, d.repo)
    if not await _reviewer_counts(ctx, gh, d, p.review.user):
        return "reviewer-not-a-writer"
    login = p.review.user.login if p.review.user else ""
    seen = (Review(login, p.review.state),)
    number, branch = p.pull_request.number, p.repository.default_branch
    done = await land(ctx, gh, d.repo, number, branch, seen)
    if p.review.state.upper() != "APPROVED" or done.startswith(("dispatched", "merge", "folded")):
        return done
    # A writer's approval is what a required-review rule waits for: decide again now.
    return await evaluate(ctx, gh, d.repo, number, branch)


@router.on("pull_request_review_comment", "created", ReviewCommentEvent)
async def review_comment(ctx: AppContext, d: Delivery[ReviewCommentEvent]) -> str:
    p = d.payload
    gh = await ctx.ports(d.installation, d.repo)
    if not await _reviewer_counts(ctx, gh, d, p.comment.user):
        return "reviewer-not-a-writer"
    login = p.comment.user.login if p.comment.user else ""
    # A line comment asks for a change the way a review requesting changes does.
    seen = (Review(login, "CHANGES_REQUESTED"),)
    return await land(ctx, gh, d.repo, p.pull_request.number, p.repository.default_branch, seen)


def _onto_default(p: PushEvent) -> bool:
    return p.ref == f"refs/heads/{p.repository.default_branch}" and bool(p.after.strip("0"))


@router.on("push", None, PushEvent, _onto_default)
async def base_moved(ctx: AppContext, d: Delivery[PushEvent]) -> str:
    """The default branch moved (a person's merge, magi's own squash): every open magi PR
    on it plans again now, so one that is behind is rebased without waiting for some check
    or review event to wake it. GitHub computes ``mergeable`` after a push in the
    background and sends no event when done: a PR GitHub has not computed yet (null) is
    planned on what GitHub does say (``mergeable_state`` behind rebases), never guessed;
    the next event about it reads it again."""
    repo, branch = d.repo, d.payload.repository.default_branch
    gh = await ctx.ports(d.installation, repo)
    pulls = [
        p for p in await gh.list_pulls(repo) if p.base.ref == branch and is_magi_pull(p, ctx.seal)
    ]
    outcomes = []
    for one in pulls:
        outcomes.append(await land(ctx, gh, repo, one.number, branch))
    return ",".join(outcomes) or "no-magi-pr"


@router.on("pull_request", "closed", PullRequestEvent)
async def closed(ctx: AppContext, d: Delivery[PullRequestEvent]) -> str:
    pull = d.payload.pull_request
    if not is_magi_pull(pull, ctx.seal):
        return "not-a-magi-pr"
    gh = await ctx.ports(d.installation, d.repo)
    return await fold(ctx, gh, d.repo, await gh.get_pull(d.repo, pull.number), d.id)


@router.on("pull_request", "synchronize", PullRequestEvent)
async def synchronize(ctx: AppContext, d: Delivery[PullRequestEvent]) -> str:
    """New commits: a pending approval dies unless magi's rebase kept it (same patch)."""
    pull = d.payload.pull_request
    if not is_magi_pull(pull, ctx.seal):
        return "not-a-magi-pr"
    repo = d.repo
    gh = await ctx.ports(d.installation, repo)
    own = ctx.own(await gh.list_comments(repo, pull.number))
    approval = ctx.seal.latest(own, markers.APPROVAL)
    if approval is None or approval["sha"] == pull.head.sha:
        return "no-approval"
    await reply_once(
        ctx,
        gh,
        repo,
        pull.number,
        f"voided-{approval['comment']}-{pull.head.sha[:12]}",
        "new commits since the approval: comment `merge` again.",
        pull.head.sha,
    )
    return "approval-voided"


@router.on("pull_request", "dequeued", DequeuedEvent)
async def dequeued(ctx: AppContext, d: Delivery[DequeuedEvent]) -> str:
    """Taken out of a merge queue: said with GitHub's reason (``magi.app.queue``); a
    conflict is planned here, so it goes to the fixer once."""
    done = await queue.dequeued(ctx, d)
    if done != queue.TO_LANDING:
        return done
    gh = await ctx.ports(d.installation, d.repo)
    number, branch = d.payload.pull_request.number, d.payload.repository.default_branch
    return f"dequeued-{await land(ctx, gh, d.repo, number, branch)}"


@router.on("workflow_job", "completed", WorkflowJobEvent, magi_job)  # others: no call
async def job_ended(ctx: AppContext, d: Delivery[WorkflowJobEvent]) -> str:
    """A landing job ended: its lock is released (``magi.app.land_lock``); after a rebase
    that stopped at a conflict and handed it to the fixer (once per head), the PR is
    planned now: no other event is coming (GitHub says nothing when it finishes computing
    ``mergeable``)."""
    done = await job_completed(ctx, d)
    m = JOB_TAG.search(d.payload.workflow_job.name)
    if done != "released" or m is None:
        return done
    gh = await ctx.ports(d.installation, d.repo)
    if not await handed_on(ctx, gh, d.repo, int(m[1])):
        return done
    return f"{done},{await land(ctx, gh, d.repo, int(m[1]), d.payload.repository.default_branch)}"


__all__ = ["dequeued", "evaluate", "fold", "job_ended", "land", "land_ref", "router"]
