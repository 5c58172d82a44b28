"""The App's API budget: events about other people's PRs cost no call; each flow a bounded
number (the doubles count every call a delivery makes)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app_landing_helpers import SHA, scene, suite
from github_helpers import REPO, deliver, fixture, labeled, make_app, pr_comment, world
from magi.core.threads.relevance import STATUS_BRANCHES, NamedPull, excludes
from magi.github.models import JobStep, WorkflowJob
from magi.testing.github import FakeGitHub

# What a flow may spend, in calls to GitHub; measured when the budget was set, and a test
# fails when a change makes a flow dearer (raise it only with the reason in the commit).
LABEL_BUDGET = 13  # 12, and the blob of the issue text the label pins (docs/app.md)
MERGE_BUDGET = 26  # 25, and the branch's rules read for the approval reply (docs/landing.md)
RERUN_BUDGET = 14  # a red Actions job on a magi PR: plan, its log tail read, one re-run, said
REPO_ID = 186853002  # the fixtures' repository


def _ours(p: dict[str, Any]) -> dict[str, Any]:
    p["repository"].update(full_name=REPO.full_name, id=REPO_ID, default_branch="main")
    return p


def _pr(head: str, head_repo: int = REPO_ID) -> dict[str, Any]:
    return {
        "number": 2,
        "head": {"ref": head, "sha": SHA, "repo": {"id": head_repo}},
        "base": {"ref": "main", "sha": "f" * 40, "repo": {"id": REPO_ID}},
    }


def unrelated() -> list[tuple[str, dict[str, Any]]]:
    """A mix of deliveries about no magi PR, as a busy repository's CI sends them."""
    run = _ours(fixture("check_run.completed"))  # names PR 2 from branch `changes`
    green = _ours(fixture("check_run.completed.success"))
    fork_run = _ours(fixture("check_run.completed"))  # a fork PR from a branch named magi/...
    fork_run["check_run"]["pull_requests"] = [_pr("magi/r1/A", head_repo=999)]
    suite = _ours(fixture("check_suite.completed"))  # no PRs named, ran on `main`
    status = _ours(fixture("status"))  # on commits of `master` and `changes`
    lone = _ours(fixture("status"))  # a commit at no branch's tip here (a fork's)
    lone["branches"] = []
    flow = _ours(fixture("workflow_run.completed"))  # another workflow, on `master`
    job = _ours(fixture("workflow_job.completed"))  # a CodeQL job
    return [
        ("check_run", run),
        ("check_run", green),
        ("check_run", fork_run),
        ("check_suite", suite),
        ("status", status),
        ("status", lone),
        ("workflow_run", flow),
        ("workflow_job", job),
    ]


KINDS = ["run", "green-run", "fork-run", "suite", "status", "lone-status", "workflow", "job"]


@pytest.mark.parametrize(("event", "payload"), unrelated(), ids=KINDS)
def test_an_event_about_no_magi_pr_costs_no_call(event: str, payload: dict[str, Any]) -> None:
    """Decided from the payload alone: nothing is queued and GitHub is never asked."""
    fake = world(FakeGitHub())
    asyncio.run(deliver(make_app(fake), event, payload))
    assert fake.calls == []


def test_a_payload_never_admits_a_pr_it_cannot_exclude() -> None:
    """A fork's check names no PR and ran on a branch called magi/...: the payload cannot
    exclude it, so GitHub is read, and the PR there (not magi's) is left alone."""
    fake = scene()
    fake.add_pull(REPO, 8, "magi/r1/A", "c" * 40)  # no sealed marker: not magi's
    suite = _ours(fixture("check_suite.completed"))
    suite["check_suite"].update(head_sha="c" * 40, head_branch="magi/r1/A")
    asyncio.run(deliver(make_app(fake), "check_suite", suite))
    assert [c.name for c in fake.calls] == ["list_pulls", "list_pulls"]  # gate, landing


def test_labelling_an_issue_stays_within_its_budget() -> None:
    """The label flow (config, claim, dispatch, acknowledgement) spends at most its budget."""
    fake = world(FakeGitHub())
    asyncio.run(deliver(make_app(fake), "issues", labeled()))
    assert fake.world(REPO).dispatches
    assert len(fake.calls) <= LABEL_BUDGET, [c.name for c in fake.calls]


def test_a_replayed_label_costs_one_read_more() -> None:
    """A label the App's start-up asked GitHub for again re-reads the issue's labels (its
    payload is old): exactly one call more than a fresh label, never on a fresh one."""
    fake = world(FakeGitHub())
    asyncio.run(fake.add_labels(REPO, 1, ["magi"]))
    fake.calls.clear()
    app = make_app(fake)
    app.state.edge.replays.add("replayed-1")
    asyncio.run(deliver(app, "issues", labeled(), delivery="replayed-1"))
    assert fake.world(REPO).dispatches
    names = [c.name for c in fake.calls]
    assert names.count("get_issue") == 1
    assert len(names) <= LABEL_BUDGET + 1, names


def test_a_merge_comment_stays_within_its_budget() -> None:
    """`merge` on a green magi PR: approval, gate, squash and fold within the budget."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    asyncio.run(deliver(make_app(fake), "issue_comment", pr_comment("merge")))
    assert fake.world(REPO).merges
    assert len(fake.calls) <= MERGE_BUDGET, [c.name for c in fake.calls]


def test_a_machine_failure_re_run_stays_within_its_budget() -> None:
    """A red Actions job whose log shows the runner shut down: landing plans, reads that one
    log tail (no more) and its job's facts, re-runs the job and says so, within the budget."""
    fake = scene()
    fake.set_actions_check(REPO, SHA, "ci", "failure", 900, 901)
    step = JobStep(name="Run tests", status="completed", conclusion="cancelled")
    fake.set_job(REPO, 900, WorkflowJob(id=901, name="ci", runner_name="r1", steps=[step]))
    fake.world(REPO).job_logs[901] = "##[error]The runner has received a shutdown signal.\n"
    fake.calls.clear()
    asyncio.run(deliver(make_app(fake), "check_suite", suite()))
    assert fake.world(REPO).reruns == [900]
    assert [c.name for c in fake.calls].count("job_log_tail") == 1
    assert len(fake.calls) <= RERUN_BUDGET, [c.name for c in fake.calls]


def test_what_the_payload_does_not_say_never_excludes() -> None:
    """A named PR without its head, or a status on ten branches (GitHub's cap, so a magi
    branch may be left out), is read from GitHub."""
    assert not excludes(named=[NamedPull(None, None, None)])
    assert not excludes(branches=[f"b{n}" for n in range(STATUS_BRANCHES)])
    assert not excludes()
    assert excludes(branches=[f"b{n}" for n in range(STATUS_BRANCHES - 1)])
    assert not excludes(named=[NamedPull("magi/r/A", 1, 1), NamedPull("x", 1, 1)])
