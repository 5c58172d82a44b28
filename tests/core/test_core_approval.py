"""The merge gate's pure decisions: what an approval is and when a PR may merge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from magi.core.threads.approval import (
    Approval,
    Check,
    CommentFacts,
    Outcome,
    PullFacts,
    approval_refusal,
    decide,
    is_merge_word,
    permission_level,
    read_approval,
    status_check,
)

NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
OLD = NOW - timedelta(minutes=10)
SHA = "a" * 40
GREEN = [Check("ci", "completed", "success")]


@pytest.mark.parametrize("body", ["merge", " Merge\n", "MERGE", "\tmerge  "])
def test_the_whole_body_merge_is_the_merge_word(body: str) -> None:
    """Case and surrounding whitespace are ignored."""
    assert is_merge_word(body)


@pytest.mark.parametrize(
    "body", ["merge it", "please merge", "> merge", "```\nmerge\n```", "`merge`", "merged", ""]
)
def test_merge_in_a_quote_code_or_sentence_is_not(body: str) -> None:
    """Anything but the bare word is not an approval."""
    assert not is_merge_word(body)


@pytest.mark.parametrize(
    ("given", "level"),
    [("admin", "admin"), ("maintain", "write"), ("write", "write"), ("triage", "read"),
     ("read", "read"), ("none", "none"), (None, "none"), ("weird", "none")],
)  # fmt: skip
def test_permission_folds_maintain_and_triage(given: str | None, level: str) -> None:
    """maintain counts as write, triage as read, anything unknown as none."""
    assert permission_level(given) == level


def facts(**kw: str) -> CommentFacts:
    base = {"body": "merge", "login": "alice", "user_type": "User", "action": "created"}
    return CommentFacts(**{**base, "permission": "write", **kw})


@pytest.mark.parametrize(
    ("kw", "kind"),
    [
        ({}, Approval.APPROVED),
        ({"permission": "maintain"}, Approval.APPROVED),
        ({"permission": "admin"}, Approval.APPROVED),
        ({"permission": "triage"}, Approval.NOT_A_WRITER),
        ({"permission": "read"}, Approval.NOT_A_WRITER),
        ({"action": "edited"}, Approval.EDITED),
        ({"user_type": "Bot"}, Approval.NOT_ONE),
        ({"login": "magi-app[bot]"}, Approval.NOT_ONE),
        ({"login": "magi-app"}, Approval.NOT_ONE),
        ({"body": "merge please"}, Approval.NOT_ONE),
    ],
)
def test_read_approval(kw: dict[str, str], kind: Approval) -> None:
    """Writers' new comments approve; edits, readers, bots and the App do not."""
    assert read_approval(facts(**kw), app_login="magi-app") is kind


def test_refusal_words_name_who_may_approve() -> None:
    """A reader's merge gets told who may approve; an edit is told to comment anew."""
    assert "write, maintain or admin" in approval_refusal(Approval.NOT_A_WRITER, "bob", "triage")
    assert "`read`" in approval_refusal(Approval.NOT_A_WRITER, "bob", "triage")
    assert "new comment" in approval_refusal(Approval.EDITED, "bob", "write")


def pull(**kw: object) -> PullFacts:
    return PullFacts(**{"number": 5, "head_sha": SHA, "pushed_at": OLD, **kw})  # type: ignore[arg-type]


def test_happy_path_merges() -> None:
    """Open, ready, mergeable, green, approved at the head: merge."""
    assert decide(pull(), SHA, GREEN, NOW).outcome is Outcome.MERGE


@pytest.mark.parametrize(
    ("p", "checks", "outcome", "reason", "words"),
    [
        (pull(head_sha="b" * 40), GREEN, Outcome.REFUSE, "head-moved", "new `merge`"),
        (pull(draft=True), GREEN, Outcome.WAIT, "draft", "draft"),
        (pull(state="closed"), GREEN, Outcome.REFUSE, "not-open", "closed"),
        (pull(merged=True, state="closed"), GREEN, Outcome.REFUSE, "not-open", "merged"),
        (pull(mergeable=False), GREEN, Outcome.REFUSE, "not-mergeable", "not mergeable"),
        (pull(mergeable=None), GREEN, Outcome.WAIT, "mergeable-unknown", "computing"),
        (pull(), [Check("ci", "completed", "failure")], Outcome.REFUSE, "checks-red", "`ci`"),
        (pull(), [Check("lint", "completed", "timed_out"), *GREEN], Outcome.REFUSE,
         "checks-red", "`lint`"),
        (pull(), [Check("ci", "in_progress")], Outcome.WAIT, "checks-running", "`ci`"),
        (pull(), [Check("ci", "queued")], Outcome.WAIT, "checks-running", "still running"),
        (pull(pushed_at=NOW - timedelta(minutes=1)), [], Outcome.WAIT, "checks-waiting",
         "no checks"),
        (pull(), [], Outcome.REFUSE, "checks-unknown", "never merges"),
        (pull(pushed_at=None), [], Outcome.REFUSE, "checks-unknown", "never merges"),
        (pull(), [status_check("ci/legacy", "error")], Outcome.REFUSE, "checks-red",
         "ci/legacy"),
        (pull(), [status_check("ci/legacy", "pending")], Outcome.WAIT, "checks-running",
         "ci/legacy"),
    ],
)  # fmt: skip
def test_every_gate_case_says_why(
    p: PullFacts, checks: list[Check], outcome: Outcome, reason: str, words: str
) -> None:
    """Each reason not to merge is its own outcome and says so in words."""
    d = decide(p, SHA, checks, NOW)
    assert (d.outcome, d.reason) == (outcome, reason)
    assert words in d.message


@pytest.mark.parametrize("conclusion", ["success", "neutral", "skipped"])
def test_green_conclusions(conclusion: str) -> None:
    """success, neutral and skipped are green."""
    assert decide(pull(), SHA, [Check("ci", "completed", conclusion)], NOW).outcome is Outcome.MERGE


def test_required_checks_narrow_which_count() -> None:
    """With required checks named, a red check outside them does not block."""
    checks = [Check("ci", "completed", "success"), Check("flaky", "completed", "failure")]
    assert decide(pull(), SHA, checks, NOW, required=["ci"]).outcome is Outcome.MERGE
    assert decide(pull(), SHA, checks, NOW).outcome is Outcome.REFUSE


def test_a_required_check_that_never_reported_is_waiting_then_unknown() -> None:
    """A named required check that is absent waits after a push and is unknown later."""
    young = pull(pushed_at=NOW - timedelta(seconds=30))
    assert decide(young, SHA, GREEN, NOW, required=["e2e"]).reason == "checks-waiting"
    late = decide(pull(), SHA, GREEN, NOW, required=["e2e"])
    assert (late.outcome, late.names) == (Outcome.REFUSE, ("e2e",))


def test_same_change_keeps_an_approval_across_a_rebase() -> None:
    """The patch-id rule is a parameter: an equivalent head keeps the approval."""
    moved = pull(head_sha="c" * 40)
    assert decide(moved, SHA, GREEN, NOW).reason == "head-moved"
    same = decide(moved, SHA, GREEN, NOW, same_change=lambda a, b: {a, b} == {SHA, "c" * 40})
    assert same.outcome is Outcome.MERGE
