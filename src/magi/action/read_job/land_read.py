"""``magi action land-read``: the fix round's input, from what the read step fetched.

The workflow's read step holds the job's read-only token and saves GitHub's answers as
files (``gh api``): ``pull.json``, ``check-runs.json`` for the head, ``annotations-<id>.json``
for each red check run, ``reviews.json`` and ``review-comments.json``. With
``--fetch-logs`` (same step, same read-only token) magi then fetches, for each red check
run that GitHub Actions ran, the tail of its job's log (``fetch_job_logs``: the job id is
the last part of the check run's ``details_url``, ``.../actions/runs/<run>/job/<job>``;
``external_id`` is Actions' own GUID, not the job id, and the check run id is not
promised to equal it) into ``job-<check id>.log``. This turns them into one ``RoundInput``
file for the agents step, which has no credential and no network need. Raw GitHub JSON
stops here: lenient models (GitHub adds fields), only what a round needs.

A log goes to an agent, not to GitHub, so what applies is what applies to every prompt
(``scrub_log``): secrets redacted (``core.text.sanitize.redact_secrets``: a token a step echoed
that Actions did not mask), terminal escapes and control characters dropped, Actions'
timestamps cut, and only the last ``LOG_LINES`` lines kept (fetched: the last
``LOG_BYTES``). Paths and ``@mentions`` stay: they help the fixer and reach no one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from magi.core.text.sanitize import redact_secrets, strip_controls
from magi.core.threads.approval import GREEN, reviewer_counts
from magi.core.threads.landing import Review, changes_requested
from magi.errors import ConfigError
from magi.github.models import Repo
from magi.github.port import GitHubError, GitHubPort
from magi.github.state import repo_config
from magi.model.fix_round import FailedCheck, ReviewNote, RoundInput, tail

__all__ = [
    "LOG_BYTES",
    "LOG_LINES",
    "fetch_job_logs",
    "fetch_reviewers",
    "job_id",
    "read_round_input",
    "scrub_log",
]

LOG_BYTES = 64 * 1024
LOG_LINES = 200
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_STAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ", re.M)
_JOB = re.compile(r"/actions/runs/\d+/job/(\d+)/?$")


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _User(_Lenient):
    login: str = ""
    type: str = "User"


class _Output(_Lenient):
    title: str | None = None
    summary: str | None = None
    text: str | None = None


class _App(_Lenient):
    slug: str = ""


class _CheckRun(_Lenient):
    id: int = 0
    name: str
    status: str = ""
    conclusion: str | None = None
    output: _Output = Field(default_factory=_Output)
    details_url: str | None = None
    app: _App | None = None


class _Annotation(_Lenient):
    path: str = ""
    start_line: int | None = None
    annotation_level: str = ""
    message: str = ""


class _Review(_Lenient):
    state: str = ""
    body: str | None = None
    user: _User | None = None


class _ReviewComment(_Lenient):
    body: str = ""
    path: str | None = None
    line: int | None = None
    user: _User | None = None


class _RepoOf(_Lenient):
    default_branch: str = ""


class _Ref(_Lenient):
    ref: str = ""
    sha: str = ""
    repo: _RepoOf | None = None


class _Reviewers(_Lenient):
    """``reviewers.json``: each reviewer's permission, and the bots config trusts."""

    permissions: dict[str, str] = Field(default_factory=dict)
    trusted_bots: list[str] = Field(default_factory=list)


class _Pull(_Lenient):
    number: int
    head: _Ref
    base: _Ref


def _load(path: Path, default: Any) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else default


def scrub_log(text: str, lines: int = LOG_LINES) -> str:
    """A job log's tail as an agent may read it (see the module docstring)."""
    text = _STAMP.sub("", strip_controls(_ANSI.sub("", text.replace("\r\n", "\n"))))
    kept = text.splitlines()[-lines:]
    return redact_secrets("\n".join(kept), "job log")[0]


def _clean(text: str) -> str:
    """Check output and review text bound for the agent: no secrets, no control bytes."""
    return redact_secrets(strip_controls(_ANSI.sub("", text)), "landing input")[0]


def job_id(run: _CheckRun) -> int | None:
    """The Actions job behind a check run, from its ``details_url``; None for other apps."""
    if run.app is None or run.app.slug != "github-actions" or not run.details_url:
        return None
    m = _JOB.search(run.details_url.split("?", 1)[0])
    return int(m.group(1)) if m else None


def _red(raw: Path) -> list[_CheckRun]:
    data = _load(raw / "check-runs.json", {"check_runs": []})
    runs = [_CheckRun.model_validate(r) for r in data.get("check_runs", [])]
    return [r for r in runs if r.status == "completed" and (r.conclusion or "") not in GREEN]


