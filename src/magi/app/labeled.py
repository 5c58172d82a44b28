"""An issue labeled ``[github] label``: check, claim, acknowledge, dispatch the runner.

Exactly one competition per issue, however many deliveries, label events or replicas: the
claim is the ref ``refs/magi/claims/issue-<n>``, and creating a ref that exists fails on
GitHub's side, so the losers of the race stop silently. Everything after the claim either
starts the run or says why not on the issue and releases the claim (so fixing the cause and
labeling again works). An issue whose run already opened a pull request is never competed
again. ``issues.unlabeled`` before the runner started cancels the dispatched workflow run.
"""

from __future__ import annotations

from magi.app.context import AppContext, config_error_reply, repo_config
from magi.app.events import Delivery, IssuesEvent, Router
from magi.config.model import Config
from magi.core import markers
from magi.core.approval import may_write, permission_level
from magi.core.markers import Seal
from magi.core.posting import inert
from magi.core.sanitize import clean_task
from magi.errors import ConfigError
from magi.github.gate import is_magi_pull, issue_of
from magi.github.models import Repo
from magi.github.port import GitHubError, GitHubPort
from magi.github.state import claim_ref as claim_ref  # the App and the workflow share it
from magi.github.state import dispatch_inputs
from magi.state.store import new_run_id

router = Router()
DEFAULT_LABEL = Config().github.label
NOT_STARTED = frozenset({"queued", "waiting", "pending", "requested"})


def graph_shape(config: Config) -> str:
    g = config.graph
    rounds = "round" if g.deliberate_rounds == 1 else "rounds"
    return (
        f"{g.candidates} candidates, {g.judges} judges, {g.deliberate_rounds} deliberation "
        f"{rounds}, review up to {g.review_rounds} rounds"
    )


def roster(config: Config) -> str:
    n = len(config.agents)
    return f"{n} agents" if n else "the agent CLIs found on the runner"


def dispatch_failure(workflow: str, exc: GitHubError) -> str:
    """A failed dispatch in plain words, with the fix."""
    if exc.status == 404:
        why = f"the workflow `.github/workflows/{workflow}` is not on the default branch"
        fix = "add it there (see magi's `workflows/`), or set `[github] workflow`"
    elif exc.status == 403:
        why = "the magi App may not start workflows here (it needs Actions: write)"
        fix = "accept the App's updated permissions in the installation settings"
    elif exc.status == 422:
        why = "GitHub refused the dispatch (Actions may be disabled, or the inputs are wrong)"
        fix = "enable Actions for this repository and check the workflow's inputs"
    else:
        why = f"GitHub answered {exc.status or 'nothing'}: {inert(exc.message)}"
        fix = "label the issue again to retry"
    return f"magi could not start the run: {why}.\n\nFix: {fix}; then remove and re-add the label."


async def existing_pull(gh: GitHubPort, repo: Repo, number: int, seal: Seal) -> str | None:
    """The URL of a PR an earlier run opened for this issue, if any: a PR that is magi's
    (``is_magi_pull``: its head in this repository, its run in magi's sealed marker), never
    a stranger's fork PR from a ``magi/...`` branch whose body says "Closes #n"."""
    for pull in await gh.list_pulls(repo, state="all"):
        if is_magi_pull(pull, seal) and issue_of(pull, seal) == number:
            return pull.html_url or f"#{pull.number}"
    return None


@router.on("issues", "labeled", IssuesEvent)
async def labeled(ctx: AppContext, d: Delivery[IssuesEvent]) -> str:
    p = d.payload
    if p.label is None or p.issue.pull_request is not None:
        return "not-an-issue-label"
    repo, number, branch = d.repo, p.issue.number, p.repository.default_branch
    gh = await ctx.ports(d.installation, repo)
    config: Config | None = None
    problem: ConfigError | None = None
    try:
        config = await repo_config(gh, repo, branch)
    except ConfigError as exc:
        problem = exc
    label = config.github.label if config else DEFAULT_LABEL
    if p.label.name != label:
        return "other-label"
    head = await gh.get_ref(repo, f"heads/{branch}")
    if head is None:
        return "no-default-branch"
    if not await gh.create_ref(repo, claim_ref(number), head.sha):
        return "already-claimed"
    ctx.step(d.id, repo, "claim", "created")
    try:
        refusal = await _refusal(ctx, gh, repo, p, problem)
        if refusal is not None:
            kind, words = refusal
            await gh.create_comment(repo, number, words)
            if kind != "has-pr":  # an issue with a PR stays claimed: never competed again
                await gh.delete_ref(repo, claim_ref(number))
            return kind
        if config is None:  # unreachable: a config problem is a refusal above
            return "invalid-config"
        return await _start(ctx, gh, d, config)
    except GitHubError:
        # GitHub failed past the retries before a run started: release the claim, so that
        # labeling again (or a redelivery) can start it, and let the edge log the failure.
        if not await _dispatched(ctx, gh, repo, number):
            await gh.delete_ref(repo, claim_ref(number))
        raise


