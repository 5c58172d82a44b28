"""``magi action publish``: turn compete's artifact into GitHub state. No agent runs here.

In order: check the artifact and its bundle (``magi.action.bundle``); read what the last
publish of this run did (``refs/magi/runs/<id>``); push each viable candidate branch with a
lease on what magi last pushed; file follow-ups for unadopted minor findings; open or update
the PR from the winner's branch (a draft until review and gate are green) and its three
comments; the ``magi`` check run on its head; the ending's label and the attempt count on
the issue; the tracking comment, edited in place; the record ref. Every text passes
``magi.core.threads.posting.gate`` first, and magi's marker is added after it. Each write is made
only when what GitHub holds differs, so publishing twice changes nothing; and a run whose
record says its PR already merged or closed (the App writes that) is not published at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from magi.action.artifact import Artifact, policy_for
from magi.action.bundle import INCOMING, check_bundle
from magi.action.env import ActionEnv
from magi.action.publish_job.posts import (
    ENDING_LABELS,
    TRACKING,
    Poster,
    attempts_spent,
    check_run,
    follow_ups,
    pull,
    ready_early,
    set_labels,
)
from magi.action.publish_job.record_ref import Published, build_commit, read_published, record_ref
from magi.action.publish_job.render import (
    Links,
    comments,
    ending,
    pr_body,
    question,
    tracking,
)
from magi.action.publish_job.secret_guard import Leak, secret_leaks, secrets_note
from magi.action.publish_job.trusted import DefaultBranch, hidden_roster
from magi.action.publish_job.workflow_guard import workflow_changes
from magi.core.person.park import park_ref
from magi.core.seats.runners import agent_labels, first_stage, next_stage, same_labels
from magi.core.threads import markers
from magi.core.threads.posting import Policy, code, gate
from magi.errors import ActionError, PushRefused, TamperedArtifact
from magi.git.remote import Remote
from magi.git.repo import Git
from magi.github.models import PullRequest
from magi.github.port import GitHubError, GitHubPort
from magi.model.config import Config
from magi.model.run import Run, RunStatus
from magi.report import revealed
from magi.report.tracking import carry_jobs
from magi.state.failpoint import failpoint

__all__ = ["PublishResult", "publish", "publish_missing"]

# A quota stall or a budget hold re-queues; only a failure spends an attempt.
SPENDS = frozenset({RunStatus.FAILED})


def _stored_field(git: Git, record: str | None, name: str) -> Any:
    """One top-level field of the record ref's ``run.json`` (None when there is no record,
    or it does not read: not these checks' business, reading the record proper reports it)."""
    if record is None:
        return None
    text = git.run("cat-file", "blob", f"{record}:run.json", check=False)
    try:
        return json.loads(text).get(name) if text.strip() else None
    except (json.JSONDecodeError, AttributeError):
        return None


def ended_on_github(git: Git, record: str | None) -> str | None:
    """``merged`` or ``closed`` when the record ref says the run's PR ended, else None."""
    status = _stored_field(git, record, "status")
    ended = {RunStatus.MERGED.value, RunStatus.CLOSED.value}
    return status if isinstance(status, str) and status in ended else None


def _another_incarnation(git: Git, record: str | None, run: Run) -> str | None:
    """Why the record ref's run is not the artifact's run (None when it is, or when there is
    none). A run's implement wave began once: a run carried on keeps that first turn's
    start (the copy published before the tally gives every implement turn that start,
    ``report.before_tally``), so a run of the same id (the App names a new run) whose
    wave began at another instant started over elsewhere."""
    turns = _stored_field(git, record, "turns")
    if not isinstance(turns, list):
        return None
    stored: list[datetime] = []
    for t in turns:
        if isinstance(t, dict) and t.get("node") == "implement":
            try:
                stored.append(datetime.fromisoformat(str(t.get("started_at"))))
            except ValueError:
                continue
    mine = [t.started_at for t in run.turns if t.node == "implement"]
    if not stored or not mine or min(stored) == min(mine):
        return None
    began, mine_began = min(stored), min(mine)
    return f"its implement wave began {began:%Y-%m-%d %H:%M:%S}, this one's {mine_began:%H:%M:%S}"


