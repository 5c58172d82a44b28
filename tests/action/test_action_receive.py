"""Without a receiver: the workflow's `receive` job runs the App's own handlers on its event.

Each event is the payload GitHub sends (tests/fixtures/github, from ../shared/github/webhooks),
handed to `magi receive` as the job's step does, its port over the HTTP double. What the
job does is compared with what the App does for the same delivery: one engine."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from githubkit import GitHub, TokenAuthStrategy

from github_helpers import (
    NOW,
    PEM,
    REPO,
    SEAL,
    deliver,
    fixture,
    issue_comment,
    keep_delivered,
    labeled,
    make_app,
    pr_comment,
    world,
)
from magi.action.context import ActionContext
from magi.core.threads import markers
from magi.github.githubkit_port import GitHubKitPort
from magi.testing.cli import invoke
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP

SLUG = "magi-app"  # FakeGitHub's comments are magi-app[bot]'s
SEEN: list[FakeGitHub] = []  # every world a receive step ran in (the permission test reads)


def receive(
    tmp_path: Path, fake: FakeGitHub, event: str, payload: dict[str, Any], **env: str
) -> tuple[int, str]:
    """``magi receive`` as the workflow's receive step runs it (run.sh's argv and env)."""
    keep_delivered(fake, event, payload)  # GitHub holds the comment it reports
    SEEN.append(fake)
    double = GitHubHTTP(fake)

    def port(api_url: str, token: str) -> GitHubKitPort:
        gh = GitHub(
            TokenAuthStrategy(token),
            base_url=api_url + "/",
            async_transport=httpx.MockTransport(double),
            auto_retry=False,
            http_cache=False,
        )
        return GitHubKitPort(gh)

    event_file = tmp_path / f"{event}.json"
    event_file.write_text(json.dumps(payload))
    environ = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "GITHUB_API_URL": "https://api.github.test",
        "GITHUB_RUN_ID": "9001",
        "MAGI_GITHUB_TOKEN": "ghs_test",
        "MAGI_APP_SLUG": SLUG,
        "MAGI_MARKER_KEY": PEM,
        **env,
    }
    argv = ["receive", "--event-name", event, "--event-file", str(event_file)]
    res = invoke(argv, env=environ, obj=ActionContext(ports=port))
    double.assert_clean()
    return res.exit_code, res.output


def labeled_world(tmp_path: Path) -> FakeGitHub:
    fake = world(FakeGitHub())
    code, out = receive(tmp_path, fake, "issues", labeled())
    assert code == 0, out
    return fake


def _finished(fake: FakeGitHub) -> None:
    w = fake.world(REPO)
    for wid, r in w.runs.items():
        w.runs[wid] = r.model_copy(update={"status": "completed", "conclusion": "failure"})


def test_a_label_is_claimed_acknowledged_and_dispatched_as_the_app_does(tmp_path):
    """The same delivery through the App and through the job: the same claim, the same
    sealed acknowledgement, the same dispatch (its run id aside)."""
    job = labeled_world(tmp_path)
    app = world(FakeGitHub())
    asyncio.run(deliver(make_app(app), "issues", labeled()))
    for fake in (job, app):
        w = fake.world(REPO)
        assert "magi/claims/issue-1" in w.refs
        (sent,) = w.dispatches
        assert sent["inputs"]["command"] == "compete"
        acked = SEAL.latest(fake.comments_on(REPO, 1), markers.RUN, issue="1")
        assert acked is not None
        assert acked["run"] == sent["inputs"]["run_id"]
    strip = {"run_id"}
    assert {k: v for k, v in job.world(REPO).dispatches[0]["inputs"].items() if k not in strip} == {
        k: v for k, v in app.world(REPO).dispatches[0]["inputs"].items() if k not in strip
    }


def test_a_second_label_competes_nothing_more(tmp_path):
    """The claim admits one competition: a second label event (its own workflow run)
    dispatches nothing, and neither does a re-run of the first label's receive job (the same
    run id: the delivery that started the run, named in its acknowledgement)."""
    fake = labeled_world(tmp_path)
    code, out = receive(tmp_path, fake, "issues", labeled(), GITHUB_RUN_ID="9002")
    assert code == 0, out
    assert "already-claimed" in out
    code, out = receive(tmp_path, fake, "issues", labeled())
    assert code == 0, out
    assert "already-started" in out or "already-claimed" in out
    assert len(fake.world(REPO).dispatches) == 1


def test_a_readers_label_starts_nothing_and_says_who_may(tmp_path):
    """The sender's permission is asked of GitHub: a reader's label is refused, said once."""
    fake = world(FakeGitHub())
    fake.world(REPO).permissions["mallory"] = "read"
    code, out = receive(tmp_path, fake, "issues", labeled(sender="mallory"))
    assert code == 0, out
    assert fake.world(REPO).dispatches == []
    assert "magi/claims/issue-1" not in fake.world(REPO).refs
    assert "only people with write" in fake.comments_on(REPO, 1)[-1]


def test_stop_cancels_the_run_there_being_no_receiver_to_park_it(tmp_path):
    """`/magi stop` from a writer: the run's workflow run is cancelled, said on the thread."""
    fake = labeled_world(tmp_path)
    (wid,) = fake.world(REPO).runs
    code, out = receive(tmp_path, fake, "issue_comment", issue_comment("/magi stop"))
    assert code == 0, out
    assert fake.world(REPO).runs[wid].conclusion == "cancelled"
    assert "`/magi retry` resumes it" in fake.comments_on(REPO, 1)[-1]


