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

A failure that is the machine's, not the code's, never spends a fix round: when every red
job's log tail (``GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs``, ``actions:
read``; a 302 to a signed URL) or conclusion shows it (the runner shut down or lost, the job
cancelled or never picked up: ``magi.core.threads.infra``), the failed jobs are re-run up to
``INFRA_RERUNS`` times for the head (``refs/magi/rerun/<pr>/<head>``, then ``-2``, ``-3``),
each said on the PR; past that magi says so and waits for a person, still spending no
round.
https://docs.github.com/en/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run
https://docs.github.com/en/rest/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from magi.app.context import AppContext, reply_once
from magi.core.threads.approval import GREEN
from magi.core.threads.infra import INFRA_CONCLUSIONS, Ran, infra_failure
from magi.core.threads.posting import code
from magi.github.models import CheckRun, PullRequest, Repo, WorkflowJob
from magi.github.port import GitHubError, GitHubPort

__all__ = ["INFRA_RERUNS", "RERUN", "machine_failures", "rerun_once", "rerun_ref", "runs_to_rerun"]

RERUN = "rerun"  # marker of a re-run: sha=, runs=, n=
INFRA_RERUNS = 3  # re-runs of one head whose every red job failed for the machine's reasons
MAX_LOGS = 5  # job logs read for one decision (one call each, and a redirect)
LOG_BYTES = 64 * 1024  # the tail read: where the runner says why it stopped
_RUN = re.compile(r"^https://[^/]+/([^/]+)/([^/]+)/actions/runs/(\d+)/job/\d+/?$")
_JOB = re.compile(r"/actions/runs/\d+/job/(\d+)/?$")


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


async def machine_failures(
    gh: GitHubPort, repo: Repo, red: Sequence[str], checks: Sequence[CheckRun]
) -> dict[str, str]:
    """Each red check's rule showing the machine failed, read from its job's facts
    (``GET /repos/{o}/{r}/actions/runs/{run_id}/jobs``: its runner, its steps' conclusions)
    and log tail (``GET /repos/{o}/{r}/actions/jobs/{job_id}/logs``, read only when no step
    failed); {} unless every one of them did."""
    found: dict[str, str] = {}
    jobs = [
        c
        for name in red
        for c in checks
        if c.name == name and c.status == "completed" and (c.conclusion or "") not in GREEN
    ]
    if not jobs or len(jobs) > MAX_LOGS:
        return {}  # many red jobs at once are more likely the code's than the machines'
    facts: dict[int, list[WorkflowJob]] = {}
    for c in jobs:
        log, ran = None, None
        job, run = _job_of(c), _run_of(c, repo)
        if (c.conclusion or "") not in INFRA_CONCLUSIONS and job and run:
            ran = await _ran(gh, repo, run, job, facts)
            if ran is not None and ran.runner and "failure" not in ran.steps:
                log = await gh.job_log_tail(repo, job, max_bytes=LOG_BYTES)
        words = infra_failure(c.conclusion, log, ran)
        if words is None:
            return {}
        found[c.name] = words
    return found


async def _ran(
    gh: GitHubPort, repo: Repo, run: int, job: int, facts: dict[int, list[WorkflowJob]]
) -> Ran | None:
    """The jobs API's facts about ``job`` (one call per run), or None when GitHub has none."""
    if run not in facts:
        try:
            facts[run] = await gh.list_run_jobs(repo, run)
        except GitHubError as exc:
            if exc.status != 404:
                raise
            facts[run] = []
    for j in facts[run]:
        if j.id == job:
            return Ran(j.runner_name or "", tuple(s.conclusion for s in j.steps))
    return None


def _job_of(check: CheckRun) -> int | None:
    m = _JOB.search((check.details_url or "").split("?", 1)[0])
    return int(m[1]) if m else None


def _why(infra: dict[str, str]) -> str:
    # the rule's own words (magi's), never the log's: the log is the code's to write
    return "; ".join(f"{code(n)}: {w}" for n, w in infra.items())


async def _claim(gh: GitHubPort, repo: Repo, pull: PullRequest, bound: int) -> int | None:
    """The number of this head's re-run, claimed by creating its ref (GitHub creates a ref
    once: of two events at once one re-runs), or None when ``bound`` are spent."""
    for n in range(1, bound + 1):
        ref = rerun_ref(pull.number, pull.head.sha) + (f"-{n}" if n > 1 else "")
        if await gh.create_ref(repo, ref, pull.head.sha):
            return n
    return None


async def _rerun(gh: GitHubPort, repo: Repo, runs: Sequence[int]) -> list[int]:
    done = []
    for run in runs:
        try:
            await gh.rerun_failed_jobs(repo, run)
            done.append(run)
        except GitHubError as exc:
            if exc.status not in (403, 404, 409, 422):
                raise
    return done


async def rerun_once(
    ctx: AppContext,
    gh: GitHubPort,
    repo: Repo,
    pull: PullRequest,
    red: Sequence[str],
    checks: Sequence[CheckRun] | None = None,
) -> str | None:
    """Re-run ``red`` for ``pull``'s head; the outcome, or None to spend a fix round.

    Once per head; up to ``INFRA_RERUNS`` times when every red job failed for the machine's
    reasons (``machine_failures``), which never spends a fix round: past the bound it is
    said, and a person looks at the runners. ``checks``: the head's check runs, when read
    already."""
    if not red:
        return None  # changes requested, not a red check
    if checks is None:
        checks = await gh.list_check_runs(repo, pull.head.sha)
    runs = runs_to_rerun(red, checks, repo)
    if not runs:
        return None
    infra = await machine_failures(gh, repo, red, checks)
    attempt = await _claim(gh, repo, pull, INFRA_RERUNS if infra else 1)
    names, sha = ", ".join(code(n) for n in red), pull.head.sha
    if attempt is None:
        if not infra:
            return None  # re-run once for this head already: a failure that reproduces
        await reply_once(
            ctx,
            gh,
            repo,
            pull.number,
            f"infra-{sha[:12]}",
            f"Landing: {names} failed on `{sha[:12]}` for the machine's reasons again "
            f"({_why(infra)}); magi re-ran the failed jobs {INFRA_RERUNS} times and spends no "
            "fix round on it. Look at the runners, then re-run the jobs: a green re-run lands "
            "as usual.",
            sha,
        )
        return "infra-exhausted"
    done = await _rerun(gh, repo, runs)
    if not done:
        return "infra-rerun-refused" if infra else None  # GitHub would not re-run them
    if infra:
        words = (
            f"Landing: {names} failed on `{sha[:12]}` and the job log shows the machine "
            f"failed, not the code ({_why(infra)}); re-running the failed jobs ({attempt} of "
            f"{INFRA_RERUNS}). An infrastructure failure never spends a fix round."
        )
    else:
        words = (
            f"Landing: {names} failed on `{sha[:12]}`; re-running the failed jobs once "
            "before spending a fix round (a flaky failure should not pay an agent). If it "
            "fails again on this head, the fixer gets it."
        )
    marker = ctx.seal.marker(RERUN, sha=sha, runs=",".join(map(str, done)), n=attempt)
    await gh.create_comment(repo, pull.number, f"{words}\n\n{marker}")
    return "rerun-infra" if infra else "rerun"
