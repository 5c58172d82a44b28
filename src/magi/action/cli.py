"""``magi action compete`` and ``magi action publish``: what ``action.yml`` runs on a runner."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from magi.action.context import context_of
from magi.errors import ActionError, ExitCode, MagiError, PreflightError

if TYPE_CHECKING:  # imported where used, so `magi --help` stays quick
    from magi.action.artifact import Artifact
    from magi.action.env import ActionEnv
    from magi.git.remote import Remote
    from magi.git.repo import Git
    from magi.github.port import GitHubPort
    from magi.model.config import Config
    from magi.model.run import Run

app = typer.Typer(
    name="action",
    help="The GitHub Action: admit (without the App), compete (agents, no credential), publish.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

Issue = Annotated[int, typer.Option("--issue", help="The issue number the run is for.", min=1)]
ArtifactDir = Annotated[
    Path | None,
    typer.Option("--artifact-dir", help="The artifact directory (default: RUNNER_TEMP/magi-run)."),
]


def _artifact_dir(given: Path | None) -> Path:
    if given is not None:
        return given
    temp = os.environ.get("RUNNER_TEMP")
    return Path(temp) / "magi-run" if temp else Path.cwd() / ".magi-run"


def job_summary(run: Run, env: ActionEnv) -> str:
    """The agents job's summary: the node checklist and the ending, through the gate."""
    from magi.action.artifact import policy_for
    from magi.action.publish_job.render import Links, tracking
    from magi.core.threads.posting import gate

    links = Links(repo_url=env.repo_url, job_url=env.job_url)
    return gate(tracking(run, links), policy_for(run)).text


@app.command()
def compete(
    issue: Issue,
    issue_file: Annotated[
        Path | None,
        typer.Option("--issue-file", help="The issue as JSON, fetched by an earlier job."),
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option("--run-id", help="The run id the App assigned: resumed if recorded here."),
    ] = None,
    artifact_dir: ArtifactDir = None,
    answer_comment: Annotated[
        int | None,
        typer.Option(
            "--answer-comment",
            min=1,
            help="A writer's /magi answer comment (among comments.json beside --issue-file).",
        ),
    ] = None,
    fork: Annotated[
        bool,
        typer.Option("--fork", help="A forked wave's seat job: ask only this job's seats."),
    ] = False,
) -> None:
    """Run the competition for an issue and write the artifact the publish job reads."""
    from magi.action.agents_job.answers import Answering
    from magi.action.agents_job.compete import compete as run_compete
    from magi.action.agents_job.compete import read_issue
    from magi.action.agents_job.log import LogReporter
    from magi.action.agents_job.park import from_environ as park_from
    from magi.action.artifact import write_refusal
    from magi.action.env import ActionEnv
    from magi.state.store import Store, magi_home

    env = ActionEnv.from_environ(os.environ)
    if issue_file is None:
        raise ActionError("--issue-file is required: the agents job reads no issue itself")
    out = _artifact_dir(artifact_dir)
    reporter = LogReporter()
    # A writer's `/magi stop` parks the run at a node boundary: asked of the App there (not
    # by a forked wave's seat job, which runs one wave; its join parks).
    asks = None if fork else park_from(os.environ, env.repo.full_name, run_id, reporter.note)
    try:
        task = read_issue(issue_file, issue)
        run = run_compete(
            cwd=Path.cwd(),
            issue=task,
            store=Store(magi_home(), remote_park=asks),
            out=out,
            environ=os.environ,
            reporter=reporter,
            run_id=run_id or None,
            answer=(
                Answering(answer_comment, issue_file.parent / "comments.json")
                if answer_comment
                else None
            ),
            fork=fork,
        )
    except MagiError as e:
        # The publish job says why on the issue (a missing agent CLI, a credential in the
        # checkout...), with the fix, instead of the run ending having done nothing.
        write_refusal(out, issue, e.message, named=isinstance(e, PreflightError))
        raise
    env.set_output("run-id", run.id)
    env.set_output("status", run.status.value)
    env.set_output("artifact-dir", str(out))
    env.summary(job_summary(run, env))
    typer.echo(f"run {run.id}: {run.status.value}; artifact in {out}")