def test_a_readers_stop_is_refused_and_stops_nothing(tmp_path):
    fake = labeled_world(tmp_path)
    fake.world(REPO).permissions["mallory"] = "read"
    (wid,) = fake.world(REPO).runs
    receive(tmp_path, fake, "issue_comment", issue_comment("/magi stop", login="mallory"))
    assert fake.world(REPO).runs[wid].conclusion != "cancelled"
    assert "mallory" in fake.comments_on(REPO, 1)[-1]


def test_retry_dispatches_the_same_run_again(tmp_path):
    fake = labeled_world(tmp_path)
    _finished(fake)
    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    code, out = receive(tmp_path, fake, "issue_comment", issue_comment("/magi retry"))
    assert code == 0, out
    last = fake.world(REPO).dispatches[-1]["inputs"]
    assert (last["run_id"], last["command"]) == (run_id, "compete")


def test_fold_deletes_the_runs_branches(tmp_path):
    fake = labeled_world(tmp_path)
    _finished(fake)
    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    for label in ("A", "B"):
        fake.world(REPO).refs[f"heads/magi/{run_id}/{label}"] = "1" * 40
    code, out = receive(tmp_path, fake, "issue_comment", issue_comment("/magi fold"))
    assert code == 0, out
    assert not [r for r in fake.world(REPO).refs if r.startswith(f"heads/magi/{run_id}/")]
    assert "deleted 2 branch(es)" in fake.comments_on(REPO, 1)[-1]


def _asking(fake: FakeGitHub, qid: str, choices: list[str]) -> str:
    """The run's record as publish left it: parked on one question."""
    from datetime import UTC, datetime

    from github_helpers import store_record
    from magi.model.run import Question, QuestionTurn, RunStatus
    from record_helpers import run, text

    run_id = fake.world(REPO).dispatches[0]["inputs"]["run_id"]
    turn = QuestionTurn(
        summary="Which storage?", choices=choices, asked_at=datetime(2026, 9, 1, tzinfo=UTC)
    )
    q = Question(
        id=qid, box=qid, seat="impl-A", node="implement", turn=1, label="A", status="waiting",
        turns=[turn],
    )  # fmt: skip
    store_record(fake, text(run(run_id, status=RunStatus.ASKING, questions=[q])), run_id)
    return run_id


def test_answer_dispatches_the_run_with_the_comment_to_read(tmp_path):
    """`/magi answer`: checked against the record's question, then the run dispatched again
    with the comment's id (the runner reads the words from the comment)."""
    fake = labeled_world(tmp_path)
    _finished(fake)
    run_id = _asking(fake, "ab12", ["SQLite", "Redis"])
    p = issue_comment("/magi answer redis", comment_id=7777)
    code, out = receive(tmp_path, fake, "issue_comment", p)
    assert code == 0, out
    last = fake.world(REPO).dispatches[-1]["inputs"]
    assert (last["run_id"], last["command"], last["comment"]) == (run_id, "compete", "7777")


