"""``/magi council <question>`` and ``/magi review`` over the App: dispatched once, or refused."""

from __future__ import annotations

import asyncio

from github_helpers import REPO, deliver, issue_comment, make_app, pr_comment, world
from magi.testing.github import FakeGitHub


def say(fake: FakeGitHub, payload: dict[str, object], number: int = 1) -> list[str]:
    before = len(fake.comments_on(REPO, number))
    asyncio.run(deliver(make_app(fake), "issue_comment", payload))
    return fake.comments_on(REPO, number)[before:]


def test_a_writers_council_dispatches_once_with_the_comment_id() -> None:
    """The question stays in the comment: the runner gets its id, not its text."""
    fake = world(FakeGitHub())
    payload = issue_comment("/magi council Should we ship TOML or YAML?", comment_id=6901)
    assert say(fake, payload) == []
    say(fake, payload)  # redelivered: answered once
    (dispatch,) = fake.world(REPO).dispatches
    assert dispatch["inputs"] == {
        "run_id": "",
        "issue": "1",
        "command": "council",
        "comment": "6901",
        "runner-labels": '["self-hosted", "magi"]',
    }
    assert "TOML" not in str(dispatch)
    assert [r for r in fake.world(REPO).reactions if r[0] == "comment" and r[2] == "+1"]


def test_a_readers_council_is_refused_with_a_reply() -> None:
    """Only writers convene a council; the reply quotes the command and says who may."""
    fake = world(FakeGitHub())
    fake.world(REPO).permissions["reader"] = "read"
    (reply,) = say(fake, issue_comment("/magi council Ship it?", login="reader"))
    assert "> /magi council Ship it?\n" in reply
    assert "write, maintain or admin" in reply
    assert fake.world(REPO).dispatches == []


def test_a_council_without_a_question_is_refused() -> None:
    """`/magi council` alone asks nothing: nothing is dispatched, the reply says what to write."""
    fake = world(FakeGitHub())
    (reply,) = say(fake, issue_comment("/magi council"))
    assert "no question" in reply
    assert fake.world(REPO).dispatches == []


def test_the_question_may_follow_on_the_lines_below() -> None:
    """A long question under the command line is a question."""
    fake = world(FakeGitHub())
    say(fake, issue_comment("/magi council\nShould the cache be per user\nor global?"))
    assert len(fake.world(REPO).dispatches) == 1


def test_review_on_a_pull_request_dispatches_with_the_pr_number() -> None:
    """`/magi review` on PR 7 is a review of PR 7's diff."""
    fake = world(FakeGitHub())
    say(fake, pr_comment("/magi review high", number=7, comment_id=5101), number=7)
    (dispatch,) = fake.world(REPO).dispatches
    assert dispatch["inputs"] == {
        "run_id": "",
        "issue": "7",
        "command": "review",
        "comment": "5101",
        "runner-labels": '["self-hosted", "magi"]',
    }


def test_review_on_an_issue_is_refused() -> None:
    """An issue has no diff to review."""
    fake = world(FakeGitHub())
    (reply,) = say(fake, issue_comment("/magi review"))
    assert "pull request" in reply
    assert fake.world(REPO).dispatches == []