@dataclass
class PublishResult:
    pr: int | None = None
    pushed: dict[str, str] = field(default_factory=dict)
    follow_ups: list[int] = field(default_factory=list)
    attempts_spent: int = 0
    held: bool = False
    workflows: dict[str, list[str]] = field(default_factory=dict)  # label -> files, not pushed
    secrets: dict[str, list[Leak]] = field(default_factory=dict)  # label -> (kind, file)
    refused: dict[str, str] = field(default_factory=dict)  # label -> GitHub's words, not pushed


async def publish(
    *,
    port: GitHubPort,
    env: ActionEnv,
    git: Git,
    remote: Remote,
    artifact: Artifact,
    issue: int,
    trusted: DefaultBranch,
) -> PublishResult:
    """Publish one run; see the module docstring for the order and why. ``trusted``: the
    default branch as publish found it (``publish_job.trusted``): its config alone says
    what is pushed, posted, counted and dispatched, and its head is what each candidate
    is compared with; the artifact's config comes from the job where agents ran."""
    run = artifact.run
    if artifact.manifest.issue != issue or run.task.source != f"issue:{issue}":
        raise TamperedArtifact(f"the artifact is not for issue #{issue}")
    policy = trusted.config
    job = Poster(port, env, issue, policy_for(run, roster=hidden_roster(policy, run)))
    result = PublishResult()
    heads: dict[str, str] = {}
    if artifact.bundle is not None:
        heads = check_bundle(git, run, artifact.bundle, artifact.manifest.heads)
    elif artifact.manifest.heads:
        raise TamperedArtifact("the manifest names branches but the artifact has no bundle")

    ref = record_ref(run.id)
    prev = remote.fetch(ref, f"{INCOMING}/{run.id}/record")
    if (other := _another_incarnation(git, prev, run)) is not None:
        raise TamperedArtifact(
            f"{ref} holds another run of id {run.id} ({other}); this artifact is not "
            "published over it, so nothing that record holds is lost. Either the compete "
            'job did not find that record (its step "The run records" could not read '
            "the repository's run records: see its log) and started the id afresh, or this "
            "artifact is older than the record (a re-run of an old publish job)"
        )
    published = read_published(git, prev)
    if (ended := ended_on_github(git, prev)) is not None:
        # The App wrote the PR's ending into the record (merged or closed): this artifact
        # is older news, and publishing it would reopen what a person already decided.
        env.set_output("run-id", run.id)
        env.set_output("status", ended)
        env.set_output("pr-number", str(published.pr or ""))
        env.summary(f"magi run {run.id} already ended {ended} on GitHub: nothing published.")
        return PublishResult(pr=published.pr)

    # Branches: only once authors may be known (a commit can name its author), each leased.
    # One GitHub refuses (push protection, a ruleset, a file over 100 MB) is said and the
    # rest goes on; the winner's refused means no PR, and the job fails once all is said.
    refused = ""
    if revealed(run):
        wanted = {f"refs/heads/magi/{run.id}/{label}": label for label in heads}
        on_remote = remote.ls_remote(*wanted) if wanted else {}
        for target, label in wanted.items():
            branch = target.removeprefix("refs/heads/")
            changed = workflow_changes(git, trusted.head, heads[label])
            if changed and not policy.github.workflow_changes:
                result.workflows[label] = changed  # magi.action.publish_job.workflow_guard: why not
                continue
            if leaks := secret_leaks(git, trusted.head, heads[label]):
                result.secrets[label] = leaks  # magi.action.publish_job.secret_guard
                continue
            if on_remote.get(target) != heads[label]:
                try:
                    remote.push(
                        f"{INCOMING}/{run.id}/{label}",
                        target,
                        expect=published.branches.get(branch),
                    )
                except PushRefused as exc:
                    result.refused[label] = exc.message
                    continue
            result.pushed[branch] = heads[label]
    failpoint("publish:pushed")  # the kill tests: branches on GitHub, no pull request yet

    links = Links(
        repo_url=env.repo_url,
        job_url=env.job_url,
        branches=sorted(result.pushed),
        record_ref=ref,
    )
    winner = run.tally.winner if run.tally else None
    winner_branch = f"magi/{run.id}/{winner}" if winner else None
    pr: PullRequest | None = None
    if winner is not None and winner in result.refused:
        words = result.refused[winner].rstrip(".")
        refused = f"The winner was not pushed, so there is no pull request: {words}. {FIX_PUSH}"
    if winner_branch in result.pushed:
        assert winner_branch is not None  # noqa: S101 - narrowed by the membership test
        result.follow_ups = await follow_ups(job, run)
        info = await port.get_issue(env.repo, issue)
        title = gate(info.title or run.task.cleaned.splitlines()[0], job.policy).text
        body_text = pr_body(run, issue, links)
        if result.follow_ups:
            body_text += "\nFollow-ups: " + ", ".join(f"#{n}" for n in result.follow_ups) + "\n"
        body = job.post(body_text, markers.PR, issue=issue, run=run.id)
        try:
            pr = await pull(job, run, winner_branch, body, title.splitlines()[0][:250])
        except GitHubError as exc:
            # The branches are out: the issue still gets its label, tracking and record,
            # and a re-run opens the PR (the record names no PR, so it is looked up again).
            refused = (
                f"GitHub refused to open the pull request ({exc.status}: {exc.message}): "
                "run publish again."
            )
            pr = None
    if pr is not None and winner_branch is not None:
        result.pr = pr.number
        head = result.pushed[winner_branch]
        links = replace(links, pr_url=pr.html_url or None, head=head)
        texts = comments(run, links)
        for part, text in (
            ("tally", texts.tally),
            ("transcripts", texts.transcripts),
            ("review", texts.review),
        ):
            body = job.post(text, "comment", part=part, run=run.id)
            await job.upsert_comment(pr.number, body, "comment", part=part, run=run.id)
        await check_run(job, run, head, early=ready_early(run, pr))
        failpoint("publish:pr")  # ... the pull request and its comments, no tracking or record

    # An agent's question the run parked on: put to the issue (a new comment notifies its
    # subscribers; an edited tracking comment would not). Once per question turn.
    if run.status is RunStatus.ASKING:
        for q in (q for q in run.questions if q.parked_on):
            part = f"question-{q.id}-{len(q.turns)}"
            body = job.post(question(run, q), "comment", part=part, run=run.id)
            await job.upsert_comment(issue, body, "comment", part=part, run=run.id)

    # The issue: attempts, the ending's label, the tracking comment.
    thread = await port.list_comments(env.repo, issue)
    spent, counted = attempts_spent(job, thread)
    if run.status in SPENDS and counted != run.id and not published.counted:
        spent += 1
        counted = run.id
    result.attempts_spent = spent
    attempts = policy.github.attempts
    result.held = spent >= attempts and result.pr is None
    wanted_labels = {ENDING_LABELS[run.status]} if run.status in ENDING_LABELS else set()
    note = _workflow_note(result.workflows, winner)
    if result.secrets:
        note = (note + "\n\n" if note else "") + secrets_note(result.secrets, winner)
    if losers := {k: v for k, v in result.refused.items() if k != winner}:
        note = (note + "\n\n" if note else "") + _push_note(losers)
    if refused:
        note = (note + "\n\n" if note else "") + refused
    if result.held:
        wanted_labels.add("magi:held")
        note = (note + "\n\n" if note else "") + (
            f"Held: {spent} of {attempts} attempts spent (`[github] attempts`). "
            f"Last: {ending(run)} Fix the cause, then remove `magi:held` and `/magi retry`."
        )
    await set_labels(job, await port.get_issue(env.repo, issue), wanted_labels)
    pr_url = f"{env.repo_url}/pull/{result.pr}" if result.pr is not None else None
    track = tracking(run, replace(links, pr_url=pr_url), note)
    attrs: dict[str, str | int] = {"issue": issue, "run": run.id, "spent": spent}
    if counted:
        attrs["counted"] = counted
    if result.pr is not None:
        attrs["pr"] = result.pr
    tracked = job.post(track, TRACKING, **attrs)
    await job.upsert_comment(issue, tracked, TRACKING, carry=carry_jobs, issue=str(issue))

    # A run handed off: its next stage, dispatched once per state (before the record that
    # says so: a dispatch that failed is tried again by a re-run of this job).
    dispatched = published.dispatched
    if run.status is RunStatus.HANDED_OFF:
        stage = _stage_key(run, policy)
        if stage != dispatched:
            await _next_stage(port, env, run, issue, policy)
        dispatched = stage
    # The record ref, last: it says what this publish did.
    done = Published(
        branches=result.pushed,
        pr=result.pr,
        issue=issue,
        counted=counted == run.id,
        dispatched=dispatched,
    )
    run_json = gate(run.model_dump_json(by_alias=True, indent=2), _unlimited(job.policy)).text
    files = {k: gate(v, _unlimited(job.policy)).text for k, v in artifact.files.items()}
    commit = build_commit(
        git,
        run_json=run_json + "\n",
        artifacts=files,
        published=done,
        parent=prev,
        message=f"magi run {run.id}: {run.status.value}",
        # Ciphertext (no gate reads it); once authors are out the whole record is public.
        sealed=artifact.sealed if not revealed(run) else None,
        panel=artifact.panel if not revealed(run) and run.fork else None,
        keep_fork=bool(run.fork),  # a re-run of the forking publish loses no seat job's result
    )
    if commit is not None:
        remote.push(commit, ref, expect=prev)
    parking = park_ref(run.id)
    if run.status is not RunStatus.HANDED_OFF and await port.get_ref(env.repo, parking):
        # A `/magi stop`'s park request, honoured (the run parked) or outlived (the run
        # ended before a boundary): withdrawn (asked first, so publishing twice writes
        # nothing). A run handed off keeps it: its next stage parks at its first boundary.
        await port.delete_ref(env.repo, parking)
    env.set_output("run-id", run.id)
    env.set_output("status", run.status.value)
    env.set_output("pr-number", str(result.pr or ""))
    env.summary(gate(track, job.policy).text)
    if refused:
        raise ActionError(f"Everything else is published. {refused}")
    return result


