"""app.yml subscribes every event the App routes and grants every permission its calls need."""

from __future__ import annotations

import re
from pathlib import Path

from magi.app import ROUTER
from magi.github.port import CALLS

ROOT = Path(__file__).parents[2]
LEVEL = {"read": 1, "write": 2}
# What GitHub needs granted before it sends an event (docs: "Webhook events and payloads").
EVENT_NEEDS = {
    "issues": "issues",
    "issue_comment": "issues",
    "check_suite": "checks",
    "check_run": "checks",
    "status": "statuses",
    "workflow_run": "actions",
    "workflow_job": "actions",
    "pull_request": "pull_requests",
    "pull_request_review": "pull_requests",
    "pull_request_review_comment": "pull_requests",
    "push": "contents",
    "merge_group": "merge_queues",
}


def manifest() -> tuple[list[str], dict[str, str]]:
    """app.yml's events and permissions (a flat YAML subset, read without a YAML library)."""
    events: list[str] = []
    perms: dict[str, str] = {}
    section = ""
    for line in (ROOT / "app.yml").read_text(encoding="utf-8").splitlines():
        if re.match(r"^\S", line):
            section = line.split(":")[0]
        elif section == "default_events" and line.strip().startswith("- "):
            events.append(line.strip()[2:])
        elif section == "default_permissions" and ":" in line and not line.strip().startswith("#"):
            key, value = (x.strip() for x in line.split(":", 1))
            perms[key] = value
    return events, perms


def test_every_routed_event_is_subscribed() -> None:
    """An event the code handles but the App does not subscribe to would never arrive."""
    events, _ = manifest()
    assert ROUTER.events() <= set(events)


def test_every_subscribed_event_is_routed() -> None:
    """Least privilege: nothing is subscribed that the App ignores."""
    events, _ = manifest()
    assert set(events) <= ROUTER.events()


def test_every_call_is_covered_by_a_permission() -> None:
    """Each port call's permission is granted at (at least) the level it needs."""
    _, perms = manifest()
    for call, (perm, level) in CALLS.items():
        assert LEVEL.get(perms.get(perm, ""), 0) >= LEVEL[level], f"{call} needs {perm}: {level}"


# What a git push with the App's token needs beyond the port's calls: GitHub refuses a
# push whose commits change .github/workflows/* without `workflows` (a rebase onto a base
# whose workflows changed), whatever magi.action.publish_job.workflow_guard lets through of
# an agent's.
GIT_PUSH_NEEDS = {"contents", "workflows"}


def test_every_permission_is_used_and_events_can_be_received() -> None:
    """No permission is granted that no call, push or event needs."""
    _, perms = manifest()
    needed = {p for p, _ in CALLS.values()} | {EVENT_NEEDS[e] for e in ROUTER.events()}
    needed |= GIT_PUSH_NEEDS
    assert set(perms) <= needed
    for event in ROUTER.events():
        assert EVENT_NEEDS[event] in perms


def test_the_readme_justifies_each_permission_and_event() -> None:
    """app/README.md has a row for every permission and every event."""
    text = (ROOT / "app" / "README.md").read_text(encoding="utf-8")
    events, perms = manifest()
    for name in [*events, *perms]:
        assert re.search(rf"^\|\s*`{name}`", text, re.M), name
