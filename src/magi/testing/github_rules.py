"""Branch rules in the GitHub doubles: what GitHub refuses a merge for, each rule with its doc.

Real repositories protect their default branch (branch protection or a ruleset); the merge
API then answers 405 with GitHub's own message until the rule is met. ``FakeGitHub`` keeps
one ``BranchRules`` per branch (``set_rules``) and the reviews submitted on each pull
request (``add_review``), and its ``merge_pull`` asks ``refusal`` first, so the HTTP double
(which answers from the same fake) refuses the same merges with the same words.

- Required approving reviews: approvals count only from people with write access, each
  reviewer's latest deciding review counting.
  https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-pull-request-reviews-before-merging
- Required status checks: each named check (a check run or a commit status) green on the
  head. https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-status-checks-before-merging
- "Require branches to be up to date before merging": the base's head must be in the
  pull request's history (GitHub shows ``mergeable_state: behind`` meanwhile).
  https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-status-checks-before-merging
- A merge queue: the merge API refuses every merge; the pull request goes through the queue.
  https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/managing-a-merge-queue
- "Base branch was modified" is not a rule but a race GitHub reports with the same 405
  (inject it with ``FakeGitHub.fail("merge_pull", GitHubError(BASE_MODIFIED, status=405))``).
  https://docs.github.com/en/rest/pulls/pulls#merge-a-pull-request
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from magi.github.models import BranchRule, CheckRun, StatusContext
from magi.github.port import GitHubError

__all__ = [
    "BASE_MODIFIED",
    "BEHIND",
    "QUEUE_ONLY",
    "BranchRules",
    "Reviewed",
    "as_ruleset",
    "refusal",
    "reviews_wanted",
]

# GitHub's own messages (405 on PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge).
BASE_MODIFIED = "Base branch was modified. Review and try the merge again."
RULESET = "Repository rule violations found\n\n"  # how a ruleset's refusal begins
QUEUE_ONLY = RULESET + "Changes must be made through the merge queue"
BEHIND = "Head branch is not up to date with the base branch"
WRITERS = frozenset({"write", "maintain", "admin"})


def reviews_wanted(n: int) -> str:
    return (
        f"At least {n} approving review{'s are' if n > 1 else ' is'} required by reviewers "
        "with write access."
    )


@dataclass(frozen=True)
class BranchRules:
    """The rules a branch has (all off: a branch with no rules)."""

    required_reviews: int = 0
    required_checks: tuple[str, ...] = ()
    up_to_date: bool = False  # "Require branches to be up to date before merging"
    merge_queue: bool = False


@dataclass(frozen=True)
class Reviewed:
    """A submitted review as GitHub keeps it: who and its state (APPROVED, ...)."""

    login: str
    state: str


def _approvals(reviews: Sequence[Reviewed], permissions: dict[str, str]) -> int:
    last: dict[str, str] = {}
    for r in reviews:  # in the order submitted; comments do not decide
        if r.state.upper() in {"APPROVED", "CHANGES_REQUESTED", "DISMISSED"}:
            last[r.login] = r.state.upper()
    return sum(
        1 for who, s in last.items() if s == "APPROVED" and permissions.get(who, "") in WRITERS
    )


def _green(name: str, checks: Sequence[CheckRun], statuses: Sequence[StatusContext]) -> bool:
    runs = [c for c in checks if c.name == name]
    if runs:
        return all(c.conclusion in {"success", "neutral", "skipped"} for c in runs)
    return any(s.context == name and s.state == "success" for s in statuses)


def refusal(
    rules: BranchRules,
    *,
    reviews: Sequence[Reviewed],
    permissions: dict[str, str],
    checks: Sequence[CheckRun],
    statuses: Sequence[StatusContext],
    up_to_date: bool,
) -> GitHubError | None:
    """The 405 GitHub answers a merge under ``rules`` with, or None."""
    if rules.merge_queue:
        return GitHubError(QUEUE_ONLY, status=405)
    if _approvals(reviews, permissions) < rules.required_reviews:
        return GitHubError(reviews_wanted(rules.required_reviews), status=405)
    for name in rules.required_checks:
        if not _green(name, checks, statuses):
            return GitHubError(f'Required status check "{name}" is expected.', status=405)
    if rules.up_to_date and not up_to_date:
        return GitHubError(BEHIND, status=405)
    return None


def as_ruleset(rules: BranchRules) -> list[BranchRule]:
    """``rules`` as ``GET /repos/{o}/{r}/rules/branches/{branch}`` lists them.
    https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch"""
    out: list[BranchRule] = []
    if rules.required_reviews:
        review = {"required_approving_review_count": rules.required_reviews}
        out.append(BranchRule(type="pull_request", parameters=review))
    if rules.required_checks or rules.up_to_date:
        checks = {
            "strict_required_status_checks_policy": rules.up_to_date,
            "required_status_checks": [{"context": c} for c in rules.required_checks],
        }
        out.append(BranchRule(type="required_status_checks", parameters=checks))
    if rules.merge_queue:
        out.append(BranchRule(type="merge_queue", parameters={"merge_method": "SQUASH"}))
    return out
