"""``magi action compete``: the agents job. Runs the competition; holds no credential.

It refuses to start where a credential is within the agents' reach (a token in its own
environment, or one the checkout's git config would hand to every worktree), reads the task
from the issue file an earlier job fetched, runs the competition (and, once the pipeline has
them, the review loop and gate) as ``magi run`` does, and writes the artifact. Run again on
the same runner for the same issue, it resumes the local record instead of starting over:
finished seats are never asked again, and a finished run is only written out again.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from magi import engine
from magi.action.artifact import BUNDLE, write_artifact
from magi.action.bundle import create_bundle
from magi.action.checkout import refuse_credentials
from magi.action.errors import ActionError, CredentialsInCheckout
from magi.action.log import LogReporter
from magi.config.model import Config
from magi.errors import MagiError
from magi.git import Git
from magi.seats import Reporter
from magi.state.model import Run, RunStatus
from magi.state.store import Store

__all__ = ["IssueTask", "compete", "find_run", "read_issue"]

# Variables that are write credentials when set for a step; the agents job must have none.
TOKEN_NAMES = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "MAGI_GITHUB_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
)


@dataclass(frozen=True)
class IssueTask:
    number: int
    title: str
    body: str

    @property
    def text(self) -> str:
        """The task as the agents get it (cleaned later, like every task): title, then body."""
        return f"{self.title.strip()}\n\n{self.body.strip()}\n" if self.body.strip() else self.title


def read_issue(path: Path, number: int) -> IssueTask:
    """The issue JSON (``gh api repos/o/r/issues/N``) written by the job before this one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ActionError(f"cannot read the issue file {path.name}: {e}") from None
    if not isinstance(data, dict) or data.get("number") != number:
        raise ActionError(f"the issue file is not issue #{number}")
    if data.get("pull_request"):
        raise ActionError(f"#{number} is a pull request; magi competes on issues")
    return IssueTask(number, str(data.get("title") or ""), str(data.get("body") or ""))


def refuse_tokens(environ: Mapping[str, str]) -> None:
    """Any token in this process's environment is readable by agents (/proc/<pid>/environ)."""
    found = [n for n in TOKEN_NAMES if environ.get(n)]
    if found:
        raise CredentialsInCheckout(
            f"compete runs agents, but its environment holds {', '.join(found)}; an agent "
            "can read it from /proc. fix: set no token in the agents job's steps (env:)"
        )


def find_run(store: Store, repo: Path, issue: int) -> Run | None:
    """The newest local run of ``repo`` for ``issue`` (this runner's own record)."""
    source = f"issue:{issue}"
    for run_id in store.list_ids():
        try:
            run = store.load_run(run_id)
        except MagiError:
            continue  # another kind of record, or another magi's: not this issue's run
        if run.task.source == source and Path(run.repo) == repo:
            return run
    return None


def compete(
    *,
    cwd: Path,
    issue: IssueTask,
    store: Store,
    out: Path,
    environ: Mapping[str, str],
    reporter: Reporter,
    resume: str | None = None,
    rng: random.Random | None = None,
) -> Run:
    """Run (or resume) the competition for ``issue`` and write its artifact into ``out``."""
    refuse_tokens(environ)
    git = Git.discover(cwd)
    refuse_credentials(git.root)
    record = (
        store.load_run(store.resolve(resume)) if resume else find_run(store, git.root, issue.number)
    )
    if record is not None and record.status.resumable:
        _hide(reporter, record.config)
        reporter.note(f"resuming run {record.id} ({record.status.value}) for #{issue.number}")
        record = engine.resume(store, record.id, environ=environ, reporter=reporter).run
    elif record is None or record.status is RunStatus.FAILED:
        # A failed run is an attempt spent; `/magi retry` after it is a new competition.
        config = engine.preflight(git.root, None, environ, reporter)
        _hide(reporter, config)
        record = engine.start(
            task=issue.text,
            source=f"issue:{issue.number}",
            config=config,
            git=git,
            store=store,
            environ=environ,
            reporter=reporter,
            rng=rng,
        ).run
    else:
        reporter.note(f"run {record.id} already ended {record.status.value}; writing it out")
    out.mkdir(parents=True, exist_ok=True)
    (out / BUNDLE).unlink(missing_ok=True)
    heads = create_bundle(git, record, out / BUNDLE)
    write_artifact(record, store, out, heads, issue.number)
    return record


def _hide(reporter: Reporter, config: Config) -> None:
    """A job log is public to the repository's readers: it names no agent of this roster."""
    if isinstance(reporter, LogReporter):
        reporter.with_roster(config.agents)