def test_merge_on_a_magi_pr_goes_through_the_apps_gate(tmp_path):
    """A writer's `merge` on magi's PR, every check green: squashed at the head, the issue
    closed, the claim deleted, by the App's gate."""
    fake = world(FakeGitHub())
    fake.now = NOW - timedelta(minutes=30)
    body = "Closes #1\n" + SEAL.marker(markers.PR, issue=1, run="r1")
    fake.add_pull(REPO, 7, "magi/r1/A", "a" * 40, title="Fix spelling", body=body)
    fake.world(REPO).refs["magi/claims/issue-1"] = "0" * 40
    fake.set_check(REPO, "a" * 40, "ci", "completed", "success")
    code, out = receive(tmp_path, fake, "issue_comment", pr_comment("merge"))
    assert code == 0, out
    w = fake.world(REPO)
    assert [(m["number"], m["sha"], m["method"]) for m in w.merges] == [(7, "a" * 40, "squash")]
    assert w.issues[1].state == "closed"
    assert "magi/claims/issue-1" not in fake.world(REPO).refs


def test_bots_and_plain_comments_are_ignored_before_any_call(tmp_path):
    fake = labeled_world(tmp_path)
    calls = len(fake.calls)
    code, out = receive(tmp_path, fake, "issue_comment", issue_comment("thanks, looks good"))
    assert (code, len(fake.calls)) == (0, calls), out
    bot = issue_comment("/magi retry")
    bot["sender"]["type"] = "Bot"
    code, out = receive(tmp_path, fake, "issue_comment", bot)
    assert code == 0, out
    assert "ignored-bot" in out


@pytest.mark.parametrize("missing", ["MAGI_GITHUB_TOKEN", "MAGI_APP_SLUG", "MAGI_MARKER_KEY"])
def test_receive_without_its_token_slug_or_key_says_which(tmp_path, missing):
    fake = world(FakeGitHub())
    code, out = receive(tmp_path, fake, "issues", labeled(), **{missing: ""})
    assert code != 0
    assert missing in out
    assert fake.world(REPO).dispatches == []


def test_a_payload_that_is_not_githubs_is_refused_with_the_reason(tmp_path):
    fake = world(FakeGitHub())
    p = copy.deepcopy(labeled())
    del p["issue"]
    code, out = receive(tmp_path, fake, "issues", p)
    assert code != 0
    assert "not what GitHub sends" in out


def test_a_merge_before_green_waits_and_the_ci_finishing_merges(tmp_path):
    """Checks still running: the gate says it waits; CI's workflow_run completing (the
    trigger docs/action.md names) wakes the App's gate, which merges."""
    from github_helpers import fixture

    fake = world(FakeGitHub())
    fake.now = NOW - timedelta(minutes=30)
    body = "Closes #1\n" + SEAL.marker(markers.PR, issue=1, run="r1")
    fake.add_pull(REPO, 7, "magi/r1/A", "a" * 40, title="Fix spelling", body=body)
    fake.set_check(REPO, "a" * 40, "ci", "in_progress", None)
    assert receive(tmp_path, fake, "issue_comment", pr_comment("merge"))[0] == 0
    assert fake.world(REPO).merges == []
    fake.set_check(REPO, "a" * 40, "ci", "completed", "success")
    done = fixture("workflow_run.completed")
    done["repository"].update({"full_name": REPO.full_name, "default_branch": "main"})
    done["workflow_run"].update({"head_sha": "a" * 40, "pull_requests": [{"number": 7}]})
    code, out = receive(tmp_path, fake, "workflow_run", done)
    assert code == 0, out
    assert [m["number"] for m in fake.world(REPO).merges] == [7]


