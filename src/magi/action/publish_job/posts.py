"""What publish writes on GitHub, each write made only when GitHub holds something else.

``Poster`` gates every text (``magi.core.threads.posting``) and adds magi's marker after the gate;
it finds magi's own comments by marker and author, so a person's comment quoting a marker
is never edited. Each helper reads first and writes only a difference: publishing twice
changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from magi.action.env import ActionEnv
from magi.action.publish_job.render import ending, gate_of, review_of
from magi.core.threads import markers
from magi.core.threads.posting import CHECK_SUMMARY_LIMIT, Policy, gate
from magi.github.models import Comment, Issue, PullRequest
from magi.github.port import GitHubError, GitHubPort
from magi.model.run import Run, RunStatus

__all__ = [
    "CHECK_NAME",
    "ENDING_LABELS",
    "FOLLOW_UP",
    "TRACKING",
    "Poster",
    "attempts_spent",
    "check_run",
    "follow_ups",
    "green",
    "pull",
    "ready_early",
    "set_labels",
    "unadopted_minor",
]

FOLLOW_UP = "magi:follow-up"
FOLLOW_UPS_MAX = 5
CHECK_NAME = "magi"
TRACKING = markers.TRACKING
ENDING_LABELS = {
    RunStatus.VERIFIED_NOOP: "magi:noop",
    RunStatus.STALLED: "magi:stalled",
    RunStatus.HELD: "magi:held",
}


@dataclass
class Poster:
    """Posts for one issue of one repository, under one run's posting policy."""

    port: GitHubPort
    env: ActionEnv
    issue: int
    policy: Policy

    def post(self, text: str, kind: str, **attrs: str | int) -> str:
        """``text`` through the gate, then magi's marker (which the gate would escape)."""
        return (
            gate(text, self.policy).text.rstrip("\n") + "\n\n" + self.env.seal.marker(kind, **attrs)
        )

    def ours(self, c: Comment) -> bool:
        """Whether magi wrote ``c`` (``ActionEnv.ours``: its App's bot login)."""
        return self.env.ours(c)

    async def upsert_comment(
        self,
        number: int,
        body: str,
        kind: str,
        *,
        carry: Callable[[str, str], str] | None = None,
        **match: str,
    ) -> Comment:
        """The comment carrying ``kind`` marker with ``match`` edited in place, or created.

        ``carry(old, new)`` keeps a part of the old body another writer owns (the App's
        jobs part of the tracking comment).
        """
        repo = self.env.repo
        for c in await self.port.list_comments(repo, number):
            if self.ours(c) and self.env.seal.find([c.body], kind, **match):
                if carry is not None:
                    body = carry(c.body, body)
                if c.body == body:
                    return c
                return await self.port.update_comment(repo, c.id, body)
        return await self.port.create_comment(repo, number, body)


def green(run: Run) -> bool:
    """Review and gate both green: the PR may leave draft."""
    review, gate_ = review_of(run), gate_of(run)
    review_ok = review is not None and review.outcome in ("clean", "skipped")
    gate_ok = gate_ is not None and gate_.ran and gate_.passed is not False
    return run.status is RunStatus.READY and review_ok and gate_ok


def unadopted_minor(run: Run) -> list[tuple[str, str, str]]:
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


async def follow_ups(job: Poster, run: Run) -> list[int]:
    repo = job.env.repo
    filed: dict[str, int] = {}
    for issue in await job.port.list_issues(repo, labels=[FOLLOW_UP]):
        for fields in job.env.seal.find([issue.body or ""], "follow-up", run=run.id):
            filed[fields.get("finding", "")] = issue.number
    numbers = list(filed.values())
    for fid, title, detail in unadopted_minor(run):
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


