"""land-read: the read step's `gh api` answers become one fix round's input."""

from __future__ import annotations

import json

import pytest

from magi.action.land_read import read_round_input

PULL = {"number": 9, "head": {"ref": "magi/r1/A", "sha": "a" * 40}, "base": {"sha": "b" * 40}}


def write(tmp, name, data):
    (tmp / name).write_text(json.dumps(data))


def test_red_checks_annotations_and_requests_are_read(tmp_path):
    """Only red checks, with their output and annotations; requested changes and line
    comments as review notes; magi's own line comments left out."""
    write(tmp_path, "pull.json", {**PULL, "extra": "ignored"})
    runs = [
        {
            "id": 1,
            "name": "ci",
            "status": "completed",
            "conclusion": "failure",
            "output": {"summary": "1 failed", "text": "FAIL: test_x"},
        },
        {"id": 2, "name": "lint", "status": "completed", "conclusion": "success"},
        {"id": 3, "name": "slow", "status": "in_progress", "conclusion": None},
    ]
    write(tmp_path, "check-runs.json", {"total_count": 3, "check_runs": runs})
    write(
        tmp_path,
        "annotations-1.json",
        [{"path": "a.py", "start_line": 3, "annotation_level": "failure", "message": "boom"}],
    )
    write(
        tmp_path,
        "reviews.json",
        [
            {"state": "CHANGES_REQUESTED", "body": "rename it", "user": {"login": "octo"}},
            {"state": "COMMENTED", "body": "nice", "user": {"login": "fan"}},
        ],
    )
    write(
        tmp_path,
        "review-comments.json",
        [
            {"body": "typo here", "path": "a.py", "line": 2, "user": {"login": "lint-bot[bot]"}},
            {"body": "said by magi", "path": "a.py", "line": 1, "user": {"login": "magi-app[bot]"}},
        ],
    )
    inp = read_round_input(tmp_path, 9, "magi-app[bot]")
    assert (inp.run, inp.head, inp.base) == ("r1", "a" * 40, "b" * 40)
    assert [c.name for c in inp.checks] == ["ci"]
    assert inp.checks[0].annotations == ["a.py:3 failure: boom"]
    assert inp.checks[0].text == "FAIL: test_x"
    assert [(r.login, r.body) for r in inp.reviews] == [
        ("octo", "rename it"),
        ("lint-bot[bot]", "typo here"),
    ]


def test_a_pull_file_for_another_pr_is_refused(tmp_path):
    """The files must be about the PR the job was dispatched for."""
    write(tmp_path, "pull.json", {**PULL, "number": 10})
    with pytest.raises(ValueError, match="not #9"):
        read_round_input(tmp_path, 9)