async def _dispatched(ctx: AppContext, gh: GitHubPort, repo: Repo, number: int) -> bool:
    """Whether a run for this issue already reached the runner (its marker names one)."""
    try:
        run = ctx.seal.latest(
            ctx.own(await gh.list_comments(repo, number)), markers.RUN, issue=str(number)
        )
    except GitHubError:
        return False
    return run is not None and "workflow_run" in run


async def _refusal(
    ctx: AppContext, gh: GitHubPort, repo: Repo, p: IssuesEvent, problem: ConfigError | None
) -> tuple[str, str] | None:
    level = (await gh.permission(repo, p.sender.login)).permission
    if not may_write(level):
        return "not-a-writer", (
            f"@{p.sender.login} has `{permission_level(level)}` permission here: only people "
            "with write, maintain or admin permission may start a magi run by labeling."
        )
    if problem is not None:
        return "invalid-config", config_error_reply(problem)
    task, _ = clean_task(f"{p.issue.title}\n\n{p.issue.body or ''}")
    if not task.strip():
        return "empty-task", "magi did not start: the issue's title and body are empty."
    url = await existing_pull(gh, repo, p.issue.number, ctx.seal)
    if url is not None:
        return "has-pr", (
            f"magi already opened {url} for this issue; it is not competed again. "
            "Review it, or comment `/magi retry` there if its run stalled."
        )
    return None


async def _start(ctx: AppContext, gh: GitHubPort, d: Delivery[IssuesEvent], config: Config) -> str:
    p = d.payload
    repo, number, branch = d.repo, p.issue.number, p.repository.default_branch
    run_id = new_run_id(ctx.clock(), ctx.rand)
    workflow = config.github.workflow
    watch = f"{p.repository.html_url}/actions/workflows/{workflow}"
    await gh.react_to_issue(repo, number, "rocket")
    ack = await gh.create_comment(
        repo,
        number,
        f"magi run `{run_id}` is starting: {roster(config)}, {graph_shape(config)}.\n\n"
        f"Watch it in [Actions]({watch}).\n\n"
        + ctx.seal.marker(markers.RUN, run=run_id, issue=number),
    )
    inputs = {"run_id": run_id, "issue": str(number), "command": "compete"}
    try:
        dispatched = await gh.dispatch_workflow(
            repo, workflow, branch, dispatch_inputs(config, **inputs)
        )
    except GitHubError as exc:
        # The acknowledgement becomes the failure (and loses its run marker): one comment
        # that tells the truth, never a "starting" that nothing follows.
        await gh.update_comment(repo, ack.id, dispatch_failure(workflow, exc))
        await gh.delete_ref(repo, claim_ref(number))
        return "dispatch-failed"
    ctx.step(d.id, repo, "dispatch", "sent")
    if dispatched.workflow_run_id is not None:
        body = (
            f"magi run `{run_id}` is starting: {roster(config)}, {graph_shape(config)}.\n\n"
            f"Watch it in [the workflow run]({dispatched.html_url or watch}).\n\n"
            + ctx.seal.marker(
                markers.RUN, run=run_id, issue=number, workflow_run=dispatched.workflow_run_id
            )
        )
        try:
            await gh.update_comment(repo, ack.id, body)
        except GitHubError:  # the run is started: a missing link must not release the claim
            ctx.step(d.id, repo, "link", "failed")
    return "dispatched"


@router.on("issues", "unlabeled", IssuesEvent)
async def unlabeled(ctx: AppContext, d: Delivery[IssuesEvent]) -> str:
    p = d.payload
    if p.label is None:
        return "no-label"
    repo, number = d.repo, p.issue.number
    gh = await ctx.ports(d.installation, repo)
    try:
        config = await repo_config(gh, repo, p.repository.default_branch)
    except ConfigError:
        config = Config()
    if p.label.name != config.github.label:
        return "other-label"
    if not may_write((await gh.permission(repo, p.sender.login)).permission):
        return "not-a-writer"
    run = ctx.seal.latest(
        ctx.own(await gh.list_comments(repo, number)), markers.RUN, issue=str(number)
    )
    if run is None or not run.get("workflow_run", "").isdigit():
        return "no-run"
    wid = int(run["workflow_run"])
    runs = {r.id: r for r in await gh.list_workflow_runs(repo, config.github.workflow)}
    current = runs.get(wid)
    if current is None or current.status not in NOT_STARTED:
        return "already-started"
    await gh.cancel_workflow_run(repo, wid)
    await gh.delete_ref(repo, claim_ref(number))
    await gh.create_comment(
        repo,
        number,
        f"The label was removed before the runner started: magi run `{run['run']}` is "
        "cancelled. Nothing was built. Label the issue again to start a new run.",
    )
    return "cancelled"
