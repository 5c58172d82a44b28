"""``make bench`` (App part): the API budget, calls to GitHub per delivery and per flow.

The App runs in-process over a ``FakeGitHub`` that records every call, fed signed deliveries
built from GitHub's real example payloads (``tests/fixtures/github``):

1. 1,000 deliveries about no magi PR, the mix a busy repository's CI sends: check runs of
   other PRs (failed and green), a fork PR's check run from a branch named ``magi/...``,
   check suites naming no PR (forks), statuses, another workflow's runs and jobs. Goal: at
   most 10 calls per 1,000 (before the payload was read for it, about 2,000).
2. One ``magi`` label (claim, dispatch, acknowledgement) and one ``merge`` comment on a green
   magi PR (approval, gate, squash-merge, fold): calls each, no higher than their budgets
   (``tests/app/test_app_budget.py``). A publish's calls are held by
   ``tests/e2e/test_action_publish_kill.py`` (a competition is the slow part).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "github"
SECRET = "bench-secret"  # noqa: S105 - a throwaway secret, in-process
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----"
NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
REPO_ID = 186853002  # the fixtures' repository
UNRELATED = 1000
GOAL_PER_1000 = 10
LABEL_BUDGET = 13  # the label pins the issue text: one blob more (docs/app.md)
MERGE_BUDGET = 26  # 25, and the branch's rules read for the approval reply (docs/landing.md)


def _fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    data["repository"].update(full_name="Codertocat/Hello-World", default_branch="main")
    data["repository"]["id"] = REPO_ID
    return data


def _mix() -> list[tuple[str, dict[str, Any]]]:
    fork = _fixture("check_run.completed")
    fork["check_run"]["pull_requests"] = [
        {
            "number": 3,
            "head": {"ref": "magi/r1/A", "sha": "c" * 40, "repo": {"id": 999}},
            "base": {"ref": "main", "sha": "f" * 40, "repo": {"id": REPO_ID}},
        }
    ]
    lone = _fixture("status")
    lone["branches"] = []
    return [
        ("check_run", _fixture("check_run.completed")),
        ("check_run", _fixture("check_run.completed.success")),
        ("check_run", fork),
        ("check_suite", _fixture("check_suite.completed")),
        ("status", _fixture("status")),
        ("status", lone),
        ("workflow_run", _fixture("workflow_run.completed")),
        ("workflow_job", _fixture("workflow_job.completed")),
    ]


def _unrelated(n: int) -> Iterator[tuple[str, dict[str, Any]]]:
    mix = _mix()
    for i in range(n):
        event, payload = mix[i % len(mix)]
        yield event, copy.deepcopy(payload)


class App:
    """The App over a recording ``FakeGitHub``, fed signed deliveries in-process."""

    def __init__(self) -> None:
        from magi.app import Settings, create_app
        from magi.github.models import Repo
        from magi.github.port import GitHubPort
        from magi.testing.github import FakeGitHub

        self.fake = FakeGitHub()
        self.repo = Repo(owner="Codertocat", name="Hello-World")
        w = self.fake.world(self.repo)
        w.permissions["Codertocat"] = "write"
        self.fake.add_issue(self.repo, 1, "Spelling error in the README file", "commit")

        async def ports(installation: int | None, repo: Repo) -> GitHubPort:
            return self.fake

        settings = Settings(  # the fake writes as magi-app[bot]
            app_id="1", private_key=PEM, webhook_secret=SECRET, app_slug="magi-app"
        )
        self.app = create_app(settings, ports=ports, clock=lambda: NOW, sleep=_no_sleep)
        logging.getLogger("magi.app").setLevel(logging.WARNING)  # count calls, not log lines
        self.sent = 0

    async def deliver(self, event: str, payload: dict[str, Any]) -> None:
        from githubkit.webhooks import sign

        body = json.dumps(payload).encode()
        self.sent += 1
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": f"bench-{self.sent}",
            "X-Hub-Signature-256": sign(SECRET, body),
            "Content-Type": "application/json",
        }
        transport = httpx.ASGITransport(app=self.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            answer = await client.post("/webhook", content=body, headers=headers)
        if answer.status_code not in (200, 202):
            raise SystemExit(f"{event}: the App answered {answer.status_code}")


async def _no_sleep(seconds: float) -> None:
    """The App's waits (none of the flows measured should wait) are not slept."""


def _magi_pull(app: App) -> None:
    """A green magi PR #7 of run r1, for issue 1, as publish leaves it."""
    from magi.core.threads import markers
    from magi.core.threads.markers import Seal

    fake, repo = app.fake, app.repo
    fake.now = NOW - timedelta(minutes=30)
    body = "Closes #1\n" + Seal.from_private_key(PEM).marker(markers.PR, issue=1, run="r1")
    fake.add_pull(repo, 7, "magi/r1/A", "a" * 40, title="Fix spelling", body=body)
    fake.world(repo).refs["magi/claims/issue-1"] = "0" * 40
    fake.set_check(repo, "a" * 40, "ci", "completed", "success")


def _merge_comment() -> dict[str, Any]:
    p = _fixture("issue_comment.created.pull_request")
    p["issue"]["number"] = 7
    p["comment"].update({"body": "merge", "id": 5001, "created_at": "2026-01-01T11:59:00Z"})
    p["comment"]["user"].update({"login": "Codertocat", "type": "User"})
    p["sender"].update({"login": "Codertocat", "type": "User"})
    return p


async def measure() -> dict[str, int]:
    """Calls per 1,000 unrelated deliveries, per label and per merge."""
    quiet = App()
    for event, payload in _unrelated(UNRELATED):
        await quiet.deliver(event, payload)
    unrelated = len(quiet.fake.calls) * 1000 // UNRELATED
    label = App()
    labeled = _fixture("issues.labeled")
    labeled["label"]["name"] = "magi"
    await label.deliver("issues", labeled)
    merge = App()
    _magi_pull(merge)
    comment = _merge_comment()
    merge.fake.keep_comment(  # GitHub holds the comment before it sends the delivery
        merge.repo, 7, comment_id=5001, body="merge", login="Codertocat", created_at=NOW
    )
    await merge.deliver("issue_comment", comment)
    if not merge.fake.world(merge.repo).merges:
        raise SystemExit("the merge flow did not merge: the bench measures nothing")
    return {"unrelated": unrelated, "label": len(label.fake.calls), "merge": len(merge.fake.calls)}


def checks() -> list[tuple[str, bool]]:
    got = asyncio.run(measure())
    return [
        (
            f"API calls per 1,000 deliveries about no magi PR: {got['unrelated']} "
            f"(goal <= {GOAL_PER_1000})",
            got["unrelated"] <= GOAL_PER_1000,
        ),
        (
            f"API calls per label {got['label']} (budget {LABEL_BUDGET}), per merge "
            f"{got['merge']} (budget {MERGE_BUDGET})",
            got["label"] <= LABEL_BUDGET and got["merge"] <= MERGE_BUDGET,
        ),
    ]


if __name__ == "__main__":
    for text, ok in checks():
        print(f"  {'ok  ' if ok else 'MISS'} {text}")
