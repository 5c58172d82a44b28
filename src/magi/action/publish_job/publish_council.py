"""``magi action publish-council``: the matrix as one comment, the ``magi council`` check run.

No agent runs here. The record comes from the agents job and is validated; the thread
(comment id, pull request head) comes from the read-only task job, so an agent cannot point
the comment or the check run elsewhere. The matrix (``magi.council.render.markdown``) passes
``magi.core.threads.posting.gate`` (no agent named before the verdict, secrets, mentions, the
65,536 limit) and magi's marker is added after it. The comment is found again by its marker
(one per command comment), so publishing twice edits rather than repeats; the check run goes
on the pull request's head (an issue gets the comment only), its conclusion
``core.council.rules.check_conclusion``: success only when passed; action_required when the
council decided nothing or approved with conditions (they are listed in the check's
summary, and its details link is the matrix comment); failure when rejected, when no
council sat or when no verdict exists. Neutral never: GitHub lets it pass a required check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from magi.action.agents_job.council import MANIFEST, RECORD, Inputs, Manifest, policy_of
from magi.action.env import ActionEnv
from magi.core.council.rules import check_conclusion
from magi.core.council.surface import CHECK_NAME, MARKER
from magi.core.threads.posting import LIMIT, Policy, gate, inert
from magi.council.render import comment_text
from magi.errors import TamperedArtifact
from magi.github.models import Comment
from magi.github.port import GitHubPort
from magi.state.council import CouncilRun
from magi.state.migrations import migrate

__all__ = ["Published", "publish_council", "publish_council_missing", "read_council"]


@dataclass(frozen=True)
class Published:
    comment: int
    conclusion: str | None  # None: no check run (an issue)


def read_council(where: Path, inputs: Inputs) -> CouncilRun:
    """The agents job's record, validated and checked against what the task job read."""
    try:
        manifest = Manifest.model_validate_json((where / MANIFEST).read_text(encoding="utf-8"))
        rec = CouncilRun.model_validate(migrate(json.loads((where / RECORD).read_text("utf-8"))))
    except FileNotFoundError as e:
        raise TamperedArtifact(f"the artifact has no {Path(str(e.filename)).name}") from None
    except (ValidationError, ValueError) as e:
        raise TamperedArtifact(f"the artifact's council record does not validate: {e}") from None
    wanted = (inputs.issue, inputs.comment, inputs.command)
    if (manifest.issue, manifest.comment, manifest.command) != wanted or manifest.run != rec.id:
        raise TamperedArtifact(
            f"the artifact is for #{manifest.issue} comment {manifest.comment}, not this command"
        )
    if rec.question.source != f"issue:{inputs.issue}":
        raise TamperedArtifact(f"the council record is not about #{inputs.issue}")
    return rec


def _ours(env: ActionEnv, c: Comment) -> bool:
    return env.ours(c)


async def _upsert(port: GitHubPort, env: ActionEnv, inputs: Inputs, body: str) -> Comment:
    for c in await port.list_comments(env.repo, inputs.issue):
        if _ours(env, c) and env.seal.find([c.body], MARKER, comment=str(inputs.comment)):
            return c if c.body == body else await port.update_comment(env.repo, c.id, body)
    return await port.create_comment(env.repo, inputs.issue, body)


async def _check(
    port: GitHubPort,
    env: ActionEnv,
    head: str,
    conclusion: str,
    summary: str,
    details: str | None,
) -> None:
    for c in await port.list_check_runs(env.repo, head):
        if c.name == CHECK_NAME:
            # Another review's comment is another details link (and maybe other conditions).
            if (c.status, c.conclusion, c.details_url) != ("completed", conclusion, details):
                await port.update_check_run(
                    env.repo,
                    c.id,
                    status="completed",
                    conclusion=conclusion,
                    summary=summary,
                    details_url=details,
                )
            return
    await port.create_check_run(
        env.repo,
        name=CHECK_NAME,
        head_sha=head,
        status="completed",
        conclusion=conclusion,
        summary=summary,
        details_url=details,
    )


def conditions_of(rec: CouncilRun) -> list[str]:
    """The conditions a conditional review must see met, for the check's summary."""
    if rec.verdict != "conditional" or rec.review is None:
        return []
    return list(rec.review.conditions)


def _summary(headline: str, conditions: list[str], policy: Policy) -> str:
    text = headline
    if conditions:
        # A seat's words: one inert line each, as in the matrix.
        listed = "\n".join(f"- {inert(c, 500)}" for c in conditions)
        text += (
            "\n\nNot passing until these conditions are met and a new `/magi review` "
            f"passes without conditions:\n\n{listed}"
        )
    return gate(text, policy).text


async def _post(
    port: GitHubPort,
    env: ActionEnv,
    inputs: Inputs,
    text: str,
    policy: Policy,
    conclusion: str,
    conditions: list[str] | None = None,
) -> Published:
    mark = env.seal.marker(MARKER, comment=inputs.comment, issue=inputs.issue)
    # The marker comes after the gate (which would escape it): leave room for it.
    room = replace(policy, limit=min(policy.limit, LIMIT) - len(mark) - 2)
    body = gate(text, room).text.rstrip("\n") + "\n\n" + mark
    posted = await _upsert(port, env, inputs, body)
    if inputs.head_sha is None:
        return Published(posted.id, None)
    headline = text.splitlines()[0].lstrip("# ") if text else ""
    summary = _summary(headline, conditions or [], policy)
    # action_required points a person somewhere: the matrix comment, else the job's log.
    details = posted.html_url or env.job_url or None
    await _check(port, env, inputs.head_sha, conclusion, summary, details)
    return Published(posted.id, conclusion)


async def publish_council(
    *, port: GitHubPort, env: ActionEnv, inputs: Inputs, rec: CouncilRun
) -> Published:
    """Post the matrix once per command comment and set the check run on a PR's head."""
    conclusion = check_conclusion(rec.verdict) if rec.verdict is not None else "failure"
    text = comment_text(rec, env.job_url or "")
    if rec.mode == "research":
        # A research report decides nothing about the pull request: "passed" means only that
        # two seats answered, so it must not turn a required `magi council` check green.
        inputs = replace(inputs, head_sha=None)
    published = await _post(port, env, inputs, text, policy_of(rec), conclusion, conditions_of(rec))
    env.set_output("run-id", rec.id)
    env.set_output("status", rec.verdict or rec.status.value)
    return published


async def publish_council_missing(
    *, port: GitHubPort, env: ActionEnv, inputs: Inputs, why: str
) -> Published:
    """The agents job left no council: say so (and fail the check), never end silently."""
    log = f"\n\nLog: {env.job_url}" if env.job_url else ""
    text = f"### magi council: no result\n\nThe council left no result: {why}{log}\n"
    return await _post(port, env, inputs, text, Policy(), "failure")
