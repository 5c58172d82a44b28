"""The run record kept in the repository: ``refs/magi/runs/<id>``, one commit per change.

The commit's tree holds ``run.json`` and ``artifacts/`` (both as the posting gate left them),
before the tally ``sealed.txt`` (``magi.action.seal``: opened only by a runner of the pool),
and ``published.json``: what publish last pushed (branch -> sha, the leases of the next
publish), the pull request and the attempt it counted. A later job on any runner (a fix
round, ``/magi retry``, the App's stats) reads the run from here. Publishing a tree equal
to the current one writes nothing, which is what makes publish idempotent here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from magi.action.seal import PANEL, SEALED
from magi.git.repo import NEUTRAL_EMAIL, NEUTRAL_NAME, Git

__all__ = ["Published", "build_commit", "read_published", "record_ref"]

PUBLISHED = "published.json"


def record_ref(run_id: str) -> str:
    return f"refs/magi/runs/{run_id}"


@dataclass(frozen=True)
class Published:
    """What the last publish of a run did, as stored beside its record."""

    branches: Mapping[str, str] = field(default_factory=dict)  # branch -> sha pushed
    pr: int | None = None
    issue: int | None = None
    counted: bool = False  # this run's attempt was counted on the issue
    # The stage dispatched for the state published (a run handed off): its key, so that a
    # publish re-run of the same state does not dispatch it twice.
    dispatched: str = ""

    def to_json(self) -> str:
        data = {
            "branches": dict(sorted(self.branches.items())),
            "pr": self.pr,
            "issue": self.issue,
            "counted": self.counted,
            "dispatched": self.dispatched,
        }
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Published:
        data: dict[str, Any] = json.loads(text)
        branches = data.get("branches") or {}
        return cls(
            branches={str(k): str(v) for k, v in branches.items()},
            pr=data.get("pr"),
            issue=data.get("issue"),
            counted=bool(data.get("counted")),
            dispatched=str(data.get("dispatched") or ""),
        )


def read_published(git: Git, commit: str | None) -> Published:
    """The ``published.json`` of a record commit (empty when there is none)."""
    if commit is None:
        return Published()
    text = git.run("cat-file", "blob", f"{commit}:{PUBLISHED}", check=False)
    return Published.from_json(text) if text.strip() else Published()


def _blob(git: Git, text: str) -> str:
    return git.run("hash-object", "-w", "--stdin", input=text).strip()


def _tree(git: Git, entries: list[str]) -> str:
    return git.run("mktree", input="".join(f"{e}\n" for e in sorted(entries))).strip()


def _fork_id(run_json: str) -> str:
    try:
        found = json.loads(run_json).get("fork_id", "")
    except (ValueError, AttributeError):
        return ""
    return found if isinstance(found, str) else ""


def fork_id_of(git: Git, commit: str) -> str:
    """The fork id the record at ``commit`` names ('' for none)."""
    return _fork_id(git.run("cat-file", "blob", f"{commit}:run.json", check=False))


def build_commit(
    git: Git,
    *,
    run_json: str,
    artifacts: Mapping[str, str],
    published: Published,
    parent: str | None,
    message: str,
    sealed: str | None = None,
    keep_fork: bool = False,
    panel: str | None = None,
) -> str | None:
    """A record commit on ``parent``; None when its tree would be ``parent``'s own.
    ``sealed``: the run sealed for the pool's runners (before the tally only).
    ``panel``: a judges' forked wave's panel, for its seat jobs (``agents_job.panel``).
    ``keep_fork``: the run's wave is forked: the seat jobs' results ``parent`` holds stay."""
    files = [f"100644 blob {_blob(git, text)}\t{name}" for name, text in artifacts.items()]
    entries = [
        f"100644 blob {_blob(git, run_json)}\trun.json",
        f"100644 blob {_blob(git, published.to_json())}\t{PUBLISHED}",
    ]
    if sealed is not None:
        entries.append(f"100644 blob {_blob(git, sealed)}\t{SEALED}")
    if panel is not None:
        entries.append(f"100644 blob {_blob(git, panel)}\t{PANEL}")
    if files:
        entries.append(f"040000 tree {_tree(git, files)}\tartifacts")
    if keep_fork and parent is not None:
        held = git.run("rev-parse", "--verify", "-q", f"{parent}:fork", check=False).strip()
        joined = git.run("rev-parse", "--verify", "-q", f"{parent}:fork/joined", check=False)
        # A joined wave's results are spent, and so are another fork's (a retry's join
        # marks nothing): a new fork's start afresh.
        if held and not joined.strip() and fork_id_of(git, parent) == _fork_id(run_json):
            entries.append(f"040000 tree {held}\tfork")
    tree = _tree(git, entries)
    if parent is not None and git.run("rev-parse", f"{parent}^{{tree}}").strip() == tree:
        return None
    ident = ("-c", f"user.name={NEUTRAL_NAME}", "-c", f"user.email={NEUTRAL_EMAIL}")
    args = [*ident, "commit-tree", tree, "-m", message]
    if parent is not None:
        args += ["-p", parent]
    return git.run(*args).strip()
