"""Comment commands on an issue or its PR: ``/magi retry|stop|fold|status|stats|council``,
``/magi review`` and ``/magi answer``.

Writers only. Accepted -> a reaction on the comment, then the action; refused -> a reply
that quotes the command and says why (who may, what is missing); unknown -> a short reply
with the list and the full help folded. What a command acts on (the run, its workflow run)
is found from the App's own markers on the issue, never from the App's memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from magi.app import stats
from magi.app.context import AppContext, dispatch_competition, reply_once, repo_config, said_ref
from magi.app.events import Delivery, IssueCommentEvent, Router
from magi.app.merge import is_magi_pull, issue_of
from magi.app.progress import is_magi_run
from magi.core.council.surface import question_of
from magi.core.person.asking import BadQuestion, pick
from magi.core.person.park import park_ref
from magi.core.threads import markers
from magi.core.threads.approval import may_write, permission_level
from magi.core.threads.commands import (
    Command,
    Verb,
    parse,
    refused_reply,
    strangers_reply,
    unknown_reply,
    words_of,
)
from magi.core.threads.posting import inert
from magi.core.threads.progress import parse_title
from magi.errors import ConfigError, StateError
from magi.github import records
from magi.github.gate import same_repo
from magi.github.models import Repo, WorkflowRun
from magi.github.port import GitHubError, GitHubPort
from magi.github.state import delete_under, dispatch_inputs, refs_under
from magi.model.config import Config
from magi.model.run import Run, RunStatus
from magi.state.store import RUN_ID

router = Router()
# Commands handed to the runner (the workflow's `command` input).
DISPATCHED = {
    # A retry is the competition again with the run's id: the runner resumes the run it has
    # (workflows/magi.yml: "resumed if this runner has it") rather than competing anew.
    Verb.RETRY: "compete",
    Verb.COUNCIL: "council",
    Verb.REVIEW: "review",
}
NEEDS_RUN = frozenset({Verb.RETRY, Verb.STOP, Verb.FOLD, Verb.STATUS, Verb.ANSWER})
# A council or a review is about the thread it was asked on, and its question stays in the
# comment: the runner's read-only job reads the comment by id (a workflow input is not a
# place for a stranger's text).
PANELS = frozenset({Verb.COUNCIL, Verb.REVIEW})


def _has_command(p: IssueCommentEvent) -> bool:
    return bool(parse(p.comment.body))


@router.on("issue_comment", "created", IssueCommentEvent, _has_command)
async def commands(ctx: AppContext, d: Delivery[IssueCommentEvent]) -> str:
    p = d.payload
    found = parse(p.comment.body)
    if not found or p.comment.user is None:
        return "no-command"
    repo, number = d.repo, p.issue.number
    gh = await ctx.ports(d.installation, repo)
    # A redelivered comment must not retry or stop twice: the comment is answered once.
    head = await gh.get_ref(repo, f"heads/{p.repository.default_branch}")
    if head is None:
        return "no-default-branch"
    login = p.comment.user.login
    level = (await gh.permission(repo, login)).permission
    if not may_write(level):
        # Permission before anything is spent: a stranger's commands run nothing, and however
        # many they post, magi answers them once per thread (one ref, one reply), never per
        # comment.
        words = strangers_reply(found[0], login, permission_level(level))
        said_once = await reply_once(ctx, gh, repo, number, f"stranger-{login}", words, head.sha)
        return "not-a-writer" if said_once else "not-a-writer-again"
    if not await gh.create_ref(repo, said_ref(number, f"command-{p.comment.id}"), head.sha):
        return "already-answered"
    replies: list[str] = []
    accepted = False
    answers = [c for c in found if c.verb is Verb.ANSWER]
    for command in found:
        if command.verb is None:
            replies.append(unknown_reply(command, ctx.serverless))
        elif command.verb is Verb.ANSWER and command is not answers[0]:
            why = "one answer per comment: the runner reads the first; post this one apart."
            replies.append(refused_reply(command, why))
        else:
            reply, ok = await _run(ctx, gh, d, command)
            accepted = accepted or ok
            replies.append(reply)
    said = [r for r in replies if r]
    if said:
        await gh.create_comment(repo, number, "\n\n---\n\n".join(said))
    if accepted:  # the reaction only once the reply (if any) is posted
        await gh.react_to_comment(repo, p.comment.id, "+1")
    return ",".join((c.verb.value if c.verb else "unknown") for c in found)


async def _target(ctx: AppContext, gh: GitHubPort, repo: Repo, p: IssueCommentEvent) -> int:
    """The issue a command is about: the issue itself, or the one a magi PR came from."""
    if p.issue.pull_request is None:
        return p.issue.number
    pull = await gh.get_pull(repo, p.issue.number)
    issue = issue_of(pull, ctx.seal) if is_magi_pull(pull, ctx.seal) else None
    return issue if issue is not None else p.issue.number


async def _run(
    ctx: AppContext, gh: GitHubPort, d: Delivery[IssueCommentEvent], command: Command
) -> tuple[str, bool]:
    """Do one command from a writer: (the reply, or "" when a reaction says it all; accepted)."""
    p, repo, verb = d.payload, d.repo, command.verb
    if verb is None:
        return unknown_reply(command, ctx.serverless), False
    branch = p.repository.default_branch
    try:
        config = await repo_config(gh, repo, branch)
    except ConfigError as exc:
        return refused_reply(command, f"the config on the default branch is invalid: {exc}"), False
    if verb in PANELS:
        return await _panel(gh, repo, config, p, command)
    if verb is Verb.STATS:  # the repository's run records, not this issue's run alone
        return await stats.reply(ctx, gh, repo, d.id), True
    issue = await _target(ctx, gh, repo, p)
    # The run this issue's own acknowledgement names (issue=: a marker copied from another
    # thread is not this issue's run).
    thread = ctx.own(await gh.list_comments(repo, issue))
    run = ctx.seal.latest(thread, markers.RUN, issue=str(issue))
    if verb in NEEDS_RUN and run is None:
        why = f"no magi run has started on #{issue}; label it to start one."
        return refused_reply(command, why), False
    if verb in {Verb.RETRY, Verb.FOLD} and run is not None:
        busy = await _busy(gh, repo, config, run)
        if busy:
            rid = run.get("run", "")
            why = f"the runner of magi run `{rid}` is still {busy}; `/magi stop` first."
            if RUN_ID.fullmatch(rid) and await gh.get_ref(repo, park_ref(rid)) is not None:
                why = (
                    f"magi run `{rid}` is parking at its next node boundary (its runner is "
                    f"still {busy}); comment again once it has parked, or `/magi stop now`."
                )
            return refused_reply(command, why), False
    if verb is Verb.FOLD:
        return await _fold(gh, repo, command, (run or {}).get("run", ""))
    if verb is Verb.ANSWER:
        if p.issue.pull_request is not None:
            why = "answer on the issue the question was posted on, where the runner reads it."
            return refused_reply(command, why), False
        ctx.forget_park(repo, (run or {}).get("run", ""))
        return await _answer(
            gh, repo, config, branch, issue, command, p, (run or {}).get("run", ""), ctx.park_input
        )
    if verb in DISPATCHED:
        run_id = (run or {}).get("run", "")
        inputs = {"run_id": run_id, "issue": str(issue), "command": DISPATCHED[verb]}
        ctx.forget_park(repo, run_id)
        return await _dispatch(gh, repo, config, branch, command, inputs, ctx.park_input)
    if verb is Verb.STOP:
        return await _stop(ctx, gh, repo, config, command, run or {}, branch)
    return await _report(gh, repo, config, verb, issue, run or {}), True


async def _dispatch(
    gh: GitHubPort,
    repo: Repo,
    config: Config,
    branch: str,
    command: Command,
    inputs: dict[str, str],
    park: Callable[[Repo, str], dict[str, str]] | None = None,
) -> tuple[str, bool]:
    """Start the runner workflow with ``inputs``; a refusal reply saying why when GitHub won't.

    ``park``: a competition's (a retry's, an answer's) park channel for its run. A park asked
    for earlier was honoured, or outlived its run's workflow: it is withdrawn first, so the
    resumed run does not park again at its first boundary."""
    if park is not None and inputs.get("run_id"):
        await gh.delete_ref(repo, park_ref(inputs["run_id"]))
        inputs = {**inputs, **park(repo, inputs["run_id"])}
    try:
        await dispatch_competition(
            gh, repo, config.github.workflow, branch, dispatch_inputs(config, **inputs)
        )
    except GitHubError as exc:
        why = (
            f"the runner workflow `{config.github.workflow}` could not be started "
            f"({exc.status or 'no answer'}: {inert(exc.message)})."
        )
        return refused_reply(command, why), False
    return "", True


async def _panel(
    gh: GitHubPort, repo: Repo, config: Config, p: IssueCommentEvent, command: Command
) -> tuple[str, bool]:
    """``/magi council <question>`` (an issue or a PR) or ``/magi review`` (a PR): dispatch."""
    if command.verb is Verb.REVIEW and p.issue.pull_request is None:
        why = "`/magi review` reviews a pull request's diff; comment it on the pull request."
        return refused_reply(command, why), False
    if command.verb is Verb.COUNCIL and not question_of(p.comment.body).strip():
        why = "no question: write it after `/magi council`, on that line or below it."
        return refused_reply(command, why), False
    inputs = {
        "run_id": "",
        "issue": str(p.issue.number),
        "command": "review" if command.verb is Verb.REVIEW else "council",
        "comment": str(p.comment.id),
    }
    return await _dispatch(gh, repo, config, p.repository.default_branch, command, inputs)


# Publish posts a question, then writes the record that says the run waits on it.
_JUST_POSTED = " If a question was posted just now, answer again in a minute."


async def _answer(
    gh: GitHubPort,
    repo: Repo,
    config: Config,
    branch: str,
    issue: int,
    command: Command,
    p: IssueCommentEvent,
    run_id: str,
    park: Callable[[Repo, str], dict[str, str]] | None = None,
) -> tuple[str, bool]:
    """``/magi answer``: checked against the question the run's record says it waits on, then
    the competition dispatched again with the comment's id. The runner reads the words from
    the comment itself (a workflow input is not a place for them) and carries that seat on."""
    try:
        stored = await records.read(gh, repo, run_id)
    except StateError as exc:
        why = f"magi run `{run_id}` has no readable record ({exc}).{_JUST_POSTED}"
        return refused_reply(command, why), False
    record = stored.record
    if not isinstance(record, Run) or record.status is not RunStatus.ASKING:
        state = record.status.value if isinstance(record, Run) else record.kind
        why = f"magi run `{run_id}` is {state}, not waiting on a question.{_JUST_POSTED}"
        return refused_reply(command, why), False
    waiting = [(q.id, tuple(q.turns[-1].choices)) for q in record.questions if q.parked_on]
    try:
        pick(waiting, words_of(command), [q.id for q in record.questions])
    except BadQuestion as exc:
        return refused_reply(command, f"{exc}."), False
    inputs = {"run_id": run_id, "issue": str(issue), "command": "compete"}
    inputs["comment"] = str(p.comment.id)
    return await _dispatch(gh, repo, config, branch, command, inputs, park)


async def _runs_of(
    gh: GitHubPort, repo: Repo, config: Config, run: Mapping[str, str]
) -> list[WorkflowRun]:
    """Every workflow run of this magi run, newest first: the one the App dispatched (its
    acknowledgement names it), and the stages publish dispatched since (a run handed to
    another runner, a forked wave's seat jobs, its join), which name the run in their
    titles (``run-name``)."""
    wid, rid = run.get("workflow_run", ""), run.get("run", "")
    found = []
    for r in await gh.list_workflow_runs(repo, config.github.workflow):
        t = parse_title(r.display_title)
        # The competition's own stages: a council, a review or a landing names the run too.
        named = bool(rid) and t is not None and t.run == rid and t.command == "compete"
        if (wid.isdigit() and r.id == int(wid)) or (
            named and is_magi_run(r, config.github.workflow, repo)
        ):
            found.append(r)
    return sorted(found, key=lambda r: r.id, reverse=True)


async def _busy(gh: GitHubPort, repo: Repo, config: Config, run: Mapping[str, str]) -> str:
    """The status of a runner of this run that has not finished ("" when none is, or none
    is known)."""
    live = [r for r in await _runs_of(gh, repo, config, run) if r.status != "completed"]
    return live[0].status or "" if live else ""


async def _stop(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    config: Config,
    command: Command,
    run: Mapping[str, str],
    branch: str,
) -> tuple[str, bool]:
    """``/magi stop``: park the run at its next node boundary (the seats at work finish their
    turn and are kept, no attempt is spent); ``/magi stop now``: cancel its workflow runs at
    once. Parking needs the App's public address, which the run asks (``MAGI_PUBLIC_URL``)."""
    rid = run.get("run", "")
    if not run.get("workflow_run", "").isdigit() and not rid:
        why = "magi does not know the workflow run of this magi run."
        return refused_reply(command, why), False
    now = [a.lower() for a in command.args]
    if now not in ([], ["now"]):
        why = "`/magi stop` parks the run at its next node boundary; `/magi stop now` cancels it."
        if ctx.serverless:
            why = "`/magi stop` cancels the run (`/magi retry` carries it on)."
        return refused_reply(command, why), False
    runs = await _runs_of(gh, repo, config, run)
    live = [r for r in runs if r.status != "completed"]
    if not live:
        ended = f" ({runs[0].conclusion})" if runs else ""
        why = f"the workflow run already finished{ended}."
        return refused_reply(command, why), False
    why_not = _cannot_park(ctx, run, rid)
    if not now and why_not is None:
        head = await gh.get_ref(repo, f"heads/{branch}")
        # The request is the ref's existence (the App keeps no state); it names a commit
        # because a ref must: the default branch's tip.
        if head is not None and not await gh.create_ref(repo, park_ref(rid), head.sha):
            return (
                f"magi run `{rid}` is already parking at its next node boundary; "
                "`/magi stop now` cancels it at once.",
                True,
            )
        if head is not None:
            ctx.forget_park(repo, rid)
            return (
                f"Parking magi run `{rid}` at its next node boundary: the seats at work "
                "finish their turn and are kept, and no attempt is spent. `/magi retry` "
                "carries it on once it has parked. A runner that cannot reach the App runs "
                "on (its log says so): `/magi stop now` cancels it at once instead.",
                True,
            )
        why_not = "the default branch could not be read"
    # A forked wave's seat jobs run side by side: every one is stopped. One that finished
    # since it was listed answers 409 and is not counted.
    live = [r for r in live if await gh.cancel_workflow_run(repo, r.id)]
    if not live:
        return refused_reply(command, "the workflow run already finished."), False
    if RUN_ID.fullmatch(rid):
        await gh.delete_ref(repo, park_ref(rid))  # a park asked for before has no run left
        ctx.forget_park(repo, rid)
    which = "the runner" if len(live) == 1 else f"the {len(live)} runners"
    said = f"Stopped {which} of magi run `{rid}`; `/magi retry` resumes it."
    if not now:  # the run cannot be asked to park
        said += (
            f" (It was cancelled, not parked: {why_not}; the seats at work were ended and "
            "are asked again on retry.)"
        )
    return said, True


def _cannot_park(ctx: AppContext, run: Mapping[str, str], rid: str) -> str | None:
    """Why this run cannot be asked to park, or None when it can."""
    if ctx.serverless:
        return (
            "without a receiver nothing can answer a run's question whether to park "
            '(docs/action.md, "Without a receiver")'
        )
    if not ctx.public_url:
        return "the App has no `MAGI_PUBLIC_URL` for runners to ask"
    if not RUN_ID.fullmatch(rid) or run.get("park") != "1":
        return (
            "this run was started without a park channel (before the App had "
            "`MAGI_PUBLIC_URL`, or by a workflow older than its `park` input: "
            "`magi init --github --force` updates it)"
        )
    return None


async def _fold(gh: GitHubPort, repo: Repo, command: Command, run_id: str) -> tuple[str, bool]:
    """``/magi fold``: the App deletes the run's candidate branches itself (it may write
    refs; no runner is needed), unless the run's PR is still open: merging or closing the
    PR folds it then, and deleting its head branch now would close it unreviewed."""
    prefix = f"heads/magi/{run_id}/"
    refs, _ = refs_under(await gh.matching_refs(repo, prefix), prefix)
    heads = {r.ref.removeprefix("refs/heads/") for r in refs}
    # A PR counts only from a head in this repository: a stranger's fork PR from a branch
    # named magi/<run>/A has no say over this repository's branches.
    open_prs = [p for p in await gh.list_pulls(repo) if p.head.ref in heads and same_repo(p)]
    if open_prs:
        why = (
            f"its pull request #{open_prs[0].number} is open: merging or closing it folds the run."
        )
        return refused_reply(command, why), False
    deleted, _ = await delete_under(gh, repo, prefix)
    if not deleted:
        return f"magi run `{run_id}` has no branches left to fold.", True
    return f"Folded magi run `{run_id}`: deleted {len(deleted)} branch(es).", True


async def _report(
    gh: GitHubPort, repo: Repo, config: Config, verb: Verb, issue: int, run: Mapping[str, str]
) -> str:
    """``/magi status``: the run on this issue and its runner, as GitHub has them (its
    latest stage's, when it went from runner to runner)."""
    run_id = run.get("run", "")
    runs = await _runs_of(gh, repo, config, run)
    current = runs[0] if runs else None
    state = (
        f"{current.status}" + (f" ({current.conclusion})" if current.conclusion else "")
        if current
        else "not known to GitHub"
    )
    where = f" [workflow run]({current.html_url})" if current and current.html_url else ""
    return f"magi run `{run_id}` on #{issue}: runner {state}.{where}"
