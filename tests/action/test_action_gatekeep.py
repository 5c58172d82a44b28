"""Without the App, the workflow claims issues and runs the App's merge gate, over HTTP."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from githubkit import GitHub, TokenAuthStrategy

from github_helpers import NOW, PEM, REPO, SEAL, fixture, keep_delivered, pr_comment
from magi.action.context import ActionContext
from magi.action.gate_job.gatekeep import merge_event
from magi.core.threads import markers
from magi.github.githubkit_port import GitHubKitPort
from magi.testing.cli import invoke
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = (ROOT / "workflows" / "magi.yml").read_text()
SHA = "a" * 40
PR = 7
SLUG = "magi-app"  # FakeGitHub's comments are magi-app[bot]'s


def scene() -> tuple[FakeGitHub, GitHubHTTP]:
    fake = FakeGitHub()
    fake.now = NOW - timedelta(minutes=30)
    fake.add_issue(REPO, 1, "Spelling error in the README file")
    fake.world(REPO).permissions["Codertocat"] = "write"
    body = "Closes #1\n" + SEAL.marker(markers.PR, issue=1, run="r1")
    fake.add_pull(REPO, PR, "magi/r1/A", SHA, title="Fix spelling", body=body)
    fake.world(REPO).refs["heads/magi/r1/B"] = "b" * 40
    fake.world(REPO).refs["magi/claims/issue-1"] = "0" * 40
    return fake, GitHubHTTP(fake)


def run(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    double: GitHubHTTP,
    args: list[str],
    event: str,
    payload: dict[str, Any],
    slug: str = SLUG,
    workflow_run: str = "4242",
) -> tuple[int, str, dict[str, str]]:
    """``magi action <args>`` as the workflow step runs it; its port over the HTTP double."""
    keep_delivered(double.fake, event, payload)  # GitHub holds the comment it reports

    def port(api_url: str, token: str) -> GitHubKitPort:
        gh = GitHub(
            TokenAuthStrategy(token),
            base_url=api_url + "/",
            async_transport=httpx.MockTransport(double),
            auto_retry=False,
            http_cache=False,
        )
        return GitHubKitPort(gh)

    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(payload))
    output = tmp_path / "output"
    output.write_text("")
    env = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "GITHUB_API_URL": "https://api.github.test",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_OUTPUT": str(output),
        "GITHUB_RUN_ID": workflow_run,
        "MAGI_GITHUB_TOKEN": "ghs_test",
        "MAGI_APP_SLUG": slug,
        "MAGI_MARKER_KEY": PEM,
    }
    argv = ["action", *args, "--event-file", str(event_file)]
    if args[0] == "merge":
        argv += ["--event-name", event]
    res = invoke(argv, env=env, obj=ActionContext(ports=port))
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    double.assert_clean()
    return res.exit_code, res.output, outputs


def comment_event(body: str = "merge", login: str = "Codertocat") -> dict[str, Any]:
    p = pr_comment(body, number=PR, login=login, created_at="2026-01-01T11:59:00Z")
    p["repository"]["full_name"] = REPO.full_name
    return p


def test_a_label_claims_the_issue_once(monkeypatch, tmp_path):
    """Two runs for one issue: the first claims it and competes, the second is told no."""
    fake, double = scene()
    del fake.world(REPO).refs["magi/claims/issue-1"]
    labeled = fixture("issues.labeled")
    labeled["repository"]["default_branch"] = "main"
    first = run(monkeypatch, tmp_path, double, ["claim", "--issue", "1"], "issues", labeled)
    assert first[0] == 0
    assert first[2] == {"issue": "1"}
    w = fake.world(REPO)
    held = w.objects[w.refs["magi/claims/issue-1"]]
    assert held.parents == [w.refs["heads/main"]]  # a claim commit on the head
    assert "workflow run 4242" in held.message
    second = run(
        monkeypatch,
        tmp_path,
        double,
        ["claim", "--issue", "1"],
        "issues",
        labeled,
        workflow_run="77",
    )
    assert second[0] == 0
    assert second[2] == {"issue": ""}
    assert "already claimed" in second[1]


def test_re_running_the_claiming_job_finds_its_own_claim(monkeypatch, tmp_path):
    """GitHub's "Re-run all jobs" runs the task job again in the same workflow run: its own
    claim admits it (the competition resumes), where another run's would not."""
    fake, double = scene()
    del fake.world(REPO).refs["magi/claims/issue-1"]
    labeled = fixture("issues.labeled")
    labeled["repository"]["default_branch"] = "main"
    args = ["claim", "--issue", "1"]
    assert run(monkeypatch, tmp_path, double, args, "issues", labeled)[2] == {"issue": "1"}
    claim = fake.world(REPO).refs["magi/claims/issue-1"]
    again = run(monkeypatch, tmp_path, double, args, "issues", labeled)  # attempt 2
    assert again[2] == {"issue": "1"}, again[1]
    assert fake.world(REPO).refs["magi/claims/issue-1"] == claim, "the claim is not moved"


def test_a_writers_merge_squash_merges_with_the_sha(monkeypatch, tmp_path):
    """The App's gate in the workflow: approval recorded, squash at the SHA, cleaned up."""
    fake, double = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    code, out, outputs = run(
        monkeypatch, tmp_path, double, ["merge"], "issue_comment", comment_event()
    )
    assert code == 0, out
    assert outputs["outcome"] == "merged"
    w = fake.world(REPO)
    assert w.merges == [
        {"number": PR, "sha": SHA, "method": "squash", "title": "Fix spelling (#7)"}
    ]
    assert w.issues[1].state == "closed"
    assert "magi/claims/issue-1" not in w.refs
    assert not [r for r in w.refs if r.startswith("heads/magi/r1/")]
    assert SEAL.find(fake.comments_on(REPO, PR), markers.APPROVAL, sha=SHA)


