"""The one-landing-job-per-PR lock ``refs/magi/land/<pr>/<head>``: taken, and given back.

``claim`` takes it before a landing job is dispatched (GitHub creates a ref once, so of
racing events one dispatches). Its value is a commit of its own, which GitHub makes (and
dates) for this claim alone: the head's tree, the head as parent, a nonce in the message.
So a lock is never mistaken for another one at the same head (a release and a new claim
between a taker's read and its move), and its age is its own commit's date. The value
rides in the dispatch comment's marker (``lock=``), with the dispatched run's id when
GitHub says it (``job=``). A job that crashes or is cancelled never pushes, so its lock
would hold until someone pushed: landing wedged. Three ways out:

- ``workflow_job`` completed with failure / cancelled / timed_out / startup_failure for a
  landing job (its name carries ``[magi land #<pr>]``, see ``workflows/magi.yml``): the
  lock is released if the last dispatch for the PR was for the current head and took the
  lock that is held now (and, when the run's id is known, started that very run): a job
  that pushed and crashed left a newer head, and a job superseded by a takeover must not
  release its successor's lock. The PR is told. Nothing is dispatched from here (a job that
  crashes every time must not loop; the next event on the head dispatches again), except
  after a rebase that stopped at a conflict and handed it to the fixer: that happens once
  per head (``magi.action.publish_job.rebase``), and it is planned at once.
- a lock older than ``STALE`` (longer than every landing job's ``timeout-minutes`` plus
  queueing) is taken over by the next event: a lost ``workflow_job`` delivery cannot wedge
  landing for good. Taking over is a compare-and-swap GitHub does for us: the lock moves
  (``force: false``) to a new commit whose parent is the value judged stale, a fast forward
  from that value only, so of racing takers exactly one wins.
- a dispatch GitHub refuses gives its lock back at once (``landing``).

A lock whose value is the head itself was taken by an older magi: it is dated by its
dispatch comment, as that magi did.
https://docs.github.com/en/webhooks/webhook-events-and-payloads#workflow_job
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from magi.app.context import AppContext, reply_once, repo_config
from magi.app.events import Delivery, Router
from magi.app.progress import JobBody, WorkflowJobEvent, is_magi_run
from magi.app.pulls import is_magi_pull
from magi.core.threads.posting import code
from magi.core.threads.progress import parse_title
from magi.errors import ConfigError
from magi.github.models import PullRequest, Repo
from magi.github.port import GitHubError, GitHubPort
from magi.model.config import Config

__all__ = [
    "ENDED",
    "JOB_TAG",
    "STALE",
    "claim",
    "give_back",
    "handed_on",
    "job_completed",
    "land_ref",
    "release",
    "router",
]

router = Router()  # empty: workflow_job is routed by magi.app.landing (it plans after a release)
LAND = "land"  # the dispatch comment's marker (magi.app.landing): step= sha= lock= job=
JOB_TAG = re.compile(r"\[magi land #(\d+)\]")
ENDED = frozenset({"failure", "cancelled", "timed_out", "startup_failure"})
STALE = timedelta(hours=6)  # land-read 5 + land 240 + land-publish 10 minutes, and a queue


def land_ref(number: int, sha: str) -> str:
    return f"refs/magi/land/{number}/{sha}"


@dataclass(frozen=True)
class Dispatched:
    """The last landing dispatch magi said on a PR: its head, when, its lock, its run."""

    sha: str
    when: datetime | None
    lock: str | None
    job: int | None


async def _dispatched(
    ctx: AppContext, gh: GitHubPort, repo: Repo, number: int
) -> Dispatched | None:
    """The last landing job magi dispatched on PR ``number``."""
    last: Dispatched | None = None
    for c in await gh.list_comments(repo, number):
        if not ctx.own([c]):
            continue
        for fields in ctx.seal.find([c.body], LAND):
            if fields.get("step") in ("fix", "rebase") and fields.get("sha"):
                job = fields.get("job", "")
                last = Dispatched(
                    fields["sha"],
                    c.created_at,
                    fields.get("lock"),
                    int(job) if job.isdigit() else None,
                )
    return last


async def _lock_commit(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    pull: PullRequest,
    tree: str,
    parent: str,
    what: str,
) -> str:
    """A commit for one claim alone: the head's tree, ``parent``, a nonce; GitHub dates it."""
    made = await gh.create_git_commit(
        repo,
        message=f"magi: landing lock for #{pull.number} at {pull.head.sha[:12]}, {what} "
        f"({secrets.token_hex(8)})",
        tree=tree,
        parents=[parent],
    )
    return made.sha


