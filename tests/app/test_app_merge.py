"""The merge gate over the App: approvals, every refusal, the happy path, a push voiding it."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from github_helpers import NOW, REPO, SEAL, deliver, fixture, make_app, no_sleep, pr_comment, world
from magi.core.threads import markers
from magi.github.models import StatusContext
from magi.github.port import GitHubError
from magi.testing.github import FakeGitHub

SHA = "a" * 40
PR = 7


def scene(**pull: Any) -> FakeGitHub:
    fake = world(FakeGitHub())
    fake.now = NOW - timedelta(minutes=30)
    body = "Closes #1\n" + SEAL.marker(markers.PR, issue=1, run="r1")
    fake.add_pull(REPO, PR, "magi/r1/A", SHA, title="Fix spelling", body=body, **pull)
    w = fake.world(REPO)
    w.refs["heads/magi/r1/B"] = "b" * 40
    w.refs["magi/claims/issue-1"] = "0" * 40
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    return fake


def say(fake: FakeGitHub, body: str = "merge", **kw: Any) -> None:
    r = asyncio.run(deliver(make_app(fake), "issue_comment", pr_comment(body, number=PR, **kw)))
    assert r.status_code == 200


def wake(fake: FakeGitHub, sha: str = SHA) -> None:
    p = fixture("check_suite.completed")
    p["check_suite"]["head_sha"] = sha
    p["check_suite"]["pull_requests"] = [{"number": PR}]
    asyncio.run(deliver(make_app(fake), "check_suite", p))


def replies(fake: FakeGitHub) -> list[str]:
    return fake.comments_on(REPO, PR)


def test_happy_path_squash_merges_with_the_sha_and_cleans_up() -> None:
    """Merged with the approved SHA; issue closed; candidate branches and claim deleted."""
    fake = scene()
    say(fake, "  Merge \n")
    w = fake.world(REPO)
    assert w.merges == [
        {"number": PR, "sha": SHA, "method": "squash", "title": "Fix spelling (#7)"}
    ]
    assert w.issues[1].state == "closed"
    assert "magi/claims/issue-1" not in w.refs
    assert not [r for r in w.refs if r.startswith("heads/magi/r1/")]
    assert ("comment", 5001, "+1") in w.reactions
    assert "Merged as" in replies(fake)[-1]
    (approval,) = SEAL.find(fake.comments_on(REPO, PR), markers.APPROVAL)
    assert approval["sha"] == SHA


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        (lambda f: f.set_check(REPO, SHA, "ci", "completed", "failure"), "`ci`"),
        (lambda f: f.set_check(REPO, SHA, "ci", "in_progress", None), "still running"),
        (lambda f: f.world(REPO).checks.clear(), "never merges"),
        (
            lambda f: f.world(REPO).statuses.update(
                {SHA: [StatusContext(context="legacy", state="failure")]}
            ),
            "`legacy`",
        ),
        (
            lambda f: f.world(REPO).pulls.update(
                {PR: f.world(REPO).pulls[PR].model_copy(update={"draft": True})}
            ),
            "draft",
        ),
        (
            lambda f: f.world(REPO).pulls.update(
                {PR: f.world(REPO).pulls[PR].model_copy(update={"mergeable": False})}
            ),
            "not mergeable",
        ),
    ],
    ids=["red", "running", "no-checks", "red-status", "draft", "conflicts"],
)
def test_each_reason_not_to_merge_is_said(setup: Any, words: str) -> None:
    """No merge, and a reply saying exactly why."""
    fake = scene()
    setup(fake)
    say(fake)
    assert fake.world(REPO).merges == []
    assert words in replies(fake)[-1]


def test_checks_that_have_not_appeared_right_after_a_push_are_waiting() -> None:
    """Within three minutes of the push, no checks is 'waiting', not 'unknown'."""
    fake = scene()
    fake.world(REPO).checks.clear()
    fake.world(REPO).commits[SHA] = NOW - timedelta(minutes=1)
    say(fake)
    assert fake.world(REPO).merges == []
    assert "yet" in replies(fake)[-1]


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"login": "reader"}, "only people with write, maintain or admin"),
        ({"action": "edited"}, "new comment"),
    ],
)
def test_non_approvals_are_told_why(kw: dict[str, str], words: str) -> None:
    """A reader's or an edited merge gets a reply, never a merge."""
    fake = scene()
    fake.world(REPO).permissions["reader"] = "triage"
    say(fake, **kw)
    assert fake.world(REPO).merges == []
    assert words in replies(fake)[-1]


