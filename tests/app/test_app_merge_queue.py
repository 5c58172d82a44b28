"""A branch with a merge queue: the merge API's 405 names the queue, magi enqueues the PR
(GraphQL enqueuePullRequest), and its own `magi` check answers the queue's merge group, so a
required `magi` check never stalls the queue."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app_landing_helpers import PR, SHA, dispatches, pull_event, scene, suite
from github_helpers import REPO, SEAL, deliver, fixture, go, make_app, pr_comment, setup
from magi.github.port import GitHubError, GitHubPort
from magi.testing.github import APP_LOGIN, FakeGitHub
from magi.testing.github_rules import BranchRules

SLUG = APP_LOGIN.removesuffix("[bot]")  # magi's App: its check runs are filed under it
QUEUED = BranchRules(merge_queue=True, required_checks=("ci", "magi"))


def queued_scene() -> FakeGitHub:
    fake = scene()
    fake.set_rules(REPO, QUEUED)
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    fake.set_check(REPO, SHA, "magi", "completed", "success", app=SLUG)
    return fake


def say_merge(fake: FakeGitHub) -> None:
    asyncio.run(deliver(make_app(fake), "issue_comment", pr_comment("merge", number=PR)))


def group_event(fake: FakeGitHub, number: int = PR) -> tuple[str, dict[str, Any]]:
    """GitHub's merge_group checks_requested for the group the queue made for ``number``."""
    w = fake.world(REPO)
    ((_, group),) = [q for q in w.queue if q[0] == number]
    p = fixture("check_suite.completed")
    payload = {
        "action": "checks_requested",
        "merge_group": {
            "head_sha": group,
            "head_ref": f"refs/heads/gh-readonly-queue/main/pr-{number}-{w.pulls[number].head.sha}",
            "base_sha": w.refs["heads/main"],
            "base_ref": "refs/heads/main",
        },
        "repository": {**p["repository"], "full_name": REPO.full_name, "default_branch": "main"},
        "installation": p.get("installation", {"id": 1}),
        "sender": p["sender"],
    }
    return group, payload


def test_a_queue_branch_enqueues_and_magi_answers_the_group_then_it_merges() -> None:
    fake = queued_scene()
    say_merge(fake)
    w = fake.world(REPO)
    assert w.merges == []
    assert [n for n, _ in w.queue] == [PR]
    said = fake.comments_on(REPO, PR)
    assert any("the merge queue" in b for b in said if b.startswith("Approval by"))
    assert "to the merge queue" in said[-1]
    group, payload = group_event(fake)
    fake.set_check(REPO, group, "ci", "completed", "success")  # the queue's CI on the group
    assert fake.run_queue(REPO) == []  # the required `magi` check is not on the group yet
    asyncio.run(deliver(make_app(fake), "merge_group", payload))
    (ours,) = [c for c in w.checks[group] if c.name == "magi"]
    assert ours.conclusion == "success"
    assert fake.run_queue(REPO) == [PR]
    assert w.pulls[PR].merged


def test_the_group_gets_the_conclusion_magi_gave_the_head() -> None:
    fake = queued_scene()
    say_merge(fake)
    group, payload = group_event(fake)
    fake.set_check(REPO, SHA, "magi", "completed", "neutral", app=SLUG)
    asyncio.run(deliver(make_app(fake), "merge_group", payload))
    (ours,) = [c for c in fake.world(REPO).checks[group] if c.name == "magi"]
    assert ours.conclusion == "neutral"


@pytest.mark.parametrize("app", ["someone-elses-app", "github-actions", None])
def test_a_magi_check_another_app_made_is_not_copied(app: str | None) -> None:
    """Another App (or a workflow, filed under github-actions) can name a check `magi` on
    the head: its green says nothing of magi's verdict, so the group gets no answer."""
    fake = queued_scene()
    say_merge(fake)
    group, payload = group_event(fake)
    fake.set_check(REPO, SHA, "magi", "completed", "success", app=app)
    asyncio.run(deliver(make_app(fake), "merge_group", payload))
    assert [c for c in fake.world(REPO).checks.get(group, []) if c.name == "magi"] == []