async def fetch_job_logs(gh: GitHubPort, repo: Repo, raw: Path) -> list[str]:
    """Each red Actions check's job log tail into ``job-<check id>.log``; what was missed."""
    missed = []
    for r in _red(raw):
        job = job_id(r)
        if job is None:
            continue
        try:
            text = await gh.job_log_tail(repo, job, max_bytes=LOG_BYTES)
        except GitHubError as e:
            missed.append(f"{r.name}: {e.message}")
            continue
        if text is None:
            missed.append(f"{r.name}: GitHub keeps no log for job {job}")
            continue
        (raw / f"job-{r.id}.log").write_text(scrub_log(text), encoding="utf-8")
    return missed


def _reviewer_logins(raw: Path) -> set[str]:
    found = [_Review.model_validate(r).user for r in _load(raw / "reviews.json", [])]
    found += [
        _ReviewComment.model_validate(c).user for c in _load(raw / "review-comments.json", [])
    ]
    return {u.login for u in found if u is not None and u.login}


async def fetch_reviewers(gh: GitHubPort, repo: Repo, raw: Path) -> None:
    """``reviewers.json``: the permission of everyone who reviewed, and ``[github]
    trusted_bots`` from the default branch's config (never the PR's own): only writers' and
    trusted bots' reviews reach the fixer (``core.threads.approval.reviewer_counts``)."""
    pull = _Pull.model_validate(_load(raw / "pull.json", {}))
    branch = pull.base.repo.default_branch if pull.base.repo else ""
    trusted: list[str] = []
    if branch:
        try:
            trusted = (await repo_config(gh, repo, branch)).github.trusted_bots
        except ConfigError:
            trusted = []  # an invalid config trusts no bot
    permissions = {}
    for login in sorted(_reviewer_logins(raw)):
        if login.lower().endswith("[bot]"):
            continue
        permissions[login] = (await gh.permission(repo, login)).permission
    data = _Reviewers(permissions=permissions, trusted_bots=trusted)
    (raw / "reviewers.json").write_text(data.model_dump_json(indent=2) + "\n", encoding="utf-8")


def read_round_input(raw: Path, pr: int, app_login: str | None = None) -> RoundInput:
    """The round's input from the read step's files in ``raw``."""
    pull = _Pull.model_validate(_load(raw / "pull.json", {}))
    if pull.number != pr:
        raise ValueError(f"pull.json is PR #{pull.number}, not #{pr}")
    parts = pull.head.ref.split("/")
    run = parts[1] if len(parts) >= 3 and parts[0] == "magi" else ""
    checks = []
    for r in _red(raw):
        log = raw / f"job-{r.id}.log"
        found = [_Annotation.model_validate(a) for a in _load(raw / f"annotations-{r.id}.json", [])]
        checks.append(
            FailedCheck(
                name=r.name,
                conclusion=r.conclusion or "failure",
                summary=_clean(r.output.summary or r.output.title or ""),
                text=_clean(tail(r.output.text or "")),
                annotations=[
                    _clean(f"{a.path}:{a.start_line or ''} {a.annotation_level}: {a.message}")
                    for a in found
                ][:50],
                log=scrub_log(log.read_text(encoding="utf-8", errors="replace"))
                if log.is_file()
                else "",
            )
        )
    own = (app_login or "").lower()
    known = _Reviewers.model_validate(_load(raw / "reviewers.json", {}))

    def who(u: _User | None) -> str:
        return u.login if u else ""

    def counts(u: _User | None) -> bool:
        # A review is agent input: a stranger's (or an untrusted bot's) reaches no fixer.
        # Without reviewers.json nobody's permission is known, so no review counts.
        return u is not None and reviewer_counts(
            u.login, u.type, known.permissions.get(u.login), known.trusted_bots
        )

    reviews = [
        r
        for r in (_Review.model_validate(r) for r in _load(raw / "reviews.json", []))
        if counts(r.user)
    ]
    asking = set(changes_requested([Review(who(r.user), r.state) for r in reviews]))
    notes = [
        ReviewNote(login=who(r.user), body=_clean(r.body or ""))
        for r in reviews
        if who(r.user) in asking and (r.body or "").strip()
    ]
    for c in (_ReviewComment.model_validate(x) for x in _load(raw / "review-comments.json", [])):
        if who(c.user).lower() in {own, own.removesuffix("[bot]")} and own:
            continue  # magi's own words are not a request
        if not counts(c.user):
            continue
        body = _clean(c.body)
        notes.append(ReviewNote(login=who(c.user), body=body, path=c.path, line=c.line))
    return RoundInput(
        pr=pr,
        run=run,
        head=pull.head.sha,
        base=pull.base.sha,
        base_ref=pull.base.ref,
        checks=checks,
        reviews=notes,
    )