def _stage_key(run: Run, trusted: Config) -> str:
    """Which state of the run a dispatch carries on: its turns and finished nodes only grow,
    stage by stage, and a re-run that asked nobody leaves both as they were. A fork is a
    state of its own (``fork_id``): a wave forked again on the same labels after a join
    (its seats lost to quota, then a retry) shows the same turns in the public copy."""
    wants = run.fork or next_stage(trusted, run.handoff)
    fork = f":{run.fork_id}" if run.fork else ""
    return f"{len(run.turns)}:{','.join(sorted(run.timings))}:{json.dumps(wants)}{fork}"


def allowed_labels(trusted: Config, labels: list[str], what: str) -> list[str]:
    """``labels`` when the repository's config names them (an agent's, or the pool's);
    else TamperedArtifact: a dispatch's labels come from the artifact, which the agents
    job wrote, and publish dispatches with the App's token."""
    known = {same_labels(first_stage(trusted))}
    known |= {same_labels(agent_labels(trusted, a)) for a in trusted.agents}
    if same_labels(labels) not in known:
        raise TamperedArtifact(f"{what} names runner labels {labels} no agent of the config has")
    return labels


async def _next_stage(
    port: GitHubPort, env: ActionEnv, run: Run, issue: int, trusted: Config
) -> None:
    """A run handed off (a seat's agent is logged in on another runner): the competition
    is dispatched again, on the first label set it waits for (``core.seats.runners``), in
    the repository's workflow, on labels the repository's config names."""
    if not env.ref_name:
        raise ActionError("GITHUB_REF_NAME is not set: publish cannot dispatch the next stage")
    workflow = trusted.github.workflow
    inputs = {"issue": str(issue), "run_id": run.id, "command": "compete"}
    inputs.update(env.park_input(run.id))
    if run.fork:
        # A forked wave: one seat job per label set, side by side (each its own concurrency
        # group); the one whose publish completes the set dispatches the join.
        groups = [allowed_labels(trusted, g, "the forked wave") for g in run.fork]
        for group in groups:
            fork = {**inputs, "runner-labels": json.dumps(group), "stage": "fork"}
            await port.dispatch_workflow(env.repo, workflow, env.ref_name, fork)
        where = f"{len(groups)} runners" if len(groups) > 1 else "a runner"
        env.summary(f"magi run {run.id}: its {run.fork_node} wave goes to {where}.")
        return
    labels = next_stage(trusted, run.handoff)
    if labels is None:
        raise TamperedArtifact("the run is handed off but waits for no runner labels")
    inputs["runner-labels"] = json.dumps(allowed_labels(trusted, labels, "the hand-off"))
    await port.dispatch_workflow(env.repo, workflow, env.ref_name, inputs)
    env.summary(f"magi run {run.id} goes on on a runner labelled {', '.join(labels)}.")