def test_a_group_for_a_pr_that_is_not_magis_gets_no_answer() -> None:
    fake = queued_scene()
    say_merge(fake)
    group, payload = group_event(fake)
    w = fake.world(REPO)
    w.pulls[PR] = w.pulls[PR].model_copy(update={"body": "someone's own PR"})
    asyncio.run(deliver(make_app(fake), "merge_group", payload))
    assert [c for c in w.checks.get(group, []) if c.name == "magi"] == []


def test_later_events_do_not_enqueue_again() -> None:
    fake = queued_scene()
    say_merge(fake)
    for _ in range(2):
        asyncio.run(deliver(make_app(fake), "check_suite", suite()))
    assert len(fake.named("enqueue_pull")) == 1
    assert sum("to the merge queue" in b for b in fake.comments_on(REPO, PR)) == 1


def test_a_refused_enqueue_is_said_with_the_next_step() -> None:
    fake = queued_scene()
    fake.fail("enqueue_pull", GitHubError("Pull request is not mergeable", status=422))
    say_merge(fake)
    said = fake.comments_on(REPO, PR)[-1]
    assert "GitHub would not add it" in said
    assert "Merge when ready" in said


def test_the_graphql_double_enqueues_and_refuses_as_github() -> None:
    """enqueuePullRequest over HTTP through the githubkit adapter."""
    fake, double, auth, _ = setup()
    fake.add_pull(REPO, 7, "magi/r/A", "a" * 40)

    async def enqueue(port: GitHubPort) -> int:
        return await port.enqueue_pull(REPO, 7, sha="a" * 40)

    with pytest.raises(GitHubError, match="merge queue"):
        go(auth, enqueue)  # no queue on main: GitHub will not
    fake.set_rules(REPO, BranchRules(merge_queue=True))
    assert go(auth, enqueue) == 1
    assert fake.world(REPO).queue[0][0] == 7
    double.assert_clean()


def dequeued(fake: FakeGitHub, reason: str) -> None:
    """GitHub takes the PR out of the queue, then sends `pull_request` `dequeued`."""
    fake.dequeue(REPO, PR, reason)
    payload = pull_event(fake, "dequeued", reason=reason, number=PR)
    asyncio.run(deliver(make_app(fake), "pull_request", payload))


def enqueued(fake: FakeGitHub) -> FakeGitHub:
    say_merge(fake)
    assert [n for n, _ in fake.world(REPO).queue] == [PR]
    return fake


def test_a_queue_that_let_go_on_its_own_gets_the_pr_back_once_per_head() -> None:
    """QUEUE_CLEARED with the `merge` standing: said with the reason, added back; the same
    again on that head is said, not added back a second time."""
    fake = enqueued(queued_scene())
    dequeued(fake, "QUEUE_CLEARED")
    said = fake.comments_on(REPO, PR)[-1]
    assert "Removed from the merge queue: the merge queue was cleared." in said
    assert "adding it back once" in said
    assert [n for n, _ in fake.world(REPO).queue] == [PR]
    assert len(fake.named("enqueue_pull")) == 2
    dequeued(fake, "CI_TIMEOUT")
    assert fake.world(REPO).queue == []
    assert len(fake.named("enqueue_pull")) == 2
    said = fake.comments_on(REPO, PR)[-1]
    assert "did not report in time" in said
    assert "added this head back once already; comment `merge` again" in said


def test_a_person_removing_it_is_left_out_and_said() -> None:
    fake = enqueued(queued_scene())
    dequeued(fake, "MANUAL")
    assert fake.world(REPO).queue == []
    assert len(fake.named("enqueue_pull")) == 1
    said = fake.comments_on(REPO, PR)[-1]
    assert "someone removed it from the merge queue" in said
    assert "magi leaves it out; comment `merge` again" in said


