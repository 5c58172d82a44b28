"""One lookup for check events: the magi PRs of a head, shared by the gate and landing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app_landing_helpers import PR, SHA, dispatches, scene, suite
from github_helpers import REPO, SEAL, deliver, fixture, make_app
from magi.app.events import CheckRunEvent, CheckSuiteEvent, StatusEvent, WorkflowRunEvent
from magi.app.main import ROUTER
from magi.app.pulls import head_of, magi_pulls_of
from magi.testing.github import FakeGitHub


def status(state: str = "failure", sha: str = SHA) -> dict[str, Any]:
    p = fixture("status")
    p.update({"sha": sha, "state": state})
    p["repository"]["full_name"] = REPO.full_name
    # GitHub lists the branches holding the commit: a magi PR's head is its branch's tip.
    p["branches"] = [{"name": "magi/r1/A", "commit": {"sha": sha}, "protected": False}]
    return p


def pulls_read(fake: FakeGitHub) -> list[int]:
    return [c.args["number"] for c in fake.named("get_pull")]


@pytest.mark.parametrize(
    ("name", "model", "named"),
    [
        ("check_suite.completed", CheckSuiteEvent, True),
        ("check_run.completed", CheckRunEvent, True),
        ("workflow_run.completed", WorkflowRunEvent, True),
        ("status", StatusEvent, False),
    ],
)
def test_every_check_event_names_its_head(name: str, model: Any, named: bool) -> None:
    """Real deliveries: the commit each reports on, and whether it can name PRs at all."""
    p = model.model_validate(fixture(name))
    sha, numbers = head_of(p)
    assert len(sha) == 40
    if not named:
        assert numbers == []


def test_a_status_wakes_both_behaviours_on_the_magi_pr_of_its_head_only() -> None:
    """A status names no PR: the open magi PRs at that head, never a person's PR there."""
    fake = scene()
    fake.add_pull(REPO, 8, "feature/by-hand", SHA)
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    asyncio.run(deliver(make_app(fake), "status", status()))
    assert set(pulls_read(fake)) == {PR}, "the person's PR 8 is never read"
    assert [d["command"] for d in dispatches(fake)] == ["land"]
    gate_and_landing = [c for c in fake.calls if c.name == "list_pulls"]
    assert len(gate_and_landing) == 2, "each behaviour asked the one lookup"


def test_named_prs_are_not_looked_up() -> None:
    """A check suite that names its PRs costs no PR listing."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    asyncio.run(deliver(make_app(fake), "check_suite", suite()))
    assert fake.named("list_pulls") == []
    assert len(dispatches(fake)) == 1


def test_a_pending_status_queues_no_landing_work() -> None:
    """Pending changes no landing decision: only the gate's route takes it."""
    routes = ROUTER.match("status", None)
    pending = StatusEvent.model_validate(status("pending"))
    wants = {r.handler.__module__: r.wants(pending) for r in routes if r.wants}
    assert wants == {"magi.app.merge": True, "magi.app.landing": False}
    assert {r.handler.__module__ for r in routes} == {"magi.app.merge", "magi.app.landing"}
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    asyncio.run(deliver(make_app(fake), "status", status("pending")))
    assert dispatches(fake) == []


def test_the_lookup_lists_open_magi_prs_at_the_head() -> None:
    """Unnamed: open PRs whose head is the commit and whose branch is magi's."""
    fake = scene()
    fake.add_pull(REPO, 8, "feature/by-hand", SHA)
    fake.add_pull(REPO, 9, "magi/r2/A", "b" * 40)
    assert asyncio.run(magi_pulls_of(fake, REPO, SHA, [], SEAL)) == [PR]
    assert asyncio.run(magi_pulls_of(fake, REPO, SHA, [9, 9, 8], SEAL)) == [9, 8]