async def claim(ctx: AppContext, gh: GitHubPort, repo: Repo, pull: PullRequest) -> str | None:
    """Take the lock for ``pull``'s head: its value, or None when another holds it.

    A lock older than ``STALE`` is taken over (see the module docstring).
    """
    ref = land_ref(pull.number, pull.head.sha)
    tree = (await gh.get_git_commit(repo, pull.head.sha)).tree  # every lock commit's tree
    mine = await _lock_commit(ctx, gh, repo, pull, tree, pull.head.sha, "taken")
    if await gh.create_ref(repo, ref, mine):
        return mine
    held = await gh.get_ref(repo, ref)
    if held is None:  # released meanwhile: creating is atomic again
        return mine if await gh.create_ref(repo, ref, mine) else None
    since = await _held_since(ctx, gh, repo, pull, held.sha)
    if since is None or ctx.clock() - since < STALE:
        return None
    took = await _lock_commit(ctx, gh, repo, pull, tree, held.sha, "taken over")
    try:
        await gh.update_ref(repo, ref.removeprefix("refs/"), took, force=False)
    except GitHubError as exc:
        if exc.status == 422:  # moved since it was read (another taker) or released
            return None
        raise
    return took


async def give_back(gh: GitHubPort, repo: Repo, pull: PullRequest, lock: str) -> bool:
    """Delete the lock if it is still ``lock`` (a dispatch that GitHub refused)."""
    ref = land_ref(pull.number, pull.head.sha).removeprefix("refs/")
    held = await gh.get_ref(repo, ref)
    return held is not None and held.sha == lock and await gh.delete_ref(repo, ref)


async def _held_since(
    ctx: AppContext, gh: GitHubPort, repo: Repo, pull: PullRequest, held: str
) -> datetime | None:
    """Since when the lock at value ``held`` is held; None when that cannot be told."""
    if held != pull.head.sha:  # a lock commit: GitHub dated it when magi made it
        return (await gh.get_git_commit(repo, held)).committed_at
    last = await _dispatched(ctx, gh, repo, pull.number)  # an older magi's lock
    if last is None or last.sha != pull.head.sha:
        return None  # no dispatch of ours to date it by: leave it to the workflow_job path
    return last.when


async def release(
    ctx: AppContext, gh: GitHubPort, repo: Repo, job: JobBody, workflow: str = "magi.yml"
) -> str:
    """A landing job ended without success: give its head's lock back (see the docstring).

    The job's name is no proof (any workflow, a fork PR's included, names its jobs as it
    likes): its run must be magi's ``workflow`` dispatched (by the App) for landing that PR.
    """
    m = JOB_TAG.search(job.name)
    if m is None:
        return "not-a-landing-job"
    if job.conclusion not in ENDED:
        return f"job-{job.conclusion or job.status}"
    number = int(m[1])
    try:
        run = await gh.get_workflow_run(repo, job.run_id)
    except GitHubError as exc:
        if exc.status == 404:
            return "no-such-run"
        raise
    title = parse_title(run.display_title)
    if (
        not is_magi_run(run, workflow, repo)
        or run.event != "workflow_dispatch"
        or title is None
        or title.command not in ("land", "rebase")
        or title.pr != number
    ):
        return "not-magis-landing-run"
    pull = await gh.get_pull(repo, number)
    if not is_magi_pull(pull, ctx.seal) or pull.state != "open":
        return "not-open"
    last = await _dispatched(ctx, gh, repo, pull.number)
    if last is None or last.sha != pull.head.sha:
        return "head-moved"
    if last.job is not None and last.job != job.run_id:
        return "superseded"  # a later dispatch (a takeover) holds the lock now
    ref = land_ref(pull.number, pull.head.sha).removeprefix("refs/")
    held = await gh.get_ref(repo, ref)
    if held is None:
        return "not-held"
    if last.lock is not None and held.sha != last.lock:
        return "superseded"
    if not await gh.delete_ref(repo, ref):
        return "not-held"
    await reply_once(
        ctx,
        gh,
        repo,
        pull.number,
        f"land-ended-{job.run_id}",
        f"The landing job {code(job.name)} ended {code(job.conclusion or '')} without pushing; "
        "its lock on "
        f"`{pull.head.sha[:12]}` is released, so the next check or review event on this head "
        "dispatches it again.",
        pull.head.sha,
    )
    return "released"


async def job_completed(ctx: AppContext, d: Delivery[WorkflowJobEvent]) -> str:
    """workflow_job completed: release (see ``release``). Routed by ``magi.app.landing``,
    which plans at once after a rebase that handed its conflict to the fixer."""
    gh = await ctx.ports(d.installation, d.repo)
    try:
        config = await repo_config(gh, d.repo, d.payload.repository.default_branch)
    except ConfigError:
        config = Config()  # as progress does: the labeled handler says what is wrong
    return await release(ctx, gh, d.repo, d.payload.workflow_job, config.github.workflow)


async def handed_on(ctx: AppContext, gh: GitHubPort, repo: Repo, number: int) -> bool:
    """Whether the PR's newest landing marker is a rebase's conflict handed to the fixer."""
    own = ctx.own(await gh.list_comments(repo, number))
    last = ctx.seal.latest(own, LAND)
    return last is not None and last.get("step") == "conflict" and last.get("to") == "fixer"