# GitHub has no draft PRs in private repositories on the Free and Pro plans, and says so
# with 422 and these words: the PR then opens ready and says it is not reviewed yet, and
# the `magi` check stays in progress until it is (``ready_early``), so neither a person's
# merge button under a required check nor magi's own `merge` lands it before review.
# https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request
DRAFTS_REFUSED = "draft pull requests are not supported"
NOT_YET_REVIEWED = (
    "**Not yet reviewed.** This repository cannot hold draft pull requests (GitHub has none "
    "in private repositories on the Free and Pro plans), so this pull request is open before "
    "magi's review and gate are green. The `magi` check stays in progress until they are: "
    "do not merge it before."
)


def _drafts_refused(exc: GitHubError) -> bool:
    return exc.status == 422 and DRAFTS_REFUSED in exc.message.lower()


def ready_early(run: Run, pr: PullRequest) -> bool:
    """An open PR that is not a draft before review and gate are green (drafts refused)."""
    return pr.state == "open" and not pr.draft and not green(run)


def _noted(body: str) -> str:
    """``body`` with the not-yet-reviewed note before magi's marker (the last paragraph)."""
    text, sep, marker = body.rpartition("\n\n")
    return f"{text}\n\n{NOT_YET_REVIEWED}{sep}{marker}" if sep else f"{NOT_YET_REVIEWED}\n\n{body}"


async def pull(job: Poster, run: Run, branch: str, body: str, title: str) -> PullRequest:
    repo = job.env.repo
    draft = not green(run)
    found = [
        p
        for p in await job.port.list_pulls(repo, state="all", head=f"{repo.owner}:{branch}")
        if p.head.ref == branch
    ]
    if not found:
        try:
            return await job.port.create_pull(
                repo, title=title, head=branch, base=run.base, body=body, draft=draft
            )
        except GitHubError as exc:
            if not (draft and _drafts_refused(exc)):
                raise
        return await job.port.create_pull(
            repo, title=title, head=branch, base=run.base, body=_noted(body), draft=False
        )
    pr = found[0]
    said = pr.body == _noted(body)  # a draft refused before: not asked again
    if pr.draft != draft and pr.state == "open" and not said:
        try:
            pr = await job.port.set_draft(repo, pr.number, draft)
        except GitHubError as exc:
            if not (draft and _drafts_refused(exc)):
                raise
    if ready_early(run, pr):
        body = _noted(body)
    if pr.body != body or pr.title != title:
        pr = await job.port.update_pull(repo, pr.number, title=title, body=body)
    return pr


async def check_run(job: Poster, run: Run, head: str, *, early: bool = False) -> None:
    """The ``magi`` check on ``head``; ``early`` (a PR open before review, ``ready_early``)
    keeps it in progress unless the run failed, so a required check holds the merge."""
    repo = job.env.repo
    conclusion: str | None = {
        RunStatus.READY: "success",
        RunStatus.STALLED: "neutral",  # a provider's rate limit must not paint the PR red
        RunStatus.HELD: "neutral",
        RunStatus.VERIFIED_NOOP: "neutral",
        RunStatus.HANDED_OFF: "neutral",  # on its way to another runner
    }.get(run.status, "failure")
    status, text = "completed", ending(run)
    if early and conclusion != "failure":
        status, conclusion = "in_progress", None
        text = f"{NOT_YET_REVIEWED}\n\n{text}"
    summary = gate(text, replace(job.policy, limit=CHECK_SUMMARY_LIMIT)).text
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


async def set_labels(job: Poster, issue: Issue, wanted: set[str]) -> None:
    have = {lb.name for lb in issue.labels}
    ours = set(ENDING_LABELS.values())
    add = sorted(wanted - have)
    if add:
        await job.port.add_labels(job.env.repo, job.issue, add)
    for name in sorted((have & ours) - wanted):
        await job.port.remove_label(job.env.repo, job.issue, name)


def attempts_spent(job: Poster, comments_: Sequence[Comment]) -> tuple[int, str]:
    state = job.env.seal.latest(
        [c.body for c in comments_ if job.ours(c)], TRACKING, issue=str(job.issue)
    )
    if state is None:
        return 0, ""
    return int(state.get("spent", "0") or 0), state.get("counted", "")