def test_a_backdated_head_pushed_after_the_comment_is_not_merged_by_the_job(monkeypatch, tmp_path):
    """The workflow's gate reads GitHub's push time over HTTP too, not the commit's date."""
    fake, double = scene()
    fake.now = NOW
    fake.push(REPO, PR, "c" * 40, committed_at=NOW - timedelta(hours=2))
    fake.set_check(REPO, "c" * 40, "ci", "completed", "success")
    code, _, outputs = run(
        monkeypatch, tmp_path, double, ["merge"], "issue_comment", comment_event()
    )
    assert code == 0
    assert outputs["outcome"] == "head-moved"
    assert fake.world(REPO).merges == []


def test_a_merge_before_green_waits_and_a_finished_workflow_run_merges(monkeypatch, tmp_path):
    """Checks still running: said once; the CI's workflow_run completing merges it."""
    fake, double = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    code, _, outputs = run(
        monkeypatch, tmp_path, double, ["merge"], "issue_comment", comment_event()
    )
    assert code == 0
    assert outputs["outcome"] != "merged"
    assert fake.world(REPO).merges == []
    assert any("Not merging yet" in b for b in fake.comments_on(REPO, PR))
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    done = fixture("workflow_run.completed")
    done["repository"].update(full_name=REPO.full_name, default_branch="main")
    done["workflow_run"].update(head_sha=SHA, pull_requests=[{"number": PR}])
    code, _, outputs = run(monkeypatch, tmp_path, double, ["merge"], "workflow_run", done)
    assert code == 0
    assert outputs["outcome"] == "merged"
    assert [m["sha"] for m in fake.world(REPO).merges] == [SHA]


def test_a_readers_merge_is_refused_once_and_merges_nothing(monkeypatch, tmp_path):
    """Triage may comment, but only writers approve: one reply, no merge."""
    fake, double = scene()
    fake.world(REPO).permissions["mallory"] = "triage"
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    event = comment_event(login="mallory")
    run(monkeypatch, tmp_path, double, ["merge"], "issue_comment", event)
    run(monkeypatch, tmp_path, double, ["merge"], "issue_comment", event)  # a re-run
    assert fake.world(REPO).merges == []
    refusals = [b for b in fake.comments_on(REPO, PR) if "Not merging" in b]
    assert len(refusals) == 1
    assert "only people with write" in refusals[0]


def test_the_merge_gate_needs_to_know_whose_comments_are_magis(monkeypatch, tmp_path):
    """Without the App's slug no approval marker could be read back: refused with the fix."""
    _, double = scene()
    code, out, _ = run(
        monkeypatch, tmp_path, double, ["merge"], "issue_comment", comment_event(), slug=""
    )
    assert code != 0
    assert "MAGI_APP_SLUG" in out


def test_only_a_merge_comment_on_a_pull_request_is_the_gates():
    """Other comments and issue comments ask nothing of the gate (no call is made)."""
    assert merge_event("issue_comment", comment_event("merge please")) is None
    on_issue = fixture("issue_comment.created")
    on_issue["comment"]["body"] = "merge"
    assert merge_event("issue_comment", on_issue) is None
    assert merge_event("push", {"repository": {}}) is None
    work = merge_event("issue_comment", comment_event("  Merge\n"))
    assert work is not None
    assert (work.pr, work.comment_id) == (PR, 5001)


def test_the_claim_pins_the_label_events_text_and_pin_reads_it_back_over_http(
    monkeypatch, tmp_path
):
    """Without the App: the claim step pins the text its label event carried; the task job's
    `pin` step reads it back through the Git Data API (the read token) and checks the seal."""
    from magi.core.threads.pin import PINNED

    fake, double = scene()
    del fake.world(REPO).refs["magi/claims/issue-1"]
    labeled = fixture("issues.labeled")
    labeled["repository"]["default_branch"] = "main"
    assert run(monkeypatch, tmp_path, double, ["claim", "--issue", "1"], "issues", labeled)[0] == 0
    issue_file = tmp_path / "issue.json"
    issue_file.write_text(json.dumps({"number": 1, "title": "edited", "body": "since"}))

    def port(api_url: str, token: str) -> GitHubKitPort:
        gh = GitHub(TokenAuthStrategy(token), base_url=api_url + "/",
                    async_transport=httpx.MockTransport(double), auto_retry=False,
                    http_cache=False)  # fmt: skip
        return GitHubKitPort(gh)

    env = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "GITHUB_API_URL": "https://api.github.test",
        "MAGI_GITHUB_TOKEN": "ghs_read",
        "MAGI_MARKER_KEY": PEM,
    }
    argv = ["action", "pin", "--issue", "1", "--issue-file", str(issue_file)]
    res = invoke(argv, env=env, obj=ActionContext(ports=port))
    assert res.exit_code == 0, res.output
    pinned = json.loads((tmp_path / PINNED).read_text())
    said = labeled["issue"]
    assert (pinned["title"], pinned["body"]) == (said["title"], said["body"] or "")
    assert pinned["edited"] is True
    double.assert_clean()
