"""``magi action land-read``: the fix round's input, from what the read step fetched.

The workflow's read step holds the job's read-only token and saves GitHub's answers as
files (``gh api``): ``pull.json``, ``check-runs.json`` for the head, ``annotations-<id>.json``
for each red check run, ``reviews.json`` and ``review-comments.json``. This turns them into
one ``RoundInput`` file for the agents step, which has no credential and no network need.
Raw GitHub JSON stops here: lenient models (GitHub adds fields), only what a round needs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from magi.core.approval import GREEN
from magi.core.fix_round import FailedCheck, ReviewNote, RoundInput, tail
from magi.core.landing import Review, changes_requested

__all__ = ["read_round_input"]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _User(_Lenient):
    login: str = ""


class _Output(_Lenient):
    title: str | None = None
    summary: str | None = None
    text: str | None = None


class _CheckRun(_Lenient):
    id: int = 0
    name: str
    status: str = ""
    conclusion: str | None = None
    output: _Output = Field(default_factory=_Output)


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


class _Ref(_Lenient):
    ref: str = ""
    sha: str = ""


class _Pull(_Lenient):
    number: int
    head: _Ref
    base: _Ref


def _load(path: Path, default: Any) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else default


def read_round_input(raw: Path, pr: int, app_login: str | None = None) -> RoundInput:
    """The round's input from the read step's files in ``raw``."""
    pull = _Pull.model_validate(_load(raw / "pull.json", {}))
    if pull.number != pr:
        raise ValueError(f"pull.json is PR #{pull.number}, not #{pr}")
    parts = pull.head.ref.split("/")
    run = parts[1] if len(parts) >= 3 and parts[0] == "magi" else ""
    runs_data = _load(raw / "check-runs.json", {"check_runs": []})
    runs = [_CheckRun.model_validate(r) for r in runs_data.get("check_runs", [])]
    checks = []
    for r in runs:
        if r.status != "completed" or (r.conclusion or "") in GREEN:
            continue
        found = [_Annotation.model_validate(a) for a in _load(raw / f"annotations-{r.id}.json", [])]
        checks.append(
            FailedCheck(
                name=r.name,
                conclusion=r.conclusion or "failure",
                summary=r.output.summary or r.output.title or "",
                text=tail(r.output.text or ""),
                annotations=[
                    f"{a.path}:{a.start_line or ''} {a.annotation_level}: {a.message}"
                    for a in found
                ][:50],
            )
        )
    own = (app_login or "").lower()

    def who(u: _User | None) -> str:
        return u.login if u else ""

    reviews = [_Review.model_validate(r) for r in _load(raw / "reviews.json", [])]
    asking = set(changes_requested([Review(who(r.user), r.state) for r in reviews]))
    notes = [
        ReviewNote(login=who(r.user), body=r.body or "")
        for r in reviews
        if who(r.user) in asking and (r.body or "").strip()
    ]
    for c in (_ReviewComment.model_validate(x) for x in _load(raw / "review-comments.json", [])):
        if who(c.user).lower() in {own, own.removesuffix("[bot]")} and own:
            continue  # magi's own words are not a request
        notes.append(ReviewNote(login=who(c.user), body=c.body, path=c.path, line=c.line))
    return RoundInput(
        pr=pr, run=run, head=pull.head.sha, base=pull.base.sha, checks=checks, reviews=notes
    )
