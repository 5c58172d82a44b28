"""Shared by several test modules (carried out of test_app_landing.py)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from github_helpers import NOW, REPO, SEAL, deliver, fixture, make_app, world
from magi.core.threads import markers
from magi.testing.github import FakeGitHub

SHA = "a" * 40


PR = 7


def scene(config: str = "", **pull: Any) -> FakeGitHub:
    fake = world(FakeGitHub())
    fake.now = NOW - timedelta(minutes=30)
    body = "Closes #1\n" + SEAL.marker(markers.PR, issue=1, run="r1")
    fake.add_pull(REPO, PR, "magi/r1/A", SHA, title="Fix spelling", body=body, **pull)
    w = fake.world(REPO)
    w.refs["heads/magi/r1/B"] = "b" * 40
    w.refs["magi/claims/issue-1"] = "0" * 40
    if config:
        w.files[("main", ".magi/config.toml")] = config
    return fake


def suite(sha: str = SHA) -> dict[str, Any]:
    p = fixture("check_suite.completed")
    p["check_suite"]["head_sha"] = sha
    p["check_suite"]["pull_requests"] = [{"number": PR}]
    return p


def wake(fake: FakeGitHub, sha: str = SHA) -> None:
    asyncio.run(deliver(make_app(fake), "check_suite", suite(sha)))


def pull_event(fake: FakeGitHub, action: str, **extra: Any) -> dict[str, Any]:
    p = fixture("pull_request.opened")
    p["action"] = action
    p["repository"]["full_name"] = REPO.full_name
    p["repository"]["default_branch"] = "main"
    p["pull_request"] = fake.world(REPO).pulls[PR].model_dump(mode="json")
    p.update(extra)
    return p


def dispatches(fake: FakeGitHub) -> list[dict[str, str]]:
    return [d["inputs"] for d in fake.world(REPO).dispatches]
