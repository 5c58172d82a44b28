"""Without a receiver, the whole road: a label -> a competition -> a PR -> `merge` -> merged.

The events are GitHub's payloads (tests/fixtures/github, from ../shared/github/webhooks),
each handed to the workflow's receive step (`magi receive`, the App's own handlers), whose
dispatch starts the competition's jobs as the workflow runs them: the task job's pin (the
text the label accepted, read back from the claim and its seal checked), compete as its
own process (agents, no credential), publish with the App token; then a writer's `merge`
on the PR, through the receive step again, and the App's gate squash-merges it."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from action_helpers import ISSUE, REPO, TITLE, World, make_world
from github_helpers import PEM, fixture, keep_delivered
from magi.action.context import ActionContext
from magi.testing.cli import invoke

WRITER = "Codertocat"


def _for_this_repo(payload: dict[str, Any]) -> dict[str, Any]:
    payload["repository"].update({"full_name": REPO.full_name, "default_branch": "main"})
    payload["sender"].update({"login": WRITER, "type": "User"})
    return payload


def _receive(world: World, event: str, payload: dict[str, Any]) -> str:
    """The receive job's step: its App token, the App's key and slug, the event file."""
    keep_delivered(world.github, event, payload)
    path = world.tmp / f"event-{event}.json"
    path.write_text(json.dumps(payload))
    env = {
        **world.env("receive"),
        "MAGI_GITHUB_TOKEN": "ghs_receive",
        "MAGI_MARKER_KEY": PEM,
        "MAGI_APP_SLUG": "magi-app",
    }
    argv = ["receive", "--event-name", event, "--event-file", str(path)]
    res = invoke(argv, env=env, obj=ActionContext(ports=lambda _u, _t: world.github))
    assert res.exit_code == 0, res.output
    return res.output


def _pin(world: World, issue_file: Path) -> None:
    """The task job's pin step: the claim's text, with its read token and the App's key."""
    env = {**world.env("task"), "MAGI_GITHUB_TOKEN": "ghs_read"}
    argv = ["action", "pin", "--issue", str(ISSUE), "--issue-file", str(issue_file)]
    res = invoke(argv, env=env, obj=ActionContext(ports=lambda _u, _t: world.github))
    assert res.exit_code == 0, res.output


def test_a_label_becomes_a_merged_pr_on_the_workflows_own_triggers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path)
    gh = world.github
    gh.world(REPO).permissions[WRITER] = "write"
    # 1. The label: the receive job claims, acknowledges and dispatches, as the App would.
    labeled = _for_this_repo(fixture("issues.labeled"))
    labeled["label"]["name"] = "magi"
    labeled["issue"].update({"number": ISSUE, "title": TITLE, "body": "the text as labeled"})
    _receive(world, "issues", labeled)
    (dispatch,) = gh.world(REPO).dispatches
    inputs = dispatch["inputs"]
    assert (inputs["command"], inputs["issue"]) == ("compete", str(ISSUE))
    # 2. The dispatched run: task (pin), compete (its own process), publish.
    issue_file = world.issue_file()
    _pin(world, issue_file)
    pinned = json.loads((issue_file.parent / "pinned.json").read_text())
    assert pinned["body"] == "the text as labeled"  # what the label accepted, sealed
    done = world.compete("--run-id", inputs["run_id"])
    assert done.returncode == 0, done.stdout + done.stderr
    out = (world.tmp / "runner-temp-compete" / "output").read_text()
    run_id = re.search(r"^run-id=(\S+)$", out, re.M)
    assert run_id
    assert run_id.group(1) == inputs["run_id"]  # the run the acknowledgement names
    published = world.publish(monkeypatch, run_id.group(1))
    assert published.exit_code == 0, published.output
    (pull,) = gh.world(REPO).pulls.values()
    # publish pushed the branch to the origin with git: what GitHub then holds (the push in
    # its activity log, the PR's head, mergeability computed), which the double, written
    # through its API only, learns here.
    head = world.remote_refs()[f"refs/heads/{pull.head.ref}"]
    gh.world(REPO).refs[f"heads/{pull.head.ref}"] = head
    pull = pull.model_copy(
        update={"head": pull.head.model_copy(update={"sha": head}), "mergeable": True}
    )
    gh.world(REPO).pulls[pull.number] = pull
    # 3. CI green on the PR's head; a writer's `merge`, a minute after the head was pushed.
    gh.set_check(REPO, pull.head.sha, "ci", "completed", "success")
    said = gh.now + timedelta(minutes=1)
    comment = _for_this_repo(fixture("issue_comment.created.pull_request"))
    comment["issue"]["number"] = pull.number
    comment["comment"].update({"body": "merge", "id": 9911, "created_at": said.isoformat()})
    comment["comment"]["user"].update({"login": WRITER, "type": "User"})
    gh.now = said + timedelta(seconds=5)
    gated = _receive(world, "issue_comment", comment)
    w = gh.world(REPO)
    assert "merged" in gated, (gated, gh.comments_on(REPO, pull.number)[-1:])
    assert [(m["number"], m["method"]) for m in w.merges] == [(pull.number, "squash")]
    assert w.issues[ISSUE].state == "closed"
    assert f"magi/claims/issue-{ISSUE}" not in w.refs
