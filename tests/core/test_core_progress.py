"""A magi workflow run's display title names what it is for, and reads back exactly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from magi.core.threads.progress import RunTitle, parse_title, title

ROOT = Path(__file__).parents[2]
# What workflows/magi.yml's run-name renders; changing one means changing the other.
RUN_NAME = (
    "magi ${{ inputs.command || ((github.event.issue.pull_request"
    " || github.event.workflow_run || github.event.merge_group) && 'merge' || 'compete') }}"
    "${{ (inputs.issue || (!github.event.issue.pull_request && github.event.issue.number))"
    " && format(', issue #{0}', inputs.issue || github.event.issue.number) || '' }}"
    "${{ (inputs.pr || github.event.issue.pull_request)"
    " && format(', PR #{0}', inputs.pr || github.event.issue.number) || '' }}"
    "${{ inputs.run_id && format(', run {0}', inputs.run_id) || '' }}"
)


def test_the_workflow_names_its_runs_the_way_the_parser_reads_them():
    """The run-name in workflows/magi.yml is the expression these titles come from."""
    text = (ROOT / "workflows" / "magi.yml").read_text(encoding="utf-8")
    found = re.search(r'^run-name: "(.*)"$', text, re.M)
    assert found is not None
    assert found[1] == RUN_NAME
    assert re.search(r"^name: magi$", text, re.M)


@pytest.mark.parametrize(
    ("shown", "want"),
    [
        (
            "magi compete, issue #12, run 20261201-093000-0a1b",
            RunTitle("compete", 12, None, "20261201-093000-0a1b"),
        ),
        ("magi compete, issue #12", RunTitle("compete", 12)),
        ("magi land, issue #12, PR #40", RunTitle("land", 12, 40)),
        ("magi merge, PR #40", RunTitle("merge", None, 40)),
    ],
)
def test_titles_read_back(shown: str, want: RunTitle):
    """Each shape the workflow renders reads back as what it is for, and renders again."""
    assert parse_title(shown) == want
    assert title(want) == shown


@pytest.mark.parametrize(
    "shown",
    [
        "",
        "CI",
        "Update README.md",
        "magi compete, issue #12; rm -rf /",
        "magi compete, issue #0",
        "magi Compete, issue #12",
        "magi compete, PR #4, issue #12",  # the order is the workflow's
        "magi compete, issue #12, run a b",
    ],
)
def test_anything_else_is_not_magis(shown: str):
    """A user's own workflow, or a run renamed by hand, is not read as magi's."""
    assert parse_title(shown) is None
