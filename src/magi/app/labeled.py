"""An issue labeled ``[github] label``: check, claim, acknowledge, dispatch the runner.

Exactly one competition per issue, however many deliveries, label events or replicas: the
claim is the ref ``refs/magi/claims/issue-<n>``, and creating a ref that exists fails on
GitHub's side, so the losers of the race stop silently. Everything after the claim either
starts the run or says why not on the issue and releases the claim (so fixing the cause and
labeling again works). An issue whose run already opened a pull request is never competed
again. ``issues.unlabeled`` before the runner started cancels the dispatched workflow run.

A delivery the receiver's start-up asked GitHub to send again (``Delivery.replayed``) is
old: it starts a run only if the label is on the issue now (one more read), and never when
a run acknowledgement of the App's already names this delivery (the sealed ``RUN`` marker
carries the delivery's guid), so a replayed label whose run failed is not competed again.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta

from magi.app.context import AppContext, config_error_reply, dispatch_competition, repo_config
from magi.app.events import Delivery, IssuesEvent, Router
from magi.app.progress import is_magi_run
from magi.config.workflow import refused_inputs
from magi.core.person.public import public_note
from magi.core.text.sanitize import clean_task
from magi.core.threads import markers
from magi.core.threads.approval import may_write, permission_level
from magi.core.threads.markers import Seal
from magi.core.threads.posting import inert
from magi.core.threads.progress import parse_title
from magi.errors import ConfigError
from magi.github.gate import is_magi_pull, issue_of
from magi.github.models import Repo
from magi.github.pin import pin_commit
from magi.github.port import GitHubError, GitHubPort
from magi.github.state import claim_ref as claim_ref  # the App and the workflow share it
from magi.github.state import dispatch_inputs
from magi.model.config import Config
from magi.state.store import new_run_id

router = Router()
DEFAULT_LABEL = Config().github.label
NOT_STARTED = frozenset({"queued", "waiting", "pending", "requested"})
STARTED = "already-started"  # a run acknowledgement already names this delivery
_GUID = re.compile(r"[A-Za-z0-9-]{1,64}")  # X-GitHub-Delivery, as a marker value may be


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
    elif exc.status == 422 and (refused := refused_inputs(exc.message)):
        names = ", ".join(f"`{name}`" for name in refused)
        why = (
            f"`.github/workflows/{workflow}` is older than this magi: GitHub refused the "
            f"inputs it does not declare ({names})"
        )
        fix = "run `magi init --github --force` in the repository and commit the workflow"
    elif exc.status == 422:
        why = f"GitHub refused the dispatch (Actions may be disabled): {inert(exc.message)}"
        fix = "enable Actions for this repository (Settings, Actions, General)"
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
    if d.replayed and not await _still_labeled(gh, repo, number, label):
        return "label-gone"  # removed since: its unlabel came (or comes) first
    head = await gh.get_ref(repo, f"heads/{branch}")
    if head is None:
        return "no-default-branch"
    # GitHub's clock, as the claim commit's date is: the label just changed the issue.
    now = p.issue.updated_at or ctx.clock()
    text = (p.issue.title, p.issue.body or "")  # what the writer's label accepted: pinned
    took, over = await _claim(
        ctx, gh, repo, number, head.sha, config or Config(), now, text, delivery=d.id
    )
    if took is None:
        return over or "already-claimed"
    ctx.step(d.id, repo, "claim", "taken-over" if over else "created")
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
        return await _start(ctx, gh, d, config, over)
    except GitHubError:
        # GitHub failed past the retries before a run started: release the claim, so that
        # labeling again (or a redelivery) can start it, and let the edge log the failure.
        if not await _dispatched(ctx, gh, repo, number):
            await gh.delete_ref(repo, claim_ref(number))
        raise


async def _still_labeled(gh: GitHubPort, repo: Repo, number: int, label: str) -> bool:
    """Whether ``label`` is on the issue now (a replayed payload says what it was then)."""
    issue = await gh.get_issue(repo, number)
    return any(lb.name == label for lb in issue.labels)


def _by_delivery(delivery: str) -> dict[str, str]:
    """The RUN marker's field naming the delivery that started the run, when it can."""
    return {"delivery": delivery} if _GUID.fullmatch(delivery) else {}


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


CLAIM_STALE = timedelta(minutes=10)  # a claim with no run after this was lost between steps
_CLAIM = "magi: claim"


async def _claim_commit(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    number: int,
    text: tuple[str, str],
    parent: str,
    what: str,
) -> str:
    """A commit for one claim alone (``parent``, a nonce): GitHub dates it, which is how a
    later label tells a claim lost before its run started from a live one. Its tree is the
    issue's text as the label accepted it, its digest sealed (``magi.core.threads.pin``)."""
    return await pin_commit(
        gh, repo, issue=number, title=text[0], body=text[1], parent=parent, seal=ctx.seal,
        message=f"{_CLAIM} issue #{number}, {what} ({secrets.token_hex(8)})",
    )  # fmt: skip