def _group_payload(fake: FakeGitHub, number: int, head: str) -> tuple[str, dict[str, Any]]:
    """GitHub's merge_group delivery (``@octokit/webhooks-examples``) for the group the
    queue made of PR ``number``: its commits and branch those of this repository's queue."""
    w = fake.world(REPO)
    ((_, group),) = [q for q in w.queue if q[0] == number]
    payload = fixture("merge_group.checks_requested")
    payload["merge_group"].update(
        {
            "head_sha": group,
            "head_ref": f"refs/heads/gh-readonly-queue/main/pr-{number}-{head}",
            "base_sha": w.refs["heads/main"],
        }
    )
    payload["repository"].update({"full_name": REPO.full_name, "default_branch": "main"})
    payload.pop("installation")  # a workflow run's event: the job's own token acts
    return group, payload


def test_a_merge_queues_group_gets_magis_check_and_merges(tmp_path):
    """A branch with a merge queue and a required `magi` check: the `merge` enqueues the
    PR, and merge_group's checks_requested, handed to the receive job, puts magi's `magi`
    check on the group (the conclusion magi gave the head), so the queue merges."""
    from app_landing_helpers import PR, SHA, scene
    from magi.testing.github_rules import BranchRules

    fake = scene()
    fake.set_rules(REPO, BranchRules(merge_queue=True, required_checks=("ci", "magi")))
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    fake.set_check(REPO, SHA, "magi", "completed", "success", app=SLUG)  # magi's publish job
    code, out = receive(tmp_path, fake, "issue_comment", pr_comment("merge", number=PR))
    assert code == 0, out
    w = fake.world(REPO)
    assert [n for n, _ in w.queue] == [PR]
    group, payload = _group_payload(fake, PR, SHA)
    fake.set_check(REPO, group, "ci", "completed", "success")  # the queue's own CI
    assert fake.run_queue(REPO) == []  # the required `magi` check is not on the group
    code, out = receive(tmp_path, fake, "merge_group", payload)
    assert code == 0, out
    assert "answered-success" in out
    (ours,) = [c for c in w.checks[group] if c.name == "magi"]
    assert ours.conclusion == "success"
    assert fake.run_queue(REPO) == [PR]
    assert w.pulls[PR].merged


def test_the_receive_jobs_token_grants_exactly_what_the_apps_handlers_call(tmp_path):
    """Every call the handlers made (label, stop, retry, fold, answer, merge, a merge
    queue's group) needs a
    permission the receive job's App token asks for, and it asks for nothing unused."""
    from action_workflow_helpers import WORKFLOW, jobs
    from magi.github.port import CALLS

    SEEN.clear()
    for test in (
        test_a_label_is_claimed_acknowledged_and_dispatched_as_the_app_does,
        test_stop_cancels_the_run_there_being_no_receiver_to_park_it,
        test_retry_dispatches_the_same_run_again,
        test_fold_deletes_the_runs_branches,
        test_answer_dispatches_the_run_with_the_comment_to_read,
        test_merge_on_a_magi_pr_goes_through_the_apps_gate,
        test_a_merge_queues_group_gets_magis_check_and_merges,
    ):
        test(tmp_path)
    worlds = list({id(f): f for f in SEEN}.values())
    needed: dict[str, str] = {}
    for call in {c.name for w in worlds for c in w.calls}:
        perm, level = CALLS[call]
        if perm != "metadata" and needed.get(perm) != "write":
            needed[perm] = level
    # An input that depends on the event counts at its most (merge_group's write of checks).
    asked = re.findall(
        r"permission-([a-z-]+): (?:(read|write)|\$\{\{ github\.event_name == 'merge_group'"
        r" && '(read|write)' \|\| '(?:read|write)' \}\})",
        jobs(WORKFLOW)["receive"],
    )
    granted = {name: plain or by_event for name, plain, by_event in asked}
    assert {k.replace("-", "_"): v for k, v in granted.items()} == needed


def test_re_running_the_receive_job_does_a_command_once(tmp_path):
    """GitHub's "Re-run jobs" hands the same event to the receive job again: the command
    was answered once (the App's said ref), so nothing is dispatched twice."""
    fake = labeled_world(tmp_path)
    _finished(fake)
    p = issue_comment("/magi retry", comment_id=8080)
    for _ in range(2):
        code, out = receive(tmp_path, fake, "issue_comment", p)
        assert code == 0, out
    assert len(fake.world(REPO).dispatches) == 2  # the label's, and one retry
    assert "already-answered" in out