@pytest.mark.parametrize("body", ["merge please", "> merge", "```\nmerge\n```", "LGTM"])
def test_other_comments_are_silence(body: str) -> None:
    """Anything but the bare word is not an approval and gets no reply."""
    fake = scene()
    say(fake, body)
    assert fake.world(REPO).merges == []
    assert replies(fake) == []


def test_a_bots_merge_is_ignored() -> None:
    """Bots cannot approve; the App does not even answer them."""
    fake = scene()
    say(fake, login="renovate[bot]", user_type="Bot")
    assert fake.world(REPO).merges == []
    assert fake.calls == []


def test_a_non_magi_pr_is_left_alone() -> None:
    """merge on a PR whose head is not magi/<run>/<label> does nothing."""
    fake = scene()
    w = fake.world(REPO)
    w.pulls[PR] = w.pulls[PR].model_copy(
        update={"head": w.pulls[PR].head.model_copy(update={"ref": "feature"})}
    )
    say(fake)
    assert w.merges == []
    assert replies(fake) == []


def test_an_approval_waits_for_checks_then_merges_when_they_turn_green() -> None:
    """Running at approval; a check_suite.completed later merges with the approved SHA."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say(fake)
    assert fake.world(REPO).merges == []
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    wake(fake)
    assert [m["sha"] for m in fake.world(REPO).merges] == [SHA]


def test_a_push_between_approval_and_green_voids_the_approval() -> None:
    """New commits after the approval need a new merge, even when they turn green."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say(fake)
    fake.now = NOW
    fake.push(REPO, PR, "c" * 40)
    fake.set_check(REPO, "c" * 40, "ci", "completed", "success")
    wake(fake, "c" * 40)
    assert fake.world(REPO).merges == []
    assert "new `merge`" in replies(fake)[-1]
    say(fake, comment_id=5002, created_at="2026-01-01T12:01:00Z")
    assert [m["sha"] for m in fake.world(REPO).merges] == ["c" * 40]


def test_a_backdated_head_pushed_after_the_comment_is_not_approved() -> None:
    """Pinned to the head at the comment by GitHub's push time, not the committer date.

    The head's commit claims 11:00, an hour before the `merge` (11:59), but GitHub took
    its push at 12:00: the writer approved what was there before it.
    """
    fake = scene()
    fake.now = NOW
    fake.push(REPO, PR, "c" * 40, committed_at=NOW - timedelta(hours=1))
    fake.set_check(REPO, "c" * 40, "ci", "completed", "success")
    say(fake)
    assert fake.world(REPO).merges == []
    assert "head moved" in replies(fake)[-1]
    assert "push of `cccccccccccc` at 2026-01-01 12:00:00 UTC" in replies(fake)[-1]
    assert not SEAL.find(replies(fake), markers.APPROVAL)


def test_a_head_pushed_in_the_same_second_as_the_comment_is_not_approved() -> None:
    fake = scene()
    fake.now = NOW - timedelta(minutes=1)  # 11:59:00, the comment's own second
    fake.push(REPO, PR, "c" * 40, committed_at=NOW - timedelta(hours=1))
    fake.set_check(REPO, "c" * 40, "ci", "completed", "success")
    say(fake)
    assert fake.world(REPO).merges == []
    assert "head moved" in replies(fake)[-1]


def test_a_commit_dated_after_the_comment_but_pushed_before_it_is_approved() -> None:
    """A committer's clock ahead of GitHub's does not void an approval."""
    fake = scene()
    fake.world(REPO).commits[SHA] = NOW + timedelta(days=1)
    say(fake)
    assert [m["sha"] for m in fake.world(REPO).merges] == [SHA]


def test_a_head_whose_push_the_activity_log_does_not_show_is_not_approved() -> None:
    """No push time, no pin: the reply says so and asks for a new `merge`; nothing merges."""
    fake = scene()
    log = fake.world(REPO).refs.activity
    kept = list(log)
    log.clear()
    say(fake)
    assert fake.world(REPO).merges == []
    assert "activity log does not show yet" in replies(fake)[-1]
    assert len(fake.named("list_activities")) == 3  # read again, bounded
    log.extend(kept)  # the log catches up: pushed 11:30, before the comment
    say(fake, comment_id=5002)
    assert [m["sha"] for m in fake.world(REPO).merges] == [SHA]