def test_the_queues_red_checks_are_said_with_the_next_step_not_retried() -> None:
    fake = enqueued(queued_scene())
    dequeued(fake, "CI_FAILURE")
    assert len(fake.named("enqueue_pull")) == 1
    said = fake.comments_on(REPO, PR)[-1]
    assert "the queue's checks failed on the merged result" in said
    assert "once that is fixed, comment `merge` again" in said


def test_a_conflict_in_the_queue_goes_to_landing() -> None:
    """MERGE_CONFLICT: said, and landing plans it: the conflict's fix round is dispatched."""
    fake = enqueued(queued_scene())
    w = fake.world(REPO)
    w.pulls[PR] = w.pulls[PR].model_copy(update={"mergeable_state": "dirty", "mergeable": False})
    dequeued(fake, "MERGE_CONFLICT")
    assert [d["command"] for d in dispatches(fake)] == ["land"]
    said = fake.comments_on(REPO, PR)
    assert any("it conflicts with the base as the queue built it" in b for b in said)
    assert SEAL.find(said, "land", step="fix", sha=SHA, conflict="1")


def test_a_merged_pr_leaving_the_queue_says_nothing() -> None:
    fake = enqueued(queued_scene())
    before = len(fake.comments_on(REPO, PR))
    dequeued(fake, "MERGE")
    assert len(fake.comments_on(REPO, PR)) == before


def test_without_a_standing_merge_nothing_is_added_back() -> None:
    """A new head since the `merge`: the queue's own removal is said, not undone."""
    fake = enqueued(queued_scene())
    fake.push(REPO, PR, "c" * 40)
    dequeued(fake, "ROLL_BACK")
    assert len(fake.named("enqueue_pull")) == 1
    assert "No `merge` stands on this head" in fake.comments_on(REPO, PR)[-1]


def test_a_pr_that_is_not_magis_costs_no_call() -> None:
    fake = enqueued(queued_scene())
    w = fake.world(REPO)
    w.pulls[PR] = w.pulls[PR].model_copy(update={"body": "someone's own PR"})
    calls = len(fake.calls)
    dequeued(fake, "QUEUE_CLEARED")
    assert len(fake.calls) == calls


def test_the_double_refuses_a_reason_github_does_not_send() -> None:
    with pytest.raises(ValueError, match="no dequeue reason 'BRANCH_INVALIDATED'"):
        queued_scene().dequeue(REPO, PR, "BRANCH_INVALIDATED")


@pytest.mark.parametrize(
    ("stop", "words"),
    [
        ("held", "it is labeled `magi:held`"),
        ("blocked", "it is labeled `magi:blocked`"),
        ("changes", "changes were requested by @octocat"),
        ("land-off", "`[graph] land` is off"),
    ],
)
def test_a_persons_stop_since_the_merge_keeps_it_out_of_the_queue(stop: str, words: str) -> None:
    """The queue let go on its own, the `merge` stands, but a writer stopped it since:
    magi does not put it back (landing's own stops), and says why on the PR."""
    fake = enqueued(queued_scene())
    w = fake.world(REPO)
    if stop in ("held", "blocked"):
        asyncio.run(fake.add_labels(REPO, PR, [f"magi:{stop}"]))
    elif stop == "changes":
        fake.add_review(REPO, PR, "octocat", "CHANGES_REQUESTED")
    else:
        w.files[("main", ".magi/config.toml")] = "[graph]\nland = false\n"
    dequeued(fake, "QUEUE_CLEARED")
    assert w.queue == []
    assert len(fake.named("enqueue_pull")) == 1
    said = fake.comments_on(REPO, PR)[-1]
    assert "the merge queue was cleared" in said
    assert f"magi does not add it back: {words}" in said
