"""Without a receiver, what the receive job says is true of that path: a `/magi stop`
cancels because there is no receiver to park the run, not because a setting of the
receiver's (`MAGI_PUBLIC_URL`) is missing; the App's server still names it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from github_helpers import (
    PEM,
    REPO,
    deliver,
    issue_comment,
    keep_delivered,
    labeled,
    make_app,
    world,
)
from magi.action.context import ActionContext
from magi.testing.cli import invoke
from magi.testing.github import FakeGitHub


def _receive(tmp_path: Path, fake: FakeGitHub, event: str, payload: dict) -> None:
    keep_delivered(fake, event, payload)
    path = tmp_path / f"{event}.json"
    path.write_text(json.dumps(payload))
    env = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "MAGI_GITHUB_TOKEN": "ghs_receive",
        "MAGI_APP_SLUG": "magi-app",
        "MAGI_MARKER_KEY": PEM,
    }
    argv = ["receive", "--event-name", event, "--event-file", str(path)]
    res = invoke(argv, env=env, obj=ActionContext(ports=lambda _u, _t: fake))
    assert res.exit_code == 0, res.output


def _stopped(tmp_path: Path, body: str) -> str:
    fake = world(FakeGitHub())
    _receive(tmp_path, fake, "issues", labeled())
    _receive(tmp_path, fake, "issue_comment", issue_comment(body))
    return fake.comments_on(REPO, 1)[-1]


def test_stop_without_a_receiver_says_why_it_cancels(tmp_path: Path) -> None:
    said = _stopped(tmp_path, "/magi stop")
    assert "It was cancelled, not parked: without a receiver nothing can answer" in said
    assert "MAGI_PUBLIC_URL" not in said


def test_a_stop_with_other_words_says_what_stop_does_here(tmp_path: Path) -> None:
    said = _stopped(tmp_path, "/magi stop later")
    assert "`/magi stop` cancels the run" in said
    assert "parks" not in said


def test_the_apps_server_still_names_its_setting() -> None:
    fake = world(FakeGitHub())
    app = make_app(fake)
    asyncio.run(deliver(app, "issues", labeled()))
    asyncio.run(deliver(app, "issue_comment", issue_comment("/magi stop")))
    assert "MAGI_PUBLIC_URL" in fake.comments_on(REPO, 1)[-1]


def test_a_dead_claim_is_said_to_be_the_receive_jobs(tmp_path: Path) -> None:
    """A claim left with no run (its receive job failed between the claim and the
    dispatch) is taken over after ten minutes, and the words blame the job, not a receiver."""
    fake = world(FakeGitHub())

    async def claim() -> str:
        tree = (await fake.get_git_commit(REPO, "0" * 40)).tree
        made = await fake.create_git_commit(
            REPO, message="magi: claim issue #1, taken (0)", tree=tree, parents=["0" * 40]
        )
        return made.sha

    fake.world(REPO).refs["magi/claims/issue-1"] = asyncio.run(claim())
    later = labeled()
    later["issue"]["updated_at"] = "2026-01-01T00:11:00Z"  # GitHub's clock: the label's
    _receive(tmp_path, fake, "issues", later)
    said = " ".join(fake.comments_on(REPO, 1))
    assert "the receive job failed before it started one" in said
    assert "receiver restarted" not in said


def test_the_help_says_what_stop_does_on_each_path(tmp_path: Path) -> None:
    """An unknown command gets the help: without a receiver its stop line says cancel."""
    said = _stopped(tmp_path, "/magi halt")
    stop = next(line for line in said.splitlines() if line.startswith("- `/magi stop`"))
    assert "cancel the run" in stop
    assert "park the run" not in stop
    fake = world(FakeGitHub())
    app = make_app(fake)
    asyncio.run(deliver(app, "issue_comment", issue_comment("/magi halt")))
    assert "- `/magi stop`: park the run" in fake.comments_on(REPO, 1)[-1]
