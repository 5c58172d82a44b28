"""Landing over the App: events to steps, one job per head, holds, folds, voided approvals."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app_landing_helpers import PR, SHA, dispatches, pull_event, scene, suite, wake
from github_helpers import REPO, SEAL, deliver, fixture, make_app
from magi.core.threads import markers
from magi.core.threads.landing import HELD

UNATTENDED = "[graph]\nland_approval = false\n"


def test_a_red_check_dispatches_one_fix_round():
    """Red on the head: `land --pr 7` is dispatched once, and the round is said on the PR."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    wake(fake)
    assert dispatches(fake) == [
        {
            "run_id": "r1",
            "issue": "1",
            "command": "land",
            "pr": "7",
            "round": "1",
            "runner-labels": '["self-hosted", "magi"]',
        }
    ]
    said = fake.comments_on(REPO, PR)
    assert SEAL.find(said, "land", step="fix", round="1", sha=SHA)
    wake(fake)  # the same head again, e.g. a second suite: coalesced, no second job
    assert len(dispatches(fake)) == 1


def test_two_events_at_once_start_one_landing_job():
    """Two deliveries racing for one red head: exactly one dispatch."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    app = make_app(fake)

    async def both() -> None:
        await asyncio.gather(
            deliver(app, "check_suite", suite()), deliver(app, "check_suite", suite())
        )

    asyncio.run(both())
    assert len(dispatches(fake)) == 1


def test_red_out_of_rounds_is_held_and_never_merged():
    """Four rounds spent: label magi:held, say what still fails, dispatch nothing."""
    fake = scene()
    for n in range(1, 5):
        asyncio.run(
            fake.create_comment(REPO, PR, SEAL.marker("land", step="fix", sha=SHA, round=n))
        )
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    wake(fake)
    assert dispatches(fake) == []
    assert "magi:held" in fake.labels_on(REPO, PR)
    assert any("Landing held" in b and "`ci`" in b for b in fake.comments_on(REPO, PR))
    assert fake.world(REPO).merges == []


def test_a_moved_base_dispatches_a_rebase():
    """GitHub says behind: a rebase job is dispatched."""
    fake = scene(mergeable_state="behind")
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    wake(fake)
    assert [d["command"] for d in dispatches(fake)] == ["rebase"]


def test_changes_requested_dispatches_a_fix_round():
    """A writer's review requesting changes is a fix round."""
    fake = scene()
    fake.world(REPO).permissions["octo"] = "write"
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    review = {"state": "changes_requested", "body": "rename it", "user": {"login": "octo"}}
    p = pull_event(fake, "submitted", review=review)
    asyncio.run(deliver(make_app(fake), "pull_request_review", p))
    assert [d["command"] for d in dispatches(fake)] == ["land"]


@pytest.mark.parametrize("level", ["read", "triage", "none"])
def test_a_strangers_review_or_line_comment_spends_nothing(level: str) -> None:
    """Anyone can review a public PR: without write access it dispatches no paid fix round
    (five of them would use up every round and hold the PR), and nothing is said."""
    fake = scene()
    if level != "none":
        fake.world(REPO).permissions["stranger"] = level
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    app = make_app(fake)
    for _ in range(6):
        review = {"state": "changes_requested", "body": "rm -rf", "user": {"login": "stranger"}}
        asyncio.run(
            deliver(app, "pull_request_review", pull_event(fake, "submitted", review=review))
        )
        line = {"id": 1, "body": "do this instead", "user": {"login": "stranger"}}
        asyncio.run(
            deliver(app, "pull_request_review_comment", pull_event(fake, "created", comment=line))
        )
    assert dispatches(fake) == []
    assert HELD not in fake.labels_on(REPO, PR)
    assert fake.comments_on(REPO, PR) == []


