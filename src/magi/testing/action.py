"""What the Action's tests check about GitHub: which port calls are writes.

The fake itself is ``magi.testing.github.FakeGitHub`` (it keeps labels, files issues and
flips drafts, like the port's every other call).
"""

from __future__ import annotations

__all__ = ["WRITES"]

# The calls that change GitHub: "publish twice changes nothing" means none of these twice.
WRITES = frozenset(
    {
        "create_comment",
        "update_comment",
        "add_labels",
        "remove_label",
        "create_pull",
        "update_pull",
        "set_draft",
        "create_check_run",
        "update_check_run",
        "create_issue",
        "create_ref",
        "update_ref",
        "delete_ref",
        "close_issue",
    }
)