FIX_PUSH = (
    "Fix what GitHub names (a secret push protection found, a file over 100 MB, a "
    "ruleset the branch breaks: the candidate is in the run record), or allow it in the "
    "repository's settings, then run publish again."
)


def _push_note(refused: dict[str, str]) -> str:
    """What the tracking comment says of losing candidates GitHub refused: the run goes on."""
    lines = [f"Candidate {label} was not pushed: {why}" for label, why in sorted(refused.items())]
    return " ".join(lines) + " The winner and the rest are published."


def _workflow_note(refused: dict[str, list[str]], winner: str | None) -> str:
    """What the tracking comment says of candidates not pushed for changing workflows."""
    if not refused:
        return ""
    lines = []
    for label, files in sorted(refused.items()):
        who = f"Candidate {label}" + (" (the winner)" if label == winner else "")
        lines.append(f"{who} changes {', '.join(code(f) for f in files[:5])}: not pushed.")
    what = " ".join(lines)
    return (
        f"{what} magi does not push workflow changes an agent made (`[github] "
        "workflow_changes = false`): a workflow runs with this repository's secrets. Review "
        "the change in the run record, or set `workflow_changes = true` and run publish again."
    )


def _unlimited(p: Policy) -> Policy:
    """The policy for what the record ref stores. Before the tally the artifact's record
    was gated with the real roster already, and its roster holds the aliases: gated again
    with those as names, every ``agent-<n>`` id would become ``[redacted]``, and the stored
    record would no longer validate for any reader (day_usd, stats, a later runner)."""
    roster = p.roster if p.revealed else ()
    return Policy(roster=roster, revealed=p.revealed, roots=p.roots, limit=1 << 62)


async def publish_missing(
    *, port: GitHubPort, env: ActionEnv, issue: int, why: str, gated: bool = False
) -> None:
    """The agents job left no artifact: say so on the issue, never end silently.

    ``gated``: ``why`` is the agents job's refusal, gated when written (authors hidden
    unless nothing was seated); gating it again would blank the CLI a fix names."""
    job_link = f"\n\nLog: {env.job_url}" if env.job_url else ""
    text = f"### magi\n\nThe competition left no result: {why}{job_link}\n"
    thread = await port.list_comments(env.repo, issue)

    mine = [
        c for c in thread if env.ours(c) and env.seal.find([c.body], TRACKING, issue=str(issue))
    ]
    # Keep what the tracking marker counted (attempts, the PR): this is not a new attempt.
    state = dict(env.seal.latest([c.body for c in mine], TRACKING, issue=str(issue)) or {})
    state["issue"] = str(issue)
    body = gate(text, Policy(revealed=gated)).text + "\n" + env.seal.marker(TRACKING, **state)
    if mine:
        body = carry_jobs(mine[0].body, body)  # the App's jobs part stays
        if mine[0].body != body:
            await port.update_comment(env.repo, mine[0].id, body)
        return
    await port.create_comment(env.repo, issue, body)