def test_a_head_pushed_again_after_the_comment_is_not_approved_while_the_log_trails() -> None:
    """B at 11:35, A at 11:40, `merge` at 11:59 for A, B again at 12:00 that the log does not
    show yet: B's 11:35 entry is no pin (only the branch's newest change counts)."""
    fake = scene()
    fake.now = NOW - timedelta(minutes=25)
    fake.push(REPO, PR, "b" * 40)
    fake.now = NOW - timedelta(minutes=20)
    fake.push(REPO, PR, SHA)
    fake.now = NOW
    log = fake.world(REPO).refs.activity
    kept = list(log)
    fake.push(REPO, PR, "b" * 40)
    log[:] = kept  # GitHub took the push; its log trails
    fake.set_check(REPO, "b" * 40, "ci", "completed", "success")
    say(fake)
    assert fake.world(REPO).merges == []
    assert "activity log does not show yet" in replies(fake)[-1]


def test_a_force_push_back_to_the_approved_sha_after_the_comment_needs_a_new_merge() -> None:
    """A at 11:30, B at 11:40, `merge` at 11:59, A again at 12:00: the head is A, but the
    writer saw B; the newest push is after the comment."""
    fake = scene()
    fake.now = NOW - timedelta(minutes=20)
    fake.push(REPO, PR, "b" * 40)
    fake.now = NOW
    fake.push(REPO, PR, SHA)
    say(fake)
    assert fake.world(REPO).merges == []
    assert "head moved" in replies(fake)[-1]


def test_a_github_without_the_activity_log_is_told_plainly_and_never_merges() -> None:
    """GitHub Enterprise without the endpoint (404): the reply says magi cannot approve
    there and to merge by hand, rather than asking for `merge` again forever."""
    fake = scene()
    fake.fail("list_activities", GitHubError("Not Found", status=404))
    say(fake)
    assert fake.world(REPO).merges == []
    assert "404 for the repository activity log" in replies(fake)[-1]
    assert "Merge by hand" in replies(fake)[-1]


def test_an_unreadable_log_after_the_approval_does_not_stop_the_merge() -> None:
    """Deciding later, the push time only picks "waiting" over "unknown": a 502 there falls
    back to the commit's date and the green head merges."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say(fake)
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    fake.fail("list_activities", GitHubError("Bad Gateway", status=502))
    wake(fake)
    assert [m["sha"] for m in fake.world(REPO).merges] == [SHA]


def test_an_activity_log_that_trails_the_push_is_read_again() -> None:
    """The first read lacks the push; the second has it: approved without a second word."""

    class Trailing(FakeGitHub):
        lag = 1

        async def list_activities(self, repo: Any, ref: str) -> Any:
            log = await super().list_activities(repo, ref)
            self.lag -= 1
            return [] if self.lag >= 0 else log

    fake = scene()
    trailing = Trailing()
    trailing.__dict__.update(fake.__dict__)
    say(trailing)
    assert [m["sha"] for m in trailing.world(REPO).merges] == [SHA]
    reads = [c for c in trailing.calls if c.name == "list_activities"]
    assert len(reads) == 3  # two for the approval (the first trailed), one deciding


def test_each_refusal_is_said_once() -> None:
    """Repeated wake-ups with the same reason do not repeat the reply."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say(fake)
    before = len(replies(fake))
    wake(fake)
    wake(fake)
    assert len(replies(fake)) == before


def test_silence_is_a_hold() -> None:
    """Green checks without any approval never merge."""
    fake = scene()
    wake(fake)
    assert fake.world(REPO).merges == []
    assert replies(fake) == []


def test_required_checks_narrow_the_gate() -> None:
    """With [github] required_checks, a red check outside them does not block."""
    fake = scene()
    fake.world(REPO).files[("main", ".magi/config.toml")] = '[github]\nrequired_checks = ["ci"]\n'
    fake.set_check(REPO, SHA, "flaky", "completed", "failure")
    say(fake)
    assert len(fake.world(REPO).merges) == 1


def test_an_approver_who_lost_write_is_rechecked_before_merging() -> None:
    """Permission is read again right before the merge."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say(fake)
    fake.world(REPO).permissions["Codertocat"] = "read"
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    wake(fake)
    assert fake.world(REPO).merges == []
    assert "no longer has write" in replies(fake)[-1]


def test_a_status_event_finds_the_pr_by_its_head() -> None:
    """status events carry only a SHA; the gate finds the open PR with that head."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say(fake)
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    p = fixture("status")
    p["sha"] = SHA
    p["branches"] = [{"name": "magi/r1/A", "commit": {"sha": SHA}, "protected": False}]
    asyncio.run(deliver(make_app(fake), "status", p))
    assert len(fake.world(REPO).merges) == 1


