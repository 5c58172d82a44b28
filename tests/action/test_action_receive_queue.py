"""Without a receiver, a merge queue: the receive job answers `merge_group` as the App does.

A branch whose rules want a merge queue and a required `magi` check: the writer's `merge`
(through the receive step) enqueues the PR, GitHub makes the group and sends
`merge_group` with `checks_requested` (the payload GitHub sends, from
`@octokit/webhooks-examples`, tests/fixtures/github), and the receive step puts magi's
`magi` check on the group, so the queue merges instead of waiting for it for good."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app_landing_helpers import PR, SHA, scene
from github_helpers import PEM, REPO, fixture, keep_delivered, pr_comment
from magi.action.context import ActionContext
from magi.testing.cli import invoke
from magi.testing.github import FakeGitHub
from magi.testing.github_rules import BranchRules


def _receive(tmp_path: Path, fake: FakeGitHub, event: str, payload: dict[str, Any]) -> str:
    """``magi receive`` as the workflow's receive step runs it (run.sh's argv and env)."""
    keep_delivered(fake, event, payload)
    path = tmp_path / f"{event}.json"
    path.write_text(json.dumps(payload))
    env = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "GITHUB_RUN_ID": "9002",
        "MAGI_GITHUB_TOKEN": "ghs_receive",
        "MAGI_APP_SLUG": "magi-app",
        "MAGI_MARKER_KEY": PEM,
    }
    argv = ["receive", "--event-name", event, "--event-file", str(path)]
    res = invoke(argv, env=env, obj=ActionContext(ports=lambda _u, _t: fake))
    assert res.exit_code == 0, res.output
    return res.output


def _group_payload(fake: FakeGitHub) -> tuple[str, dict[str, Any]]:
    """GitHub's merge_group delivery for the group the queue made of the PR: the example's
    body, its group's commits and branch those of this repository's queue."""
    w = fake.world(REPO)
    ((_, group),) = [q for q in w.queue if q[0] == PR]
    payload = fixture("merge_group.checks_requested")
    payload["merge_group"].update(
        {
            "head_sha": group,
            "head_ref": f"refs/heads/gh-readonly-queue/main/pr-{PR}-{SHA}",
            "base_sha": w.refs["heads/main"],
        }
    )
    payload["repository"].update({"full_name": REPO.full_name, "default_branch": "main"})
    payload.pop("installation")  # a workflow run's event: the job's own token acts
    return group, payload


def test_the_receive_job_answers_the_queues_group_and_it_merges(tmp_path: Path) -> None:
    fake = scene()
    fake.set_rules(REPO, BranchRules(merge_queue=True, required_checks=("ci", "magi")))
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    fake.set_check(REPO, SHA, "magi", "completed", "success")
    _receive(tmp_path, fake, "issue_comment", pr_comment("merge", number=PR))
    w = fake.world(REPO)
    assert [n for n, _ in w.queue] == [PR]
    group, payload = _group_payload(fake)
    fake.set_check(REPO, group, "ci", "completed", "success")  # the queue's own CI
    assert fake.run_queue(REPO) == []  # the required `magi` check is not on the group
    said = _receive(tmp_path, fake, "merge_group", payload)
    assert "answered-success" in said
    (ours,) = [c for c in w.checks[group] if c.name == "magi"]
    assert ours.conclusion == "success"
    assert fake.run_queue(REPO) == [PR]
    assert w.pulls[PR].merged
