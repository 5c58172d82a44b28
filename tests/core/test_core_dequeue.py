"""GitHub's dequeue reasons to magi's next step: pure, every reason GitHub lists."""

from __future__ import annotations

import pytest

from magi.core.threads.dequeue import Next, after_dequeue
from magi.testing.github import DEQUEUE_REASONS


@pytest.mark.parametrize("reason", ["MERGE", "ALREADY_MERGED"])
def test_merged_is_nothing(reason):
    assert after_dequeue(reason, stands=True, requeued=False).next is Next.NOTHING


@pytest.mark.parametrize("reason", ["QUEUE_CLEARED", "ROLL_BACK", "CI_TIMEOUT"])
def test_the_queues_own_doing_is_added_back_once_while_the_merge_stands(reason):
    assert after_dequeue(reason, stands=True, requeued=False).next is Next.REQUEUE
    again = after_dequeue(reason, stands=True, requeued=True)
    assert again.next is Next.SAY
    assert "added this head back once already" in again.message
    gone = after_dequeue(reason, stands=False, requeued=False)
    assert gone.next is Next.SAY
    assert "No `merge` stands on this head" in gone.message


def test_a_conflict_goes_to_landing():
    assert after_dequeue("MERGE_CONFLICT", stands=True, requeued=False).next is Next.LAND


@pytest.mark.parametrize(
    "reason",
    ["MANUAL", "CI_FAILURE", "BRANCH_PROTECTIONS", "GIT_TREE_INVALID", "INVALID_MERGE_COMMIT"],
)
def test_what_needs_a_person_is_said_with_the_next_step(reason):
    d = after_dequeue(reason, stands=True, requeued=False)
    assert d.next is Next.SAY
    assert d.message.startswith("Removed from the merge queue: ")
    assert "comment `merge` again" in d.message


@pytest.mark.parametrize("reason", ["UNKNOWN_REMOVAL_REASON", "SOMETHING_NEW`<b>", ""])
def test_an_unknown_reason_is_never_guessed(reason):
    d = after_dequeue(reason, stands=True, requeued=False)
    assert d.next is Next.SAY
    assert "magi does not guess" in d.message
    if reason.startswith("SOMETHING"):
        assert "``SOMETHING_NEW`<b>``" in d.message  # GitHub's words in a code span: inert


def test_every_reason_github_sends_has_a_decision():
    """No reason on GitHub's list falls through to the unknown branch by accident."""
    for reason in DEQUEUE_REASONS - {"UNKNOWN_REMOVAL_REASON"}:
        d = after_dequeue(reason, stands=True, requeued=False)
        assert "does not guess" not in d.message, reason