def test_a_merge_github_refuses_is_said() -> None:
    """A 409 from GitHub (head moved under us) is a reply, not a crash."""
    from magi.github.port import GitHubError

    fake = scene()
    fake.fail("merge_pull", GitHubError("Head branch was modified", status=409))
    say(fake)
    assert "head moved while merging" in replies(fake)[-1]


def test_mergeable_still_computing_is_read_again_on_the_next_event() -> None:
    """GitHub answers mergeable=null while computing and sends no event when done: the gate
    neither guesses nor sleeps and re-reads; it says so once, and the next event about the
    PR (here a check suite) reads it again and merges."""
    fake = scene(mergeable=None)
    w = fake.world(REPO)
    say(fake)
    assert w.merges == []
    assert len(fake.named("get_pull")) == 2  # on_comment's read and evaluate's: no polling
    assert "still computing" in replies(fake)[-1]
    wake(fake)
    assert w.merges == []
    assert sum("still computing" in r for r in replies(fake)) == 1
    w.pulls[PR] = w.pulls[PR].model_copy(update={"mergeable": True})
    wake(fake)
    assert len(w.merges) == 1


def test_a_redelivered_approval_is_recorded_once() -> None:
    """The same merge comment delivered twice: one approval reply, one merge."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say(fake)
    say(fake)
    assert len(SEAL.find(replies(fake), markers.APPROVAL)) == 1
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    say(fake)
    assert len(fake.world(REPO).merges) == 1


def test_a_failed_clean_up_after_the_merge_is_said_and_the_rest_still_runs() -> None:
    """Closing the issue fails: the branches are still deleted and the comment says what is left."""
    from magi.github.port import GitHubError

    fake = scene()
    fake.fail("close_issue", GitHubError("unavailable", status=503))
    say(fake)
    w = fake.world(REPO)
    assert len(w.merges) == 1
    assert not [r for r in w.refs if r.startswith("heads/magi/r1/")]
    assert "still to do: close #1" in replies(fake)[-1]


def test_the_apps_same_change_rule_keeps_an_approval_across_a_rebase() -> None:
    """A same_change hook on the App (issue 11's patch-id rule) lets a rebased head merge."""
    from magi.app.context import AppContext
    from magi.app.merge import evaluate

    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say(fake)
    fake.push(REPO, PR, "d" * 40)
    fake.set_check(REPO, "d" * 40, "ci", "completed", "success")

    async def ports(installation: int | None, repo: object) -> FakeGitHub:
        return fake

    ctx = AppContext(
        ports=ports,
        app_login="magi-app",
        seal=SEAL,
        clock=lambda: NOW,
        sleep=no_sleep,
        same_change=lambda a, b: {a, b} == {SHA, "d" * 40},
    )
    assert asyncio.run(evaluate(ctx, fake, REPO, PR, "main")) == "merged"
    assert fake.world(REPO).merges[0]["sha"] == "d" * 40


def test_events_arriving_together_merge_once_and_say_things_once() -> None:
    """check_run, check_suite and workflow_run at once: one reply per reason, one merge."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say(fake)
    app = make_app(fake)

    def suite() -> dict[str, Any]:
        p = fixture("check_suite.completed")
        p["check_suite"].update({"head_sha": SHA, "pull_requests": [{"number": PR}]})
        return p

    async def burst() -> None:
        await asyncio.gather(*(deliver(app, "check_suite", suite()) for _ in range(6)))

    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    asyncio.run(burst())
    assert sum("not green: `ci`" in r for r in replies(fake)) == 1
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    asyncio.run(burst())
    w = fake.world(REPO)
    assert len(w.merges) == 1
    assert sum(r.startswith("Merged") for r in replies(fake)) == 1
    assert not [r for r in w.refs if r.startswith(("magi/said/", "magi/merging/"))]


def test_a_pr_open_before_review_where_drafts_are_refused_waits_for_the_magi_check() -> None:
    """A private Free repository has no drafts, so publish opens the PR ready and holds the
    `magi` check in progress: a `merge` then waits, and lands once the check completes."""
    fake = scene()
    fake.world(REPO).visibility = "private"
    fake.set_check(REPO, SHA, "magi", "in_progress", None)
    say(fake)
    assert fake.world(REPO).merges == []
    assert "still running" in replies(fake)[-1]
    fake.set_check(REPO, SHA, "magi", "completed", "success")
    wake(fake)
    assert len(fake.world(REPO).merges) == 1
