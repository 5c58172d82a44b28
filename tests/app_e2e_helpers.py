"""Shared by several test modules (carried out of test_action_app_e2e.py)."""

from __future__ import annotations

from action_helpers import ISSUE, ISSUE_BODY, REPO, TITLE
from github_helpers import labeled


def _payload() -> dict[str, object]:
    p = labeled(sender="maintainer")
    repo = p["repository"]
    assert isinstance(repo, dict)
    repo.update(
        full_name=REPO.full_name,
        name=REPO.name,
        html_url=f"https://github.example/{REPO.full_name}",
    )
    repo["owner"]["login"] = REPO.owner
    issue = p["issue"]
    assert isinstance(issue, dict)
    issue.update(number=ISSUE, title=TITLE, body=ISSUE_BODY)
    return p