def test_only_the_bots_config_trusts_may_ask_for_a_fix() -> None:
    """A bot's review counts only when `[github] trusted_bots` names it."""
    fake = scene('[github]\ntrusted_bots = ["coderabbitai"]\n')
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    app = make_app(fake)
    for bot in ("renovate[bot]", "coderabbitai[bot]"):
        review = {"state": "changes_requested", "body": "x", "user": {"login": bot, "type": "Bot"}}
        asyncio.run(
            deliver(app, "pull_request_review", pull_event(fake, "submitted", review=review))
        )
    assert [d["command"] for d in dispatches(fake)] == ["land"]


def test_unattended_merges_green_and_never_unknown():
    """land_approval = false: no checks at all is unknown and waits; green merges."""
    fake = scene(UNATTENDED)
    wake(fake)
    assert fake.world(REPO).merges == []
    assert any("never merges" in b for b in fake.comments_on(REPO, PR))
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    wake(fake)
    assert [m["sha"] for m in fake.world(REPO).merges] == [SHA]


def test_with_approval_on_green_waits_for_merge():
    """The default: green but no `merge` comment merges nothing and dispatches nothing."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    wake(fake)
    assert fake.world(REPO).merges == []
    assert dispatches(fake) == []


def test_a_closed_pr_is_folded():
    """Merged by hand: branches and claim deleted, issue closed, tracking comment updated."""
    fake = scene()
    track = SEAL.marker("tracking", issue=1, run="r1")
    asyncio.run(fake.create_comment(REPO, 1, f"### magi\n\nrunning\n\n{track}"))
    w = fake.world(REPO)
    w.pulls[PR] = w.pulls[PR].model_copy(update={"merged": True, "state": "closed"})
    asyncio.run(deliver(make_app(fake), "pull_request", pull_event(fake, "closed")))
    assert not [r for r in w.refs if r.startswith(("heads/magi/r1/", "magi/claims/"))]
    assert w.issues[1].state == "closed"
    tracking = [b for b in fake.comments_on(REPO, 1) if "magi:tracking" in b]
    assert "#7 merged" in tracking[0]
    assert tracking[0].rstrip().endswith("-->")


def test_new_code_after_the_approval_voids_it():
    """A push to a different head after `merge`: the PR is told to comment `merge` again."""
    fake = scene()
    approval = SEAL.marker(markers.APPROVAL, comment=5001, sha=SHA, login="Codertocat")
    asyncio.run(fake.create_comment(REPO, PR, f"Approval recorded.\n\n{approval}"))
    fake.push(REPO, PR, "c" * 40)
    asyncio.run(deliver(make_app(fake), "pull_request", pull_event(fake, "synchronize")))
    assert any("comment `merge` again" in b for b in fake.comments_on(REPO, PR))


def push(ref: str = "refs/heads/main", after: str = "f" * 40) -> dict[str, Any]:
    p = fixture("push")
    p["ref"], p["after"] = ref, after
    p["repository"]["full_name"] = REPO.full_name
    p["repository"]["default_branch"] = "main"
    return p


def test_a_push_to_the_base_rebases_a_magi_pr_behind_it_at_once():
    """The default branch moved: no check or review event needed; the PR behind is rebased,
    after GitHub finished computing its mergeability (read again, bounded)."""
    fake = scene(mergeable=None, mergeable_state="behind")
    w = fake.world(REPO)
    reads = iter([None, True])

    real = fake.get_pull

    async def computing(repo: Any, number: int) -> Any:
        pull = await real(repo, number)
        return pull.model_copy(update={"mergeable": next(reads, True)})

    fake.get_pull = computing  # type: ignore[method-assign]
    asyncio.run(deliver(make_app(fake), "push", push()))
    assert [d["command"] for d in dispatches(fake)] == ["rebase"]
    assert w.dispatches[-1]["inputs"]["pr"] == str(PR)


def test_a_push_elsewhere_wakes_nothing():
    """A tag, a candidate branch, a deleted branch: no PR is planned."""
    fake = scene(mergeable_state="behind")
    app = make_app(fake)
    for p in (push("refs/tags/v1"), push("refs/heads/magi/r1/A"), push(after="0" * 40)):
        asyncio.run(deliver(app, "push", p))
    assert dispatches(fake) == []
