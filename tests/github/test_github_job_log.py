"""A job log's tail over the HTTP double: a 302 followed by hand, no token or URL leaked."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from github_helpers import REPO, go, setup
from magi.github.port import GitHubError
from magi.testing.github import FakeGitHub
from magi.testing.github_routes import DOWNLOAD_HOST, SIGNATURE

LOG = "".join(f"2026-12-01T10:00:{n % 60:02d}Z step line {n}\n" for n in range(5000))


def test_the_tail_comes_through_the_redirect_without_the_token(caplog):
    """Only the last max_bytes; the download host gets no Authorization; no log line,
    at any level, carries the signed URL."""
    caplog.set_level(logging.DEBUG)
    fake, double, auth, _ = setup()
    fake.world(REPO).job_logs[42] = LOG + "Error: the real failure\n"
    tail = go(auth, lambda gh: gh.job_log_tail(REPO, 42, max_bytes=1000))
    assert tail is not None
    assert tail.endswith("Error: the real failure\n")
    assert len(tail.encode()) == 1000
    assert ("GET", f"/repos/{REPO.full_name}/actions/jobs/42/logs") in double.requests
    (down,) = double.downloads
    assert down.url.host == DOWNLOAD_HOST
    assert "authorization" not in {k.lower() for k in down.headers}
    assert caplog.records  # httpx did log the API request
    assert not [r for r in caplog.records if SIGNATURE in r.getMessage()]
    assert not [r for r in caplog.records if DOWNLOAD_HOST in r.getMessage()]
    double.assert_clean()


def test_no_log_kept_is_none_and_the_fake_agrees():
    """404 (no such job, or its log expired) is an answer, not a failure."""
    _fake, _double, auth, _ = setup()
    assert go(auth, lambda gh: gh.job_log_tail(REPO, 7, max_bytes=100)) is None
    plain = FakeGitHub()
    plain.world(REPO).job_logs[7] = "abc\ndef\n"
    assert asyncio.run(plain.job_log_tail(REPO, 7, max_bytes=4)) == "def\n"
    assert asyncio.run(plain.job_log_tail(REPO, 8, max_bytes=4)) is None


def test_a_redirect_off_https_is_not_followed_and_the_error_names_no_url():
    """A Location that is not https is refused; the error names the job, not the URL."""
    fake, double, auth, _ = setup()
    fake.world(REPO).job_logs[42] = LOG
    evil = f"http://{DOWNLOAD_HOST}/actions-results/x?{SIGNATURE}"
    double.inject("GET", r"/actions/jobs/42/logs$", 302, headers={"Location": evil})
    with pytest.raises(GitHubError, match="job 42's log") as err:
        go(auth, lambda gh: gh.job_log_tail(REPO, 42, max_bytes=100))
    assert SIGNATURE not in str(err.value)
    assert double.downloads == []


def test_a_malformed_redirect_is_a_github_error_naming_the_job_not_the_url(monkeypatch):
    """httpx.URL raises InvalidURL (not an HTTPError) on a Location it cannot parse: that is
    a GitHubError naming the job, never a traceback quoting the signed URL. (httpx 0.28's
    client pre-parses Location for ``next_request``; that is its detail, not relied on.)"""
    monkeypatch.setattr(httpx.AsyncClient, "_build_redirect_request", lambda *_: None)
    fake, double, auth, _ = setup()
    fake.world(REPO).job_logs[42] = LOG
    bad = f"https://[::1/actions-results/x?{SIGNATURE}"
    double.inject("GET", r"/actions/jobs/42/logs$", 302, headers={"Location": bad})
    with pytest.raises(GitHubError, match="job 42's log") as err:
        go(auth, lambda gh: gh.job_log_tail(REPO, 42, max_bytes=100))
    assert SIGNATURE not in str(err.value)
    assert err.value.__cause__ is None
    assert err.value.__suppress_context__
    assert double.downloads == []
