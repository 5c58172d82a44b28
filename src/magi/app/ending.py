"""How a run's pull request ended, written into its run record (``refs/magi/runs/<id>``).

When a magi PR merges (by magi or by hand) or closes, landing folds the run; this module
records the ending in the record itself: status ``merged`` or ``closed``, a ``merge`` record
of mode ``pr`` (the PR, its head, the squash commit, the base) and an event. The squash
commit is read from GraphQL (``GitHubPort.merge_commit``): the REST version magi speaks,
2026-03-10, removed ``merge_commit_sha`` from pull requests and their webhooks. It goes through
``magi.github.records.update``: one commit on the record's own, ``force: false``, redone on
a lost race, so a publish landing at the same moment is never overwritten. Writing is
idempotent (a redelivered ``closed`` finds the ending recorded and writes nothing) and never
fails the fold: a record that cannot be read or written is logged with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

from magi.app.context import AppContext
from magi.errors import StateError
from magi.github import records
from magi.github.models import PullRequest, Repo
from magi.github.port import GitHubError, GitHubPort
from magi.model.review import MergeRecord
from magi.model.run import Event, Record, Run, RunStatus

NODE = "landing"


def change_for(
    pull: PullRequest, ctx: AppContext, commit: str | None = None
) -> Callable[[Record], Record | None]:
    """The record change that says how ``pull`` ended (None: nothing to change);
    ``commit``: the merge's commit on the base, when known."""
    merged = pull.merged
    status = RunStatus.MERGED if merged else RunStatus.CLOSED
    commit = commit if merged else None

    def change(record: Record) -> Record | None:
        if not isinstance(record, Run):
            return None  # a council's record has no pull request to land
        m = record.merge
        if not _names(record, pull.number):
            return None  # the record is another PR's: a PR whose branch borrows its run id
        if record.status is status and m is not None and m.mode == "pr" and m.pr == pull.number:
            return None  # said already (a redelivery, or the merge and its closed event)
        at = ctx.clock()
        if merged:
            reason = f"pull request #{pull.number} merged onto {pull.base.ref}" + (
                f" as {commit[:12]}" if commit else ""
            )
        else:
            reason = f"pull request #{pull.number} closed unmerged"
        record.merge = MergeRecord(
            mode="pr",
            result="merged" if merged else "closed",
            commit=commit,
            base=pull.base.ref,
            pr=pull.number,
            head=pull.head.sha,
            at=at,
        )
        record.status = status
        record.reason = reason
        record.events.append(Event(at=at, node=NODE, message=reason))
        return record

    return change


def _names(record: Run, number: int) -> bool:
    """True unless the record names a pull request of its own that is not ``number``."""
    held = {record.landing.pr} if record.landing is not None else set()
    if record.merge is not None and record.merge.mode == "pr" and record.merge.pr is not None:
        held.add(record.merge.pr)
    return not held or held == {number}


async def record_ending(
    ctx: AppContext, gh: GitHubPort, repo: Repo, run_id: str, pull: PullRequest, delivery: str
) -> str:
    """Write the ending into ``run_id``'s record; the outcome, for the delivery's log line."""
    ending = "merged" if pull.merged else "closed"
    commit = await _merge_commit(ctx, gh, repo, pull, delivery)
    try:
        sha = await records.update(
            gh,
            repo,
            run_id,
            change_for(pull, ctx, commit),
            message=f"magi: run {run_id} {ending} (pull request #{pull.number})",
            pr=pull.number,
        )
    except (StateError, GitHubError) as exc:
        why = exc.message if isinstance(exc, StateError) else f"{exc.status}: {exc.message}"
        ctx.log.warning(
            f"run record not updated: {why}",
            extra={
                "delivery": delivery,
                "repo": repo.full_name,
                "step": "record",
                "outcome": "not-written",
            },
        )
        return "record-not-written"
    ctx.step(delivery, repo, "record", f"{ending}-recorded" if sha else "already-recorded")
    return "record-written" if sha else "record-unchanged"


async def _merge_commit(
    ctx: AppContext, gh: GitHubPort, repo: Repo, pull: PullRequest, delivery: str
) -> str | None:
    """The merged PR's commit on its base; None (said in the log) when it cannot be read:
    the ending is written all the same."""
    if not pull.merged:
        return None
    try:
        return await gh.merge_commit(repo, pull.number)
    except GitHubError as exc:
        ctx.log.warning(
            f"merge commit not read: {exc.status}: {exc.message}",
            extra={"delivery": delivery, "repo": repo.full_name, "step": "record"},
        )
        return None
