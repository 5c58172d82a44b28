"""Landing under a repository's rules: a race GitHub reports as 405 is tried again; a rule
that needs a person (a required review) or time (a required check, an up-to-date branch)
is said with the next step, and the event that meets it merges."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app_landing_helpers import PR, SHA, pull_event, scene, suite
from github_helpers import REPO, SEAL, deliver, fixture, go, make_app, pr_comment, setup
from magi.core.threads import markers
from magi.core.threads.refusal import MERGE_TRIES, Why, read_refusal
from magi.github.port import GitHubError, GitHubPort
from magi.testing.github import FakeGitHub
from magi.testing.github_rules import (
    BASE_MODIFIED,
    BEHIND,
    QUEUE_ONLY,
    BranchRules,
    reviews_wanted,
)

PERSON_NEXT = (
    "a review from someone with write access is required; magi merges when it arrives "
    "if the `merge` still stands"
)


def green(fake: FakeGitHub, sha: str = SHA, *names: str) -> None:
    for name in names or ("ci",):
        fake.set_check(REPO, sha, name, "completed", "success")


def say_merge(fake: FakeGitHub) -> None:
    r = asyncio.run(deliver(make_app(fake), "issue_comment", pr_comment("merge", number=PR)))
    assert r.status_code == 200


def review(fake: FakeGitHub, login: str, state: str = "approved") -> None:
    """A review kept by GitHub, then its webhook."""
    fake.add_review(REPO, PR, login, state.upper())
    body = {"state": state, "body": "", "user": {"login": login}}
    p = pull_event(fake, "submitted", review=body)
    asyncio.run(deliver(make_app(fake), "pull_request_review", p))


def replies(fake: FakeGitHub) -> list[str]:
    return fake.comments_on(REPO, PR)


def merge_calls(fake: FakeGitHub) -> int:
    return len(fake.named("merge_pull"))


def test_a_base_branch_modified_refusal_is_tried_again_and_merges() -> None:
    """GitHub's transient 405 (another merge raced this one) is not final."""
    fake = scene()
    green(fake)
    fake.fail("merge_pull", GitHubError(BASE_MODIFIED, status=405))
    say_merge(fake)
    assert merge_calls(fake) == 2
    assert len(fake.world(REPO).merges) == 1
    assert "Merged as" in replies(fake)[-1]


def test_a_race_that_keeps_happening_is_bounded_and_said() -> None:
    """Tried MERGE_TRIES times, then said once; the approval still stands."""
    fake = scene()
    green(fake)
    fake.fail("merge_pull", GitHubError(BASE_MODIFIED, status=405), times=MERGE_TRIES + 2)
    say_merge(fake)
    assert merge_calls(fake) == MERGE_TRIES
    assert fake.world(REPO).merges == []
    assert "tries again" in replies(fake)[-1]


def test_a_required_review_is_said_and_a_writers_approving_review_merges() -> None:
    """The whole story on a branch that requires one approving review: the `merge` comes
    first, the person's review after it; a stranger's review does not count."""
    fake = scene()
    fake.set_rules(REPO, BranchRules(required_reviews=1))
    fake.world(REPO).permissions.update({"reviewer": "write", "passerby": "read"})
    green(fake)
    say_merge(fake)
    assert fake.world(REPO).merges == []
    said = replies(fake)[-1]
    assert PERSON_NEXT in said
    assert "At least 1 approving review is required" in said
    (approval,) = SEAL.find(replies(fake), markers.APPROVAL)
    (recorded,) = [r for r in replies(fake) if r.startswith("Approval by")]
    assert "magi merges once every check is green" not in recorded
    assert "1 approving review: " + PERSON_NEXT in recorded

    review(fake, "passerby")
    assert fake.world(REPO).merges == []

    review(fake, "reviewer")
    assert len(fake.world(REPO).merges) == 1
    assert "Merged as" in replies(fake)[-1]
    assert approval["sha"] == SHA


def test_a_writers_review_that_only_comments_does_not_merge() -> None:
    fake = scene()
    fake.set_rules(REPO, BranchRules(required_reviews=1))
    fake.world(REPO).permissions["reviewer"] = "write"
    green(fake)
    say_merge(fake)
    review(fake, "reviewer", "commented")
    assert fake.world(REPO).merges == []


def test_a_required_check_is_waited_for_and_its_finishing_merges() -> None:
    """A required check magi does not know of (not in `[github] required_checks`): GitHub's
    refusal is said, and the check finishing green merges."""
    fake = scene()
    fake.set_rules(REPO, BranchRules(required_checks=("e2e",)))
    green(fake)
    say_merge(fake)
    assert fake.world(REPO).merges == []
    assert '"e2e" is expected' in replies(fake)[-1]
    assert "tries again when a check finishes" in replies(fake)[-1]
    green(fake, SHA, "e2e")
    asyncio.run(deliver(make_app(fake), "check_suite", suite()))
    assert len(fake.world(REPO).merges) == 1


def test_each_refusal_is_said_once_per_head() -> None:
    """Every later event re-decides; the refusal is not repeated on the thread."""
    fake = scene()
    fake.set_rules(REPO, BranchRules(required_reviews=1))
    green(fake)
    say_merge(fake)
    before = len(replies(fake))
    for _ in range(3):
        asyncio.run(deliver(make_app(fake), "check_suite", suite()))
    assert len(replies(fake)) == before
    assert merge_calls(fake) == 4


