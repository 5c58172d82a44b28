"""FakeGitHub with what publish needs on top: issues filed, labels kept, drafts flipped.

The App's ``FakeGitHub`` records label calls; publish also reads labels back (to take off an
ending's label that no longer holds), files follow-up issues and turns drafts ready, so this
subclass keeps that state too and answers the ``magi.action.port.PublishPort`` extras.
"""

from __future__ import annotations

from collections.abc import Sequence

from magi.github.models import Issue, Label, PullRequest, Repo, User
from magi.testing.github import APP_LOGIN, FakeGitHub

__all__ = ["WRITES", "FakePublishGitHub"]

# The calls that change GitHub: "publish twice changes nothing" means none of these twice.
WRITES = frozenset(
    {
        "create_comment",
        "update_comment",
        "add_labels",
        "remove_label",
        "create_pull",
        "update_pull",
        "set_draft",
        "create_check_run",
        "update_check_run",
        "create_issue",
        "create_ref",
        "update_ref",
        "delete_ref",
        "close_issue",
    }
)


class FakePublishGitHub(FakeGitHub):
    """FakeGitHub that also keeps labels, files issues and flips drafts."""

    async def add_labels(self, repo: Repo, number: int, labels: Sequence[str]) -> None:
        await super().add_labels(repo, number, labels)
        w = self.world(repo)
        issue = w.issues.get(number) or Issue(number=number)
        have = [lb.name for lb in issue.labels]
        names = have + [n for n in labels if n not in have]
        w.issues[number] = issue.model_copy(update={"labels": [Label(name=n) for n in names]})

    async def remove_label(self, repo: Repo, number: int, name: str) -> None:
        await super().remove_label(repo, number, name)
        w = self.world(repo)
        issue = w.issues.get(number)
        if issue is not None:
            kept = [lb for lb in issue.labels if lb.name != name]
            w.issues[number] = issue.model_copy(update={"labels": kept})

    async def create_issue(
        self, repo: Repo, *, title: str, body: str, labels: Sequence[str]
    ) -> Issue:
        w = await self._enter("create_issue", repo, title=title, body=body, labels=list(labels))
        number = max([*w.pulls, *w.issues, 0]) + 1
        issue = Issue(
            number=number,
            title=title,
            body=body,
            labels=[Label(name=n) for n in labels],
            user=User(login=APP_LOGIN, type="Bot"),
        )
        w.issues[number] = issue
        return issue

    async def list_issues(self, repo: Repo, *, labels: Sequence[str]) -> list[Issue]:
        w = await self._enter("list_issues", repo, labels=list(labels))
        want = set(labels)
        return [i for i in w.issues.values() if want <= {lb.name for lb in i.labels}]

    async def set_draft(self, repo: Repo, number: int, draft: bool) -> PullRequest:
        w = await self._enter("set_draft", repo, number=number, draft=draft)
        w.pulls[number] = w.pulls[number].model_copy(update={"draft": draft})
        return w.pulls[number]

    def labels_on(self, repo: Repo | str, number: int) -> list[str]:
        issue = self.world(repo).issues.get(number)
        return [lb.name for lb in issue.labels] if issue else []