@app.command()
def admit(
    event_name: Annotated[str, typer.Option("--event-name", help="GITHUB_EVENT_NAME.")],
    event_file: Annotated[Path, typer.Option("--event-file", help="GITHUB_EVENT_PATH.")],
    permission: Annotated[
        str | None, typer.Option("--permission", help="The sender's permission (the API's).")
    ] = None,
    comments_file: Annotated[
        Path | None, typer.Option("--comments-file", help="The issue's comments as JSON.")
    ] = None,
) -> None:
    """Without the App: whether this event starts a competition (the App's own rules)."""
    from magi.action.env import ActionEnv
    from magi.action.gate_job.admit import admit_files

    env = ActionEnv.from_environ(os.environ)
    decision = admit_files(event_name, event_file, permission or None, comments_file, env.seal)
    env.set_output("issue", "" if decision.issue is None else str(decision.issue))
    if decision.issue is None:
        # A refusal is an answer, not a failure: the workflow ends without a red mark.
        typer.echo(f"::notice::magi does not start: {decision.why.replace(chr(10), ' ')}")
        return
    typer.echo(f"magi starts on #{decision.issue} ({decision.why})")


def _event(event_file: Path) -> dict[str, Any]:
    import json

    try:
        data = json.loads(event_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ActionError(f"cannot read the event file {event_file}: {e}") from None
    if not isinstance(data, dict):
        raise ActionError(f"{event_file} is not a GitHub event payload")
    return data


def _token(what: str, kind: str = "App installation token") -> str:
    """The step's MAGI_GITHUB_TOKEN, or a clear error naming the step and the token it needs."""
    token = os.environ.get("MAGI_GITHUB_TOKEN", "")
    if not token:
        raise ActionError(f"{what} needs the {kind} in MAGI_GITHUB_TOKEN")
    return token


EventName = Annotated[str, typer.Option("--event-name", help="GITHUB_EVENT_NAME.")]
EventFile = Annotated[Path, typer.Option("--event-file", help="GITHUB_EVENT_PATH.")]


@app.command()
def claim(ctx: typer.Context, issue: Issue, event_file: EventFile) -> None:
    """Without the App: claim the issue (refs/magi/claims/issue-N), once, as the App does."""
    from magi.action.env import ActionEnv
    from magi.action.gate_job.gatekeep import claim as run_claim

    env = ActionEnv.from_environ(os.environ)
    token = _token("claim")
    event = _event(event_file)
    repo = event.get("repository") or {}
    branch = str(repo.get("default_branch") or "main") if isinstance(repo, dict) else "main"
    said = event.get("issue") or {}
    if not isinstance(said, dict) or said.get("number") != issue:
        raise ActionError(f"the event file {event_file} is not a label event of #{issue}")
    text = (str(said.get("title") or ""), str(said.get("body") or ""))  # what the label saw
    port = context_of(ctx).port(env, token)
    won = asyncio.run(
        run_claim(port, env.repo, issue, branch, env.run_id, text=text, seal=env.seal)
    )
    env.set_output("issue", str(issue) if won else "")
    if not won:
        # Another run holds the claim (a second label event, or an earlier competition).
        typer.echo(f"::notice::magi does not start: #{issue} is already claimed")
        return
    typer.echo(f"claimed #{issue}")


@app.command()
def pin(
    ctx: typer.Context,
    issue: Issue,
    issue_file: Annotated[
        Path, typer.Option("--issue-file", help="The issue as JSON, as the task job read it.")
    ],
) -> None:
    """The issue text the label pinned in the claim, checked with the App's key, written
    beside the issue file for compete (``magi.action.gate_job.pin``)."""
    from magi.action.env import ActionEnv
    from magi.action.gate_job.pin import pin_files

    env = ActionEnv.from_environ(os.environ)
    port = context_of(ctx).port(env, _token("pin", "job's read token"))
    pinned = asyncio.run(pin_files(port, env.repo, issue, issue_file, env.seal))
    if pinned is None:
        typer.echo(f"::notice::#{issue}'s claim pins no text: the run reads the issue as it is")
    elif pinned.edited:
        typer.echo(f"::warning::#{issue} was edited after the label: the run uses the text then")
    else:
        typer.echo(f"#{issue}: the run works on the text the label pinned")


@app.command()
def merge(ctx: typer.Context, event_name: EventName, event_file: EventFile) -> None:
    """Without the App: the merge gate on a `merge` comment or a finished workflow run."""
    from datetime import UTC, datetime

    from magi.action.env import ActionEnv
    from magi.action.gate_job.gatekeep import merge_event, run_gate
    from magi.github.gate import Gate

    env = ActionEnv.from_environ(os.environ)
    token = _token("merge")
    if not env.app_login:
        raise ActionError("merge needs MAGI_APP_SLUG (the App token step's app-slug output)")
    work = merge_event(event_name, _event(event_file))
    if work is None:
        typer.echo(f"::notice::nothing for the merge gate in this {event_name} event")
        return
    port = context_of(ctx).publishing_port(env, token)
    g = Gate(env.app_login, env.seal, clock=lambda: datetime.now(UTC))
    outcome = asyncio.run(run_gate(g, port, env.repo, work))
    env.set_output("outcome", outcome)
    typer.echo(f"merge gate: {outcome}")


@app.command()
def publish(
    ctx: typer.Context,
    issue: Issue,
    run: Annotated[str | None, typer.Option("--run", help="The run id compete reported.")] = None,
    artifact_dir: ArtifactDir = None,
) -> None:
    """Check the artifact and turn it into GitHub state: branches, PR, comments, labels."""
    from magi.action.artifact import read_artifact, read_refusal
    from magi.action.env import ActionEnv
    from magi.action.publish_job.publish import publish as run_publish
    from magi.action.publish_job.publish import publish_missing
    from magi.action.publish_job.trusted import default_branch
    from magi.errors import TamperedArtifact
    from magi.git.remote import Remote
    from magi.git.repo import Git

    env = ActionEnv.from_environ(os.environ)
    token = _token("publish")
    port = context_of(ctx).publishing_port(env, token)
    where = _artifact_dir(artifact_dir)
    if not (where / "manifest.json").is_file():
        said = read_refusal(where, issue)
        why = said or ("the agents job failed or was cancelled before it wrote one (see its log)")
        asyncio.run(publish_missing(port=port, env=env, issue=issue, why=why, gated=bool(said)))
        raise ActionError(f"no artifact in {where}: {why}")
    git = Git.discover(Path.cwd())
    url = git.run("remote", "get-url", "origin").strip()
    remote = Remote(git.root, url, token)
    try:
        artifact = read_artifact(where, run or None)
        # Every setting publish decides by is the default branch's, read now: never the
        # artifact's config (publish_job.trusted: why).
        trusted = default_branch(git, remote)
        if artifact.manifest.fork:
            _publish_seat_job(port, env, git, remote, artifact, where, issue, trusted.config)
            return
        result = asyncio.run(
            run_publish(
                port=port,
                env=env,
                git=git,
                remote=remote,
                artifact=artifact,
                issue=issue,
                trusted=trusted,
            )
        )
    except TamperedArtifact as e:
        why = f"publish refused the artifact: {e.message}"
        asyncio.run(publish_missing(port=port, env=env, issue=issue, why=why))
        raise
    pr = f"PR #{result.pr}" if result.pr else "no PR"
    typer.echo(f"published run {artifact.run.id}: {pr}, {len(result.pushed)} branches")


def _publish_seat_job(
    port: GitHubPort,
    env: ActionEnv,
    git: Git,
    remote: Remote,
    artifact: Artifact,
    where: Path,
    issue: int,
    trusted: Config,
) -> None:
    """A fork's seat job: its sealed result beside the record (``publish_fork``)."""
    from magi.action.artifact import FORK_SEALED
    from magi.action.publish_job.publish_fork import publish_fork
    from magi.action.seal import parse_sealed
    from magi.errors import TamperedArtifact

    try:
        text = (where / FORK_SEALED).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as e:
        why = f"a seat job's artifact without a readable {FORK_SEALED}: {e}"
        raise TamperedArtifact(why) from None
    sealed = parse_sealed(text, f"the artifact's {FORK_SEALED}").text
    said = asyncio.run(
        publish_fork(
            port=port, env=env, git=git, remote=remote, artifact=artifact, sealed=sealed,
            issue=issue, trusted=trusted,
        )
    )  # fmt: skip
    typer.echo(f"published the seat job of {', '.join(artifact.manifest.fork)}: {said}")


@app.command()
def notify(
    issue: Issue,
    run: Annotated[str | None, typer.Option("--run", help="The run id compete reported.")] = None,
    artifact_dir: ArtifactDir = None,
    pr: Annotated[int | None, typer.Option("--pr", help="The PR publish opened, if any.")] = None,
) -> None:
    """``[notify] command`` for a run on a runner: a step of its own after publish.

    Its own step because a notifier can read its parent's ``/proc/<pid>/environ``: this
    process holds no token and no key (``run.sh`` refuses them), where publish holds both.
    The command is the checkout's own config (the default branch, what writers committed),
    never the artifact's: the artifact comes from the job where agents ran. A notifier that
    fails is a warning in the log, never a failed job.
    """
    from magi.action.artifact import read_artifact
    from magi.action.env import ActionEnv
    from magi.config.load import load_repo_dir
    from magi.core.person.notify import event_of, summary_of
    from magi.sandbox.notify import send

    env = ActionEnv.from_environ(os.environ)
    root = Path.cwd()
    try:
        command = load_repo_dir(root).config.notify.command
    except (MagiError, OSError, UnicodeDecodeError) as e:
        typer.echo(f"::warning::no notification: the repository's config does not load: {e}")
        return
    if not command:
        return
    try:
        record = read_artifact(_artifact_dir(artifact_dir), run or None).run
    except MagiError as e:
        typer.echo(f"::warning::no notification: {e.message}")
        return
    where = f"{env.repo_url}/pull/{pr}" if pr else f"{env.repo_url}/issues/{issue}"
    fields = {
        "summary": summary_of(record.id, record.status.value, record.reason),
        "run": record.id,
        "url": where,
        "event": event_of(record.status.value),
    }
    why = send(command, fields)
    if why is not None:
        typer.echo(f"::warning::{why}; the publish is not affected")


@app.command("token-refused")
def token_refused(
    ctx: typer.Context,
    thread: Annotated[
        str, typer.Option("--thread", help="The issue or PR to say it on (may be empty).")
    ] = "",
) -> None:
    """After ``create-github-app-token`` failed: find out why, with the App's own key, and
    say it on the thread with the job's own token (``magi.action.publish_job.token_refused``)."""
    from magi.action.env import MARKER_KEY, ActionEnv
    from magi.action.publish_job.token_refused import (
        Found,
        body,
        credentials_problem,
        diagnose,
    )
    from magi.github.auth import AppAuth

    key = os.environ.pop(MARKER_KEY, "")  # the App's key: the JWT's, never a seal here
    client_id = os.environ.get("MAGI_APP_CLIENT_ID", "")
    env = ActionEnv.from_environ(os.environ)
    job = os.environ.get("GITHUB_JOB", "") or "?"
    found = credentials_problem(client_id, key)
    if found is None:
        given = context_of(ctx)
        probe = AppAuth(
            client_id.strip(), key.strip(), env.api_url, async_transport=given.app_transport
        )
        try:
            found = asyncio.run(diagnose(probe, env.repo, client_id.strip(), job))
        except Exception as e:  # the step says what it can, never a traceback
            found = Found(
                f"magi could not ask GitHub why ({type(e).__name__})",
                "read GitHub's words in the failed `create-github-app-token` step's log",
            )
    text = body(found, job, env.job_url or "this workflow run")
    typer.echo(f"::error::{found.why}. Fix: {found.fix}")
    env.summary(text)
    if not thread.isdigit():
        typer.echo("no thread to say it on")
        return
    port = context_of(ctx).port(env, _token("token-refused", "job's own GITHUB_TOKEN"))
    asyncio.run(port.create_comment(env.repo, int(thread), text))
    typer.echo(f"said on #{thread} why the App token was refused")


InputDir = Annotated[
    Path,
    typer.Option("--input-dir", help="The thread as the read-only task job fetched it."),
]
CommentId = Annotated[int, typer.Option("--comment", help="The command comment's id.", min=1)]
CouncilCommand = Annotated[
    str, typer.Option("--command", help="council (a question) or review (a PR's diff).")
]


@app.command("council")
def council_command(
    issue: Issue,
    comment: CommentId,
    input_dir: InputDir,
    command: CouncilCommand = "council",
    artifact_dir: ArtifactDir = None,
) -> None:
    """``/magi council`` / ``/magi review``: convene the panel (agents job, no credential)."""
    from magi.action.agents_job.checkout import refuse_credentials
    from magi.action.agents_job.council import convene, read_inputs
    from magi.action.artifact import write_refusal
    from magi.action.env import ActionEnv
    from magi.engine.diagnose import diagnose
    from magi.state.store import Store, magi_home

    env = ActionEnv.from_environ(os.environ)
    out = _artifact_dir(artifact_dir)
    try:
        inputs = read_inputs(input_dir, issue=issue, comment=comment, command=command)
        refuse_credentials(Path.cwd())
        d = diagnose(Path.cwd(), None, os.environ)
        if d.config is None:
            problems = "; ".join(p.message for p in d.problems)
            raise ActionError(f"no council can be seated: {problems}")
        missing = {
            e.agent.id: f"`{e.executable}` is not on PATH" for e in d.roster if e.path is None
        }
        rec = convene(
            cwd=Path.cwd(),
            inputs=inputs,
            store=Store(magi_home()),
            out=out,
            config=d.config,
            environ=os.environ,
            missing=missing,
        )
    except MagiError as e:
        # publish-council says why on the thread
        write_refusal(out, issue, e.message, named=isinstance(e, PreflightError))
        raise
    env.set_output("run-id", rec.id)
    env.set_output("status", rec.verdict or rec.status.value)
    env.set_output("artifact-dir", str(out))
    typer.echo(f"council {rec.id}: {rec.verdict or rec.status.value}; artifact in {out}")


@app.command("publish-council")
def publish_council_command(
    ctx: typer.Context,
    issue: Issue,
    comment: CommentId,
    input_dir: InputDir,
    command: CouncilCommand = "council",
    artifact_dir: ArtifactDir = None,
) -> None:
    """Post the council's matrix and its ``magi council`` check run (App token, no agents)."""
    from magi.action.agents_job.council import MANIFEST, read_inputs
    from magi.action.artifact import read_refusal
    from magi.action.env import ActionEnv
    from magi.action.publish_job.publish_council import (
        publish_council,
        publish_council_missing,
        read_council,
    )
    from magi.errors import TamperedArtifact

    env = ActionEnv.from_environ(os.environ)
    token = _token("publish-council")
    inputs = read_inputs(input_dir, issue=issue, comment=comment, command=command)
    port = context_of(ctx).publishing_port(env, token)
    where = _artifact_dir(artifact_dir)
    if not (where / MANIFEST).is_file():
        said = read_refusal(where, issue, "the council job")
        why = said or ("the agents job failed or was cancelled before it wrote one (see its log)")
        asyncio.run(publish_council_missing(port=port, env=env, inputs=inputs, why=why))
        raise ActionError(f"no council artifact in {where}")
    try:
        rec = read_council(where, inputs)
    except TamperedArtifact as e:
        why = f"publish refused the artifact: {e.message}"
        asyncio.run(publish_council_missing(port=port, env=env, inputs=inputs, why=why))
        raise
    done = asyncio.run(publish_council(port=port, env=env, inputs=inputs, rec=rec))
    typer.echo(f"published council {rec.id}: comment {done.comment}, check {done.conclusion}")


Pr = Annotated[int, typer.Option("--pr", help="The magi pull request number.", min=1)]


def _publish_side(ctx: typer.Context) -> tuple[ActionEnv, GitHubPort, Git, Remote]:
    """The publish job's environment, GitHub port, checkout and remote (the App token)."""
    from magi.action.env import ActionEnv
    from magi.git.remote import Remote
    from magi.git.repo import Git

    env = ActionEnv.from_environ(os.environ)
    token = _token("this step")
    git = Git.discover(Path.cwd())
    url = git.run("remote", "get-url", "origin").strip()
    return env, context_of(ctx).publishing_port(env, token), git, Remote(git.root, url, token)


@app.command()
def rebase(ctx: typer.Context, pr: Pr) -> None:
    """Rebase a magi PR onto its base as the remote has it now; push with a lease."""
    from magi.action.publish_job.rebase import rebase as run_rebase

    env, port, git, remote = _publish_side(ctx)
    done = asyncio.run(run_rebase(port=port, env=env, git=git, remote=remote, pr=pr))
    env.set_output("outcome", done.outcome)
    typer.echo(f"PR #{pr}: {done.outcome} {done.new_head[:12]}".rstrip())
    if done.outcome in ("conflict", "to-fixer"):
        raise typer.Exit(ExitCode.REBASE_CONFLICT)  # the job fails: the head's lock is given back


@app.command("land-read")
def land_read(
    ctx: typer.Context,
    pr: Pr,
    raw: Annotated[Path, typer.Option("--raw", help="The read step's `gh api` answers.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the round's input.")],
    fetch_logs: Annotated[
        bool,
        typer.Option(
            "--fetch-logs",
            help="Also fetch red jobs' log tails and reviewers' permission (read token).",
        ),
    ] = False,
) -> None:
    """Turn the read step's files into the fix round's input; with --fetch-logs, the job
    log tails too (MAGI_GITHUB_TOKEN: the job's read-only token)."""
    from magi.action.env import ActionEnv
    from magi.action.read_job.land_read import fetch_job_logs, fetch_reviewers, read_round_input

    env = ActionEnv.from_environ(os.environ)
    if fetch_logs:
        token = _token("--fetch-logs", "job's read-only token")
        port = context_of(ctx).port(env, token)
        for miss in asyncio.run(fetch_job_logs(port, env.repo, raw)):
            typer.echo(f"no job log: {miss}")
        asyncio.run(fetch_reviewers(port, env.repo, raw))
    inp = read_round_input(raw, pr, env.app_login)
    out.write_text(inp.model_dump_json(indent=2) + "\n", encoding="utf-8")
    typer.echo(f"PR #{pr}: {len(inp.checks)} red checks, {len(inp.reviews)} review notes")


@app.command()
def land(
    pr: Pr,
    input_file: Annotated[Path, typer.Option("--input", help="The round's input (land-read).")],
    round_no: Annotated[int, typer.Option("--round", help="This round's number.", min=1)] = 1,
    record: Annotated[
        Path | None, typer.Option("--record", help="run.json from refs/magi/runs/<id>.")
    ] = None,
    artifact_dir: ArtifactDir = None,
) -> None:
    """One landing fix round: the fixer seat fixes, magi commits and runs e2e (no credential)."""
    from magi.action.agents_job.land import fix_round, load_run
    from magi.action.env import ActionEnv
    from magi.model.fix_round import RoundInput
    from magi.state.store import Store, magi_home

    env = ActionEnv.from_environ(os.environ)
    if input_file.is_dir():  # the read step's raw `gh api` answers
        from magi.action.read_job.land_read import read_round_input

        inp = read_round_input(input_file, pr, env.app_login)
    else:
        inp = RoundInput.model_validate_json(input_file.read_text(encoding="utf-8"))
    if inp.pr != pr:
        raise ActionError(f"the round's input is for PR #{inp.pr}, not #{pr}")
    store = Store(magi_home())
    run = load_run(store, inp.run, record)
    out = _artifact_dir(artifact_dir)
    done = fix_round(
        checkout=Path.cwd(),
        inp=inp,
        run=run,
        store=store,
        environ=os.environ,
        out=out,
        round_no=round_no,
    )
    env.set_output("changed", str(done.changed).lower())
    env.set_output("artifact-dir", str(out))
    typer.echo(f"PR #{pr} round {round_no}: {'changed' if done.changed else 'no change'}")


@app.command("publish-land")
def publish_land(ctx: typer.Context, pr: Pr, artifact_dir: ArtifactDir = None) -> None:
    """Push a fix round with a lease on the head it read, record it, or end landing blocked."""
    from magi.action.publish_job.land_publish import publish_land as run_publish_land

    env, port, git, remote = _publish_side(ctx)
    where = _artifact_dir(artifact_dir)
    done = asyncio.run(
        run_publish_land(port=port, env=env, git=git, remote=remote, where=where, pr=pr)
    )
    env.set_output("outcome", done.outcome)
    typer.echo(f"PR #{pr}: {done.outcome} {done.head[:12]}")