async def _claim(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    number: int,
    head: str,
    config: Config,
    now: datetime,
    text: tuple[str, str],
    delivery: str = "",
) -> tuple[str | None, str]:
    """(the claim's value, why an older claim was taken over or ""); None: another holds
    it (with ``STARTED`` when this delivery already started a run).

    Creating the ref is atomic, so of racing deliveries one wins. A claim that exists is
    taken over only when it is dead (``_dead``), by a fast forward of the ref to a child of
    the value read (``force: false``): of racing takers exactly one wins, as with the
    landing lock."""
    ref = claim_ref(number)
    mine = await _claim_commit(ctx, gh, repo, number, text, head, "taken")
    if await gh.create_ref(repo, ref, mine):
        return mine, ""
    held = await gh.get_ref(repo, ref)
    if held is None:  # released meanwhile: creating is atomic again
        return (mine, "") if await gh.create_ref(repo, ref, mine) else (None, "")
    why = await _dead(ctx, gh, repo, number, held.sha, config, now, delivery)
    if not why or why == STARTED:
        return None, why
    took = await _claim_commit(ctx, gh, repo, number, text, held.sha, "taken over")
    try:
        await gh.update_ref(repo, ref.removeprefix("refs/"), took, force=False)
    except GitHubError as exc:
        if exc.status == 422:  # another taker moved it first
            return None, ""
        raise
    return took, why


async def _dead(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    number: int,
    held: str,
    config: Config,
    now: datetime,
    delivery: str = "",
) -> str:
    """Why the claim at ``held`` holds no run any more ("" while it may; ``STARTED`` when a
    run of the App's names ``delivery``, which is then never taken over): its run's workflow
    run ended without a pull request, or, ``CLAIM_STALE`` after a claim of magi's own, no
    run of this issue is queued or running (the receiver restarted between the claim and
    the acknowledgement, or the dispatch was lost). An issue with a PR stays claimed."""
    if await existing_pull(gh, repo, number, ctx.seal) is not None:
        return ""
    thread = ctx.own(await gh.list_comments(repo, number))
    if (by := _by_delivery(delivery)) and ctx.seal.latest(thread, markers.RUN, **by):
        return STARTED  # a replay of the delivery that started a run: never a second one
    run = ctx.seal.latest(thread, markers.RUN, issue=str(number))
    runs = await gh.list_workflow_runs(repo, config.github.workflow)
    workflow = config.github.workflow
    # A run counts only when its event and head repository say it is magi's (a fork PR's
    # own run of the workflow, titled like magi's, would keep a dead claim alive).
    mine = [
        r
        for r in runs
        if is_magi_run(r, workflow, repo)
        and (t := parse_title(r.display_title))
        and t.issue == number
    ]
    if any(r.status != "completed" for r in mine):
        return ""
    wid = (run or {}).get("workflow_run", "")
    ended = next((r for r in runs if wid.isdigit() and r.id == int(wid)), None)
    if ended is not None and ended.status == "completed":
        return (
            f"its last run `{run['run'] if run else '?'}` ended "
            f"({ended.conclusion or 'completed'}) without a pull request"
        )
    commit = await gh.get_git_commit(repo, held)
    if not commit.message.startswith(_CLAIM) or commit.committed_at is None:
        return ""  # the workflow's claim, or an older magi's: its age cannot be told
    age = now - commit.committed_at
    if age < CLAIM_STALE:
        return ""
    who = "the receive job failed" if ctx.serverless else "the receiver restarted"
    return (
        f"it was claimed {int(age.total_seconds() // 60)} minutes ago and no run of it is "
        f"queued or running ({who} before it started one, or the dispatch was lost)"
    )


async def _start(
    ctx: AppContext, gh: GitHubPort, d: Delivery[IssuesEvent], config: Config, over: str = ""
) -> str:
    p = d.payload
    repo, number, branch = d.repo, p.issue.number, p.repository.default_branch
    run_id = new_run_id(ctx.clock(), ctx.rand)
    workflow = config.github.workflow
    watch = f"{p.repository.html_url}/actions/workflows/{workflow}"
    await gh.react_to_issue(repo, number, "rocket")
    took = f"An earlier claim on this issue was taken over: {over}.\n\n" if over else ""
    took += public_note(p.repository.private)
    ack = await gh.create_comment(
        repo,
        number,
        f"{took}magi run `{run_id}` is starting: {roster(config)}, {graph_shape(config)}.\n\n"
        f"Watch it in [Actions]({watch}).\n\n"
        + ctx.seal.marker(markers.RUN, run=run_id, issue=number, **_by_delivery(d.id)),
    )
    inputs = {"run_id": run_id, "issue": str(number), "command": "compete"}
    inputs.update(ctx.park_input(repo, run_id))
    try:
        dispatched, parks = await dispatch_competition(
            gh, repo, workflow, branch, dispatch_inputs(config, **inputs)
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
            f"{took}magi run `{run_id}` is starting: {roster(config)}, {graph_shape(config)}.\n\n"
            f"Watch it in [the workflow run]({dispatched.html_url or watch}).\n\n"
            + ctx.seal.marker(
                markers.RUN,
                run=run_id,
                issue=number,
                workflow_run=dispatched.workflow_run_id,
                **_by_delivery(d.id),
                # the run asks the App whether to park: `/magi stop` may park it
                **({"park": 1} if parks else {}),
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
    if not await gh.cancel_workflow_run(repo, wid):
        return "already-finished"  # it ended between the list and the cancel (409)
    await gh.delete_ref(repo, claim_ref(number))
    await gh.create_comment(
        repo,
        number,
        f"The label was removed before the runner started: magi run `{run['run']}` is "
        "cancelled. Nothing was built. Label the issue again to start a new run.",
    )
    return "cancelled"