def test_a_branch_that_must_be_up_to_date_is_rebased_then_merges() -> None:
    """The base moves after the `merge`: GitHub says behind, landing rebases (no merge is
    tried on a behind head), the rebase keeps the patch and the approval, green merges."""
    fake = scene()
    fake.set_rules(REPO, BranchRules(up_to_date=True))
    green(fake)
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say_merge(fake)
    fake.move_base(REPO, "c" * 40)
    asyncio.run(deliver(make_app(fake), "push", _push(fake)))
    inputs = [d["inputs"] for d in fake.world(REPO).dispatches]
    assert [i["command"] for i in inputs] == ["rebase"]
    green(fake)
    asyncio.run(deliver(make_app(fake), "check_suite", suite()))
    assert fake.world(REPO).merges == []  # behind: the rebase first
    new = "d" * 40
    fake.rebased(REPO, PR, new)
    _approval_kept(fake, new)
    green(fake, new)
    asyncio.run(deliver(make_app(fake), "check_suite", suite(new)))
    assert [m["sha"] for m in fake.world(REPO).merges] == [new]


def _push(fake: FakeGitHub) -> dict[str, Any]:
    p = fixture("push")
    p["ref"], p["after"] = "refs/heads/main", "c" * 40
    p["repository"]["full_name"] = REPO.full_name
    p["repository"]["default_branch"] = "main"
    return p


def _approval_kept(fake: FakeGitHub, new: str) -> None:
    """What magi's rebase job posts when the patch is the same: the approval re-pinned."""
    (old,) = SEAL.find(fake.comments_on(REPO, PR), markers.APPROVAL)
    moved = {**old, "sha": new}
    body = "rebased onto `cccc`, same patch, approval kept.\n\n" + SEAL.marker(
        markers.APPROVAL, **moved
    )
    asyncio.run(fake.create_comment(REPO, PR, body))


def test_the_refusals_github_gives_are_read_apart() -> None:
    """GitHub's own messages (and a ruleset's form of them) into what magi does."""
    assert read_refusal(BASE_MODIFIED).retry
    assert read_refusal(reviews_wanted(2)).why is Why.REVIEW
    assert read_refusal("Repository rule violations found\n\n" + reviews_wanted(1)).why is (
        Why.REVIEW
    )
    assert read_refusal('Required status check "ci" is expected.').why is Why.CHECKS
    assert read_refusal(BEHIND).why is Why.BEHIND
    assert read_refusal(QUEUE_ONLY).why is Why.QUEUE
    other = read_refusal("Merge commits are not allowed on this repository.")
    assert other.why is Why.OTHER
    assert not other.retry


def test_the_http_double_refuses_a_merge_under_a_rule_with_githubs_words() -> None:
    """The same rule over real HTTP through the githubkit adapter: 405 and the message."""
    fake, _double, auth, _ = setup()
    fake.add_pull(REPO, 7, "magi/r/A", "a" * 40)
    fake.set_rules(REPO, BranchRules(required_reviews=1))

    async def use(port: GitHubPort) -> None:
        await port.merge_pull(REPO, 7, sha="a" * 40, method="squash", title=None)

    with pytest.raises(GitHubError, match="approving review is required") as info:
        go(auth, use)
    assert info.value.status == 405
    assert fake.world(REPO).merges == []


def test_a_base_push_plans_on_what_github_says_and_never_polls_mergeable() -> None:
    """After the base moves GitHub answers mergeable=null and sends no event when done: the
    push reads each PR once (no re-reads 2 s apart) and does not guess; a later event does."""
    fake = scene(mergeable=None, mergeable_state="unknown")
    asyncio.run(deliver(make_app(fake), "push", _push(fake)))
    assert len(fake.named("get_pull")) == 1
    assert fake.world(REPO).dispatches == []


def approval_reply(fake: FakeGitHub) -> str:
    (recorded,) = [r for r in replies(fake) if r.startswith("Approval by")]
    return recorded


def test_the_approval_reply_promises_only_what_the_rules_allow() -> None:
    """No rules: green merges. A merge queue or an up-to-date rule: said before the promise.
    Rules GitHub will not list (classic protection, an older GHES): no promise beyond them."""
    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    say_merge(fake)
    assert "magi merges once every check is green; a new push" in approval_reply(fake)

    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    fake.set_rules(REPO, BranchRules(merge_queue=True, up_to_date=True))
    say_merge(fake)
    said = approval_reply(fake)
    assert "the merge queue" in said
    assert "up to date with the base" in said
    assert "magi merges once every check is green" not in said

    fake = scene()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    fake.fail("branch_rules", GitHubError("Not Found", status=404))
    say_merge(fake)
    assert "once every check is green and this branch's rules allow it" in approval_reply(fake)


def test_the_adapter_reads_a_branchs_rules_over_http() -> None:
    """GET /repos/{o}/{r}/rules/branches/{branch} through githubkit, as GitHub lists them."""
    fake, _double, auth, _ = setup()
    fake.set_rules(REPO, BranchRules(required_reviews=2, required_checks=("ci",)))
    rules = go(auth, lambda port: port.branch_rules(REPO, "main"))
    assert [(r.type, r.parameters) for r in rules] == [
        ("pull_request", {"required_approving_review_count": 2}),
        (
            "required_status_checks",
            {
                "strict_required_status_checks_policy": False,
                "required_status_checks": [{"context": "ci"}],
            },
        ),
    ]
