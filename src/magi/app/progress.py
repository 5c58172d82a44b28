"""``workflow_job``: the issue's tracking comment follows the workflow's jobs as they go.

A job delivery names its workflow run but not the issue, so the App asks GitHub for the run
(``GET .../actions/runs/{run_id}``): a run of magi's workflow file whose display title is
magi's ``run-name`` (``magi.core.threads.progress``) says which issue it is for. The App then lists
the run's jobs (``GET .../actions/runs/{run_id}/jobs``) and renders them all, so deliveries
that arrive out of order or twice still leave the right picture, and splices that jobs part
into the tracking comment (found by magi's ``tracking`` marker among the App's own
comments; ``magi.report.tracking``), leaving what each publish wrote there as it is. The
first job of a run creates the comment when no publish has yet; of several deliveries
racing to create it, one wins (``said_ref``, an atomic ref create).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from magi.app.context import AppContext, repo_config, said_ref
from magi.app.events import Base, Delivery, Router
from magi.core.threads import markers
from magi.core.threads.posting import Policy, gate
from magi.core.threads.progress import WORKFLOW_NAME, RunTitle, parse_title
from magi.errors import ConfigError
from magi.github.models import Comment, Repo, WorkflowJob, WorkflowRun
from magi.github.port import GitHubPort
from magi.model.config import Config
from magi.report.tracking import JobLine, Links, jobs_block, tracking, with_jobs

__all__ = ["WorkflowJobEvent", "is_magi_run", "magi_job", "router", "track", "workflow_job"]

router = Router()
TRACKING = markers.TRACKING


class JobBody(BaseModel):
    """The fields of ``workflow_job`` magi reads (GitHub sends many more)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: int
    run_id: int
    name: str = ""
    status: str = ""
    conclusion: str | None = None
    html_url: str = ""
    workflow_name: str | None = None  # absent from older payloads
    labels: list[str] = Field(default_factory=list)


class WorkflowJobEvent(Base):
    workflow_job: JobBody


def magi_job(p: WorkflowJobEvent) -> bool:
    """A cheap look: a job of a workflow named otherwise is not magi's (no API call)."""
    name = p.workflow_job.workflow_name
    return name is None or name == WORKFLOW_NAME


# What starts magi's workflow (workflows/magi.yml ``on:``): the App's dispatch, and without
# the App the label, a comment or another workflow's end. All of these run the default
# branch's workflow file; pull_request(_target) and push would run a fork's or a branch's
# copy at the same path, whose ``run-name`` anyone writes.
MAGI_EVENTS = frozenset({"workflow_dispatch", "issues", "issue_comment", "workflow_run"})


def is_magi_run(run: WorkflowRun, workflow: str, repo: Repo) -> bool:
    """Whether ``run`` is of magi's workflow file (GitHub's ``path`` may end ``@ref``),
    started by an event that runs the default branch's copy of it (``MAGI_EVENTS``), on a
    commit of this repository (its head repository: a fork PR's run is the fork's). Its
    title alone says nothing: a fork writes its own ``run-name``."""
    path = run.path.split("@", 1)[0]
    ours = path == f".github/workflows/{workflow}" or path.endswith(f"/{workflow}")
    head = run.head_repository.full_name if run.head_repository is not None else ""
    return ours and run.event in MAGI_EVENTS and head.lower() == repo.full_name.lower()


@router.on("workflow_job", None, WorkflowJobEvent, magi_job)
async def workflow_job(ctx: AppContext, d: Delivery[WorkflowJobEvent]) -> str:
    p = d.payload
    repo = d.repo
    gh = await ctx.ports(d.installation, repo)
    try:
        config = await repo_config(gh, repo, p.repository.default_branch)
    except ConfigError:
        config = Config()  # the labeled handler says what is wrong; progress still shows
    run = await gh.get_workflow_run(repo, p.workflow_job.run_id)
    if not is_magi_run(run, config.github.workflow, repo):
        return "other-workflow"
    title = parse_title(run.display_title)
    if title is None:
        return "not-magi-run-name"
    # Issue 11 (landing): a landing job (title.command "land" or "rebase", title.pr) that
    # ended without releasing its refs/magi/land/<pr>/<head> marker is released here, from
    # p.workflow_job (status "completed", conclusion failure/cancelled), before returning.
    if title.command != "compete" or title.issue is None:
        return f"no-tracking-for-{title.command}"
    return await track(ctx, gh, repo, p.repository.html_url, run, title)


def job_line(j: WorkflowJob) -> JobLine:
    return JobLine(j.name, j.status, j.conclusion, j.html_url, j.started_at, j.completed_at)


async def track(
    ctx: AppContext, gh: GitHubPort, repo: Repo, repo_url: str, run: WorkflowRun, t: RunTitle
) -> str:
    """Render the run's jobs into issue ``t.issue``'s tracking comment; edit or create it."""
    assert t.issue is not None  # noqa: S101 - the caller checked
    jobs = await gh.list_run_jobs(repo, run.id)
    block = jobs_block(run.id, run.html_url, [job_line(j) for j in jobs], ctx.seal)
    mine = _tracking_comment(ctx, await gh.list_comments(repo, t.issue), t.issue)
    if mine is not None:
        body = with_jobs(mine.body, block)
        if body == mine.body:
            return "unchanged"
        await gh.update_comment(repo, mine.id, body)
        return "edited"
    if not await gh.create_ref(repo, said_ref(t.issue, "tracking"), run.head_sha or "0" * 40):
        return "created-elsewhere"  # another delivery creates it; later jobs edit it
    note = f"magi run `{t.run}` is in the workflow." if t.run else "The workflow is running."
    # The gate's default policy: job names come from the workflow file, never from agents.
    links = Links(repo_url=repo_url, job_url=run.html_url or None)
    text = gate(tracking(None, links, note), Policy())
    attrs: dict[str, str | int] = {"issue": t.issue}
    if t.run:
        attrs["run"] = t.run
    body = with_jobs(text.text.rstrip("\n") + "\n\n" + ctx.seal.marker(TRACKING, **attrs), block)
    await gh.create_comment(repo, t.issue, body)
    return "created"


def _tracking_comment(ctx: AppContext, thread: list[Comment], issue: int) -> Comment | None:
    for c in thread:
        if not ctx.own([c]):
            continue
        if ctx.seal.find([c.body], TRACKING, issue=str(issue)):
            return c
    return None
