"""Secondary rate limits in the one retry layer: 403 and 429, with and without headers,
and the content-creation limit's long waits, waited out and said."""

from __future__ import annotations

import asyncio
import logging
import time

import httpx
import pytest
from githubkit import GitHub, TokenAuthStrategy

from github_helpers import REPO, Sleeps, go, setup
from magi.github.githubkit_port import GitHubKitPort, annotate
from magi.github.port import GitHubError
from magi.github.retry import SECONDARY_MAX
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP

SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}
COMMENTS = r"/issues/1/comments$"


def test_a_429_without_retry_after_is_waited_out_not_called_permanent():
    """GitHub answers a secondary limit with 429 and no header: a minute, then again."""
    fake, double, auth, sleeps = setup()
    double.inject("POST", COMMENTS, 429, body=SECONDARY)
    go(auth, lambda port: port.create_comment(REPO, 1, "hello"))
    assert sleeps.waits == [60.0]
    assert fake.comments_on(REPO, 1) == ["hello"]


def test_a_secondary_limit_that_persists_waits_longer_each_time():
    """Without a header, each further refusal doubles the wait (GitHub's advice)."""
    _fake, double, auth, sleeps = setup()
    double.inject("POST", COMMENTS, 429, body=SECONDARY, times=2)
    double.inject("POST", COMMENTS, 403, body=SECONDARY, times=1)
    go(auth, lambda port: port.create_comment(REPO, 1, "x"))
    assert sleeps.waits == [60.0, 120.0, 240.0]


def test_the_content_creation_limits_long_wait_is_waited_out_past_the_cap(caplog):
    """Retry-After of 20 minutes on a write: longer than the 120 s cap, waited all the
    same, and the wait said in the log with the request it holds."""
    fake, double, auth, sleeps = setup()
    double.inject("POST", COMMENTS, 403, headers={"retry-after": "1200"}, body=SECONDARY)
    with caplog.at_level(logging.WARNING, logger="magi.github"):
        go(auth, lambda port: port.create_comment(REPO, 1, "x"))
    assert sleeps.waits == [1200.0]
    assert fake.comments_on(REPO, 1) == ["x"]
    said = [r.getMessage() for r in caplog.records if r.name == "magi.github"]
    assert said == [
        "GitHub's secondary rate limit on POST /repos/Codertocat/Hello-World/issues/1/comments:"
        " waiting 1200 s (try 2 of 5)"
    ]


def test_a_secondary_limit_named_by_reset_waits_until_the_reset():
    """x-ratelimit-remaining 0 with a secondary message: wait until x-ratelimit-reset."""
    _fake, double, auth, sleeps = setup()
    reset = int(time.time()) + 600
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}
    double.inject("POST", COMMENTS, 403, headers=headers, body=SECONDARY)
    go(auth, lambda port: port.create_comment(REPO, 1, "x"))
    [wait] = sleeps.waits
    assert 0 < wait <= 600  # what is left of the ten minutes, past the 120 s cap


def test_a_secondary_wait_past_an_hour_is_a_failure_to_report():
    """Even a secondary limit has an end: past SECONDARY_MAX nothing is slept."""
    _fake, double, auth, sleeps = setup()
    after = str(int(SECONDARY_MAX) + 1)
    double.inject("POST", COMMENTS, 429, headers={"retry-after": after}, body=SECONDARY)
    with pytest.raises(GitHubError, match="secondary limit"):
        go(auth, lambda port: port.create_comment(REPO, 1, "x"))
    assert sleeps.waits == []


def test_a_long_wait_is_handed_to_notice_and_a_short_one_is_not():
    """``notice`` hears of a wait of the cap or more (the job's annotation), not of 7 s."""
    fake = FakeGitHub()
    fake.add_issue(REPO, 1, "t")
    double = GitHubHTTP(fake)
    double.inject("POST", COMMENTS, 403, headers={"retry-after": "7"}, body=SECONDARY)
    double.inject("POST", COMMENTS, 429, headers={"retry-after": "900"}, body=SECONDARY)
    heard: list[tuple[float, str]] = []

    async def notice(seconds: float, words: str) -> None:
        heard.append((seconds, words))

    gh = GitHub(
        TokenAuthStrategy("ghs_test"),
        base_url="https://api.github.test/",
        async_transport=httpx.MockTransport(double),
        auto_retry=False,
        http_cache=False,
    )
    sleeps = Sleeps()
    port = GitHubKitPort(gh, sleep=sleeps, notice=notice)
    asyncio.run(port.create_comment(REPO, 1, "x"))
    assert sleeps.waits == [7.0, 900.0]
    assert [s for s, _ in heard] == [900.0]
    assert "waiting 900 s" in heard[0][1]


def test_the_jobs_notice_is_a_warning_annotation(capsys):
    """In a job the long wait is a workflow warning (shown on the run), not an issue write."""
    asyncio.run(annotate(900.0, "GitHub's secondary rate limit on POST /x: waiting 900 s"))
    assert capsys.readouterr().out == (
        "::warning title=GitHub rate limit::GitHub's secondary rate limit on POST /x: "
        "waiting 900 s\n"
    )


def test_a_ref_github_failed_to_write_is_tried_again():
    """POST git/refs answers 422 "Reference update failed" now and then: tried again."""
    fake, double, auth, sleeps = setup()
    failed = {"message": "Reference update failed"}
    double.inject("POST", r"/git/refs$", 422, body=failed, times=2)
    made = go(auth, lambda port: port.create_ref(REPO, "refs/magi/claims/issue-1", "a" * 40))
    assert made is True
    assert fake.world(REPO).refs["magi/claims/issue-1"] == "a" * 40
    assert sleeps.waits == [1.0, 2.0]


def test_a_ref_github_keeps_failing_to_write_is_a_transient_error_not_a_lost_race():
    """Five failures in a row: a transient GitHubError naming GitHub's words (never False,
    which would read as another creator holding the ref)."""
    _fake, double, auth, _sleeps = setup()
    failed = {"message": "Reference update failed"}
    double.inject("POST", r"/git/refs$", 422, body=failed, times=5)
    with pytest.raises(GitHubError, match="Reference update failed") as info:
        go(auth, lambda port: port.create_ref(REPO, "refs/magi/claims/issue-1", "a" * 40))
    assert info.value.transient


def test_a_burst_of_writes_past_the_content_creation_limit_all_land():
    """The double holds GitHub's content-creation limit (here 5 writes a minute): twelve
    comments in a row are each waited out by the retry layer, none lost, none doubled."""
    from github_helpers import API, pem
    from magi.github.auth import AppAuth

    fake = FakeGitHub()
    fake.add_issue(REPO, 1, "t")
    double = GitHubHTTP(fake, content_limit=5)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        double.advance(seconds)

    auth = AppAuth("1", pem(), API, async_transport=httpx.MockTransport(double), sleep=sleep)

    async def burst(port: object) -> None:
        for n in range(12):
            await port.create_comment(REPO, 1, f"c{n}")  # type: ignore[attr-defined]

    go(auth, burst)  # type: ignore[arg-type]
    assert fake.comments_on(REPO, 1) == [f"c{n}" for n in range(12)]
    assert waits == [60.0, 60.0]  # two windows of five waited out, the third takes two
    double.assert_clean()
