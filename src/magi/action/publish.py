"""``magi action publish``: turn compete's artifact into GitHub state. No agent runs here.

In order: check the artifact and its bundle (``magi.action.bundle``); read what the last
publish of this run did (``refs/magi/runs/<id>``); push each viable candidate branch with a
lease on what magi last pushed; file follow-ups for unadopted minor findings; open or update
the PR from the winner's branch (a draft until review and gate are green) and its three
comments; the ``magi`` check run on its head; the ending's label and the attempt count on
the issue; the tracking comment, edited in place; the record ref. Every text passes
``magi.core.posting.gate`` first, and magi's marker is added after it. Each write is made
only when what GitHub holds differs, so publishing twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from magi.action.artifact import Artifact, policy_for
from magi.action.bundle import INCOMING, check_bundle
from magi.action.env import ActionEnv
from magi.action.errors import TamperedArtifact
from magi.action.port import PublishPort
from magi.action.record_ref import Published, build_commit, read_published, record_ref
from magi.action.remote import Remote
from magi.action.render import Links, comments, ending, gate_of, pr_body, review_of, tracking
from magi.core import markers
from magi.core.posting import Policy, gate
from magi.git import Git
from magi.github.models import Comment, Issue, PullRequest
from magi.report import revealed
from magi.state.model import Run, RunStatus

__all__ = ["ENDING_LABELS", "FOLLOW_UP", "PublishResult", "publish", "publish_missing"]

FOLLOW_UP = "magi:follow-up"
FOLLOW_UPS_MAX = 5
CHECK_NAME = "magi"
TRACKING = "tracking"
ENDING_LABELS = {
    RunStatus.VERIFIED_NOOP: "magi:noop",
    RunStatus.STALLED: "magi:stalled",
    RunStatus.HELD: "magi:held",
}
# A quota stall or a budget hold re-queues; only a failure spends an attempt.
SPENDS = frozenset({RunStatus.FAILED})


@dataclass
class PublishResult:
    pr: int | None = None
    pushed: dict[str, str] = field(default_factory=dict)
    follow_ups: list[int] = field(default_factory=list)
    attempts_spent: int = 0
    held: bool = False


@dataclass
class _Job:
    port: PublishPort
    env: ActionEnv
    git: Git
    remote: Remote
    issue: int
    attempts: int
    policy: Policy

    def post(self, text: str, kind: str, **attrs: str | int) -> str:
        return gate(text, self.policy).text.rstrip("\n") + "\n\n" + markers.marker(kind, **attrs)

    def ours(self, c: Comment) -> bool:
        if c.user is None:
            return False
        if self.env.app_login:
            return c.user.login == self.env.app_login
        return c.user.type == "Bot"

    async def upsert_comment(self, number: int, body: str, kind: str, **match: str) -> Comment:
        """The comment carrying ``kind`` marker with ``match`` edited in place, or created."""
        repo = self.env.repo
        for c in await self.port.list_comments(repo, number):
            if self.ours(c) and markers.find([c.body], kind, **match):
                if c.body == body:
                    return c
                return await self.port.update_comment(repo, c.id, body)
        return await self.port.create_comment(repo, number, body)


def _green(run: Run) -> bool:
    """Review and gate both green: the PR may leave draft."""
    review, gate_ = review_of(run), gate_of(run)
    review_ok = review is not None and review.outcome in ("clean", "skipped")
    gate_ok = gate_ is not None and gate_.ran and gate_.passed is not False
    return run.status is RunStatus.READY and review_ok and gate_ok


def _unadopted_minor(run: Run) -> list[tuple[str, str, str]]:
    """(id, title, detail) of minor findings no fixer adopted, in the order found."""
    review = review_of(run)
    if review is None:
        return []
    adopted = {i for r in review.rounds if r.fix for i in r.fix.adopted}
    out: list[tuple[str, str, str]] = []
    for rnd in review.rounds:
        for f in rnd.findings:
            if f.severity == "minor" and f.id not in adopted:
                where = f"`{f.file}:{f.line}`\n\n" if f.file and f.line else ""
                out.append((f.id, f.title, where + f.detail))
    return out


async def _follow_ups(job: _Job, run: Run) -> list[int]:
    repo = job.env.repo
    filed: dict[str, int] = {}
    for issue in await job.port.list_issues(repo, labels=[FOLLOW_UP]):
        for fields in markers.find([issue.body or ""], "follow-up", run=run.id):
            filed[fields.get("finding", "")] = issue.number
    numbers = list(filed.values())
    for fid, title, detail in _unadopted_minor(run):
        if fid in filed or len(numbers) >= FOLLOW_UPS_MAX:
            continue
        body = job.post(
            f"A minor review finding magi's fixer did not adopt, from run `{run.id}` "
            f"(issue #{job.issue}).\n\n{detail}",
            "follow-up",
            run=run.id,
            finding=fid,
        )
        title_text = gate(f"Follow-up: {title}", job.policy).text.splitlines()[0][:200]
        made = await job.port.create_issue(repo, title=title_text, body=body, labels=[FOLLOW_UP])
        numbers.append(made.number)
    return sorted(numbers)


async def _pull(job: _Job, run: Run, branch: str, body: str, title: str) -> PullRequest:
    repo = job.env.repo
    draft = not _green(run)
    found = [
        p
        for p in await job.port.list_pulls(repo, state="all", head=f"{repo.owner}:{branch}")
        if p.head.ref == branch
    ]
    if not found:
        return await job.port.create_pull(
            repo, title=title, head=branch, base=run.base, body=body, draft=draft
        )
    pr = found[0]
    if pr.body != body or pr.title != title:
        pr = await job.port.update_pull(repo, pr.number, title=title, body=body)
    if pr.draft != draft and pr.state == "open":
        pr = await job.port.set_draft(repo, pr.number, draft)
    return pr


async def _check_run(job: _Job, run: Run, head: str) -> None:
    repo = job.env.repo
    status, conclusion = (
        "completed",
        {
            RunStatus.READY: "success",
            RunStatus.STALLED: "neutral",  # a provider's rate limit must not paint the PR red
            RunStatus.HELD: "neutral",
            RunStatus.VERIFIED_NOOP: "neutral",
        }.get(run.status, "failure"),
    )
    summary = gate(ending(run), job.policy).text
    for c in await job.port.list_check_runs(repo, head):
        if c.name == CHECK_NAME:
            if (c.status, c.conclusion) != (status, conclusion):
                await job.port.update_check_run(
                    repo, c.id, status=status, conclusion=conclusion, summary=summary
                )
            return
    await job.port.create_check_run(
        repo,
        name=CHECK_NAME,
        head_sha=head,
        status=status,
        conclusion=conclusion,
        summary=summary,
    )


async def _labels(job: _Job, issue: Issue, wanted: set[str]) -> None:
    have = {lb.name for lb in issue.labels}
    ours = set(ENDING_LABELS.values())
    add = sorted(wanted - have)
    if add:
        await job.port.add_labels(job.env.repo, job.issue, add)
    for name in sorted((have & ours) - wanted):
        await job.port.remove_label(job.env.repo, job.issue, name)


def _spent(job: _Job, comments_: Sequence[Comment]) -> tuple[int, str]:
    state = markers.latest(
        [c.body for c in comments_ if job.ours(c)], TRACKING, issue=str(job.issue)
    )
    if state is None:
        return 0, ""
    return int(state.get("spent", "0") or 0), state.get("counted", "")


async def publish(
    *,
    port: PublishPort,
    env: ActionEnv,
    git: Git,
    remote: Remote,
    artifact: Artifact,
    issue: int,
    attempts: int = 2,
) -> PublishResult:
    """Publish one run; see the module docstring for the order and why."""
    run = artifact.run
    if artifact.manifest.issue != issue or run.task.source != f"issue:{issue}":
        raise TamperedArtifact(f"the artifact is not for issue #{issue}")
    job = _Job(port, env, git, remote, issue, attempts, policy_for(run))
    result = PublishResult()
    heads: dict[str, str] = {}
    if artifact.bundle is not None:
        heads = check_bundle(git, run, artifact.bundle, artifact.manifest.heads)
    elif artifact.manifest.heads:
        raise TamperedArtifact("the manifest names branches but the artifact has no bundle")

    ref = record_ref(run.id)
    prev = remote.fetch(ref, f"{INCOMING}/{run.id}/record")
    published = read_published(git, prev)

    # Branches: only once authors may be known (a commit can name its author), each leased.
    if revealed(run):
        wanted = {f"refs/heads/magi/{run.id}/{label}": label for label in heads}
        on_remote = remote.ls_remote(*wanted) if wanted else {}
        for target, label in wanted.items():
            branch = target.removeprefix("refs/heads/")
            if on_remote.get(target) != heads[label]:
                remote.push(
                    f"{INCOMING}/{run.id}/{label}",
                    target,
                    expect=published.branches.get(branch),
                )
            result.pushed[branch] = heads[label]

    links = Links(
        repo_url=env.repo_url,
        job_url=env.job_url,
        branches=sorted(result.pushed),
        record_ref=ref,
    )
    winner = run.tally.winner if run.tally else None
    winner_branch = f"magi/{run.id}/{winner}" if winner else None
    if winner_branch in result.pushed:
        assert winner_branch is not None  # noqa: S101 - narrowed by the membership test
        result.follow_ups = await _follow_ups(job, run)
        info = await port.get_issue(env.repo, issue)
        title = gate(info.title or run.task.cleaned.splitlines()[0], job.policy).text
        body_text = pr_body(run, issue, links)
        if result.follow_ups:
            body_text += "\nFollow-ups: " + ", ".join(f"#{n}" for n in result.follow_ups) + "\n"
        body = job.post(body_text, markers.PR, issue=issue, run=run.id)
        pr = await _pull(job, run, winner_branch, body, title.splitlines()[0][:250])
        result.pr = pr.number
        head = result.pushed[winner_branch]
        links = Links(**{**links.__dict__, "pr_url": pr.html_url or None, "head": head})
        texts = comments(run, links)
        for part, text in (
            ("tally", texts.tally),
            ("transcripts", texts.transcripts),
            ("review", texts.review),
        ):
            await job.upsert_comment(
                pr.number, job.post(text, "comment", part=part, run=run.id), "comment",
                part=part, run=run.id,
            )  # fmt: skip
        await _check_run(job, run, head)

    # The issue: attempts, the ending's label, the tracking comment.
    thread = await port.list_comments(env.repo, issue)
    spent, counted = _spent(job, thread)
    if run.status in SPENDS and counted != run.id and not published.counted:
        spent += 1
        counted = run.id
    result.attempts_spent = spent
    result.held = spent >= attempts and result.pr is None
    wanted_labels = {ENDING_LABELS[run.status]} if run.status in ENDING_LABELS else set()
    note = ""
    if result.held:
        wanted_labels.add("magi:held")
        note = (
            f"Held: {spent} of {attempts} attempts spent (`[github] attempts`). "
            f"Last: {ending(run)} Fix the cause, then remove `magi:held` and `/magi retry`."
        )
    await _labels(job, await port.get_issue(env.repo, issue), wanted_labels)
    pr_url = f"{env.repo_url}/pull/{result.pr}" if result.pr is not None else None
    track = tracking(run, Links(**{**links.__dict__, "pr_url": pr_url}), note)
    attrs: dict[str, str | int] = {"issue": issue, "run": run.id, "spent": spent}
    if counted:
        attrs["counted"] = counted
    if result.pr is not None:
        attrs["pr"] = result.pr
    await job.upsert_comment(issue, job.post(track, TRACKING, **attrs), TRACKING, issue=str(issue))

    # The record ref, last: it says what this publish did.
    done = Published(branches=result.pushed, pr=result.pr, issue=issue, counted=counted == run.id)
    run_json = gate(run.model_dump_json(by_alias=True, indent=2), _unlimited(job.policy)).text
    files = {k: gate(v, _unlimited(job.policy)).text for k, v in artifact.files.items()}
    commit = build_commit(
        git,
        run_json=run_json + "\n",
        artifacts=files,
        published=done,
        parent=prev,
        message=f"magi run {run.id}: {run.status.value}",
    )
    if commit is not None:
        remote.push(commit, ref, expect=prev)
    env.set_output("run-id", run.id)
    env.set_output("status", run.status.value)
    env.set_output("pr-number", str(result.pr or ""))
    env.summary(gate(track, job.policy).text)
    return result


def _unlimited(p: Policy) -> Policy:
    return Policy(roster=p.roster, revealed=p.revealed, roots=p.roots, limit=1 << 62)


async def publish_missing(*, port: PublishPort, env: ActionEnv, issue: int, why: str) -> None:
    """The agents job left no artifact: say so on the issue, never end silently."""
    job_link = f"\n\nLog: {env.job_url}" if env.job_url else ""
    text = f"### magi\n\nThe competition left no result: {why}{job_link}\n"
    thread = await port.list_comments(env.repo, issue)

    def ours(c: Comment) -> bool:
        if c.user is None:
            return False
        return c.user.login == env.app_login if env.app_login else c.user.type == "Bot"

    mine = [c for c in thread if ours(c) and markers.find([c.body], TRACKING, issue=str(issue))]
    # Keep what the tracking marker counted (attempts, the PR): this is not a new attempt.
    state = dict(markers.latest([c.body for c in mine], TRACKING, issue=str(issue)) or {})
    state["issue"] = str(issue)
    body = gate(text, Policy()).text + "\n" + markers.marker(TRACKING, **state)
    if mine:
        if mine[0].body != body:
            await port.update_comment(env.repo, mine[0].id, body)
        return
    await port.create_comment(env.repo, issue, body)
