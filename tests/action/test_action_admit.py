"""Without the App, the workflow admits an event by the App's rules (the same core functions)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from github_helpers import PEM, SEAL
from magi.action.gate_job.admit import admit

ISSUE = {"number": 7, "title": "t", "body": "b"}
WRITER = {"login": "maintainer", "type": "User"}


def labeled(name: str = "magi") -> dict[str, object]:
    return {"action": "labeled", "label": {"name": name}, "issue": ISSUE, "sender": WRITER}


def retry(body: str = "/magi retry") -> dict[str, object]:
    return {"action": "created", "comment": {"body": body}, "issue": ISSUE, "sender": WRITER}


def test_a_writers_label_admits_the_issue():
    """The label `magi` from a writer starts a run on that issue."""
    assert admit("issues", labeled(), "write", [], SEAL).issue == 7


@pytest.mark.parametrize("level", ["read", "triage", "none", None])
def test_only_writers_start_a_run(level):
    """Triage may label, but only write, maintain or admin start magi."""
    out = admit("issues", labeled(), level, [], SEAL)
    assert out.issue is None
    assert "only writers" in out.why


def test_another_label_starts_nothing():
    """Only the configured label counts."""
    assert admit("issues", labeled("bug"), "admin", [], SEAL).issue is None


def test_retry_must_be_a_command_line_not_a_quote():
    """`/magi retry` on its own line starts; quoted or in code it does not."""
    assert admit("issue_comment", retry(), "write", [], SEAL).issue == 7
    assert admit("issue_comment", retry("> /magi retry"), "write", [], SEAL).issue is None
    assert admit("issue_comment", retry("please retry"), "write", [], SEAL).issue is None


def test_a_pull_request_comment_or_a_bot_starts_nothing():
    """magi competes on issues, and never on its own (or another bot's) words."""
    pr = {**retry(), "issue": {**ISSUE, "pull_request": {"url": "x"}}}
    assert admit("issue_comment", pr, "write", [], SEAL).issue is None
    bot = {**retry(), "sender": {"login": "magi-app[bot]", "type": "Bot"}}
    assert admit("issue_comment", bot, "write", [], SEAL).issue is None


def test_an_issue_with_magis_pr_is_never_competed_again():
    """The tracking comment says a PR was opened: refused with its number."""
    comments = [
        {
            "body": "### magi\n" + SEAL.marker("tracking", issue=7, run="r", pr=12),
            "user": {"login": "magi-app[bot]", "type": "Bot"},
        }
    ]
    out = admit("issues", labeled(), "write", comments, SEAL)
    assert out.issue is None
    assert "#12" in out.why
    forged = [{**comments[0], "user": {"login": "someone", "type": "User"}}]
    assert admit("issues", labeled(), "write", forged, SEAL).issue == 7
    typed = [{**comments[0], "body": "<!-- magi:tracking issue=7 run=r pr=12 -->"}]
    assert admit("issues", labeled(), "write", typed, SEAL).issue == 7  # unsealed: not magi's


def test_a_dispatch_was_decided_by_the_app():
    """workflow_dispatch carries the issue the App admitted."""
    assert admit("workflow_dispatch", {"inputs": {"issue": "9"}}, None, [], SEAL).issue == 9


def test_admit_on_the_command_line_sets_the_step_output(tmp_path):
    """`magi action admit` reads the event file and writes issue= to $GITHUB_OUTPUT."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps(labeled()))
    out = tmp_path / "output"
    env = {"GITHUB_REPOSITORY": "o/r", "GITHUB_OUTPUT": str(out), "PATH": "/usr/bin:/bin"}
    env["MAGI_MARKER_KEY"] = PEM
    argv = [sys.executable, "-m", "magi", "action", "admit", "--event-name", "issues"]
    argv += ["--event-file", str(event), "--permission", "read"]
    res = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "::notice::magi does not start" in res.stdout
    assert out.read_text() == "issue=\n"
