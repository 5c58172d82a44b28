"""A red check is re-run once before a fix round is spent on it.

A flaky test that passes on a second run must not pay an agent to "fix" it. When landing
would dispatch a fix round for red checks, and every red one is a GitHub Actions job of
this repository (a check run of the ``github-actions`` app whose ``details_url`` is
``https://github.com/<owner>/<repo>/actions/runs/<run>/job/<job>``), magi re-runs the
failed jobs of those runs once for this head
(``POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs``) and says so on the
PR. Once per head: ``refs/magi/rerun/<pr>/<head>`` is created first (GitHub creates a ref
once, so of two events at once exactly one re-runs), and a failure on a head that was
re-run already goes to the fixer as before. A red check magi cannot re-run (another CI's,
a commit status) goes to the fixer as before too: a round is spent on it anyway.
https://docs.github.com/en/rest/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from magi.app.context import AppContext
from magi.core.threads.posting import code
from magi.github.models import CheckRun, PullRequest, Repo
from magi.github.port import GitHubError, GitHubPort

__all__ = ["RERUN", "rerun_once", "rerun_ref", "runs_to_rerun"]

RERUN = "rerun"  # marker of a re-run: sha=, runs=
_RUN = re.compile(r"^https://[^/]+/([^/]+)/([^/]+)/actions/runs/(\d+)/job/\d+/?$")


def rerun_ref(number: int, sha: str) -> str:
    return f"refs/magi/rerun/{number}/{sha}"


def _run_of(check: CheckRun, repo: Repo) -> int | None:
    """The Actions run of this repository behind ``check``, or None."""
    if check.app is None or check.app.slug != "github-actions" or not check.details_url:
        return None
    m = _RUN.match(check.details_url.split("?", 1)[0])
    if m is None or f"{m[1]}/{m[2]}".lower() != repo.full_name.lower():
        return None
    return int(m[3])


def runs_to_rerun(red: Sequence[str], checks: Sequence[CheckRun], repo: Repo) -> list[int]:
    """The Actions runs to re-run for the red checks named ``red``; [] unless every one of
    them is an Actions job here (one that is not goes to the fixer, which then sees all)."""
    runs: list[int] = []
    for name in red:
        found = [c for c in checks if c.name == name]
        ids = [_run_of(c, repo) for c in found]
        if not found or any(i is None for i in ids):
            return []
        runs += [i for i in ids if i is not None]
    return list(dict.fromkeys(runs))


async def rerun_once(
    ctx: AppContext, gh: GitHubPort, repo: Repo, pull: PullRequest, red: Sequence[str]
) -> str | None:
    """Re-run ``red`` once for ``pull``'s head; the outcome, or None to spend a fix round."""
    if not red:
        return None  # changes requested, not a red check
    runs = runs_to_rerun(red, await gh.list_check_runs(repo, pull.head.sha), repo)
    if not runs:
        return None
    if not await gh.create_ref(repo, rerun_ref(pull.number, pull.head.sha), pull.head.sha):
        return None  # re-run once for this head already: a failure that reproduces
    done = []
    for run in runs:
        try:
            await gh.rerun_failed_jobs(repo, run)
            done.append(run)
        except GitHubError as exc:
            if exc.status not in (403, 404, 409, 422):
                raise
    if not done:
        return None  # GitHub would not re-run them: the fixer gets the failure
    names = ", ".join(code(n) for n in red)
    await gh.create_comment(
        repo,
        pull.number,
        f"Landing: {names} failed on `{pull.head.sha[:12]}`; re-running the failed jobs once "
        "before spending a fix round (a flaky failure should not pay an agent). If it fails "
        "again on this head, the fixer gets it.\n\n"
        + ctx.seal.marker(RERUN, sha=pull.head.sha, runs=",".join(map(str, done))),
    )
    return "rerun"
