"""A run this runner never saw: carried on from ``refs/magi/runs/<id>`` when it may be.

``/magi retry`` names the run it retries, and the job may land on any runner with magi's
labels. When this runner's store lacks the run, the record publish keeps in the repository
is read (the compete job's records step fetched it, with the read token, into a bare
repository of its own). What it says decides:

* **after the tally** the record is whole (authors are out, the candidates' branches are on
  GitHub, and the checkout fetched them): the run is made again in this store from it, on
  this checkout, with this runner's resolution of the repository's config (the record's own
  has its local paths gated away), and goes on from the node it stopped at; no seat that
  finished is asked again. The seats' CLI conversations stayed on the runner that held
  them, so their next turns are sent their full context, and the record says so;
* **before the tally** the published copy ties no candidate to an agent
  (``magi.report.before_tally``), so it cannot be carried on anywhere but on the
  runner that holds the run: a new competition starts under a new id, the old record
  untouched, and the new run says why;
* **failed**: an attempt spent; ``/magi retry`` after it is a new competition, as on the
  runner that ran it;
* **otherwise ended** (ready, blocked, merged...): nothing to carry on; said, with the state.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from magi.errors import ActionError, MagiError
from magi.git.repo import Git
from magi.model.config import Config
from magi.model.run import Event, Run, RunStatus
from magi.report import revealed
from magi.seats.day_spend import RUNS
from magi.state.store import Store, parse_record

__all__ = ["Adopted", "adopt"]

ARTIFACTS = "artifacts/"


@dataclass(frozen=True)
class Adopted:
    """What the record ref said: a run to resume (made in this store), or why a new one."""

    run: Run | None = None
    fresh_because: str | None = None  # a new competition, under a new id, and why


def _show(records: Git, spec: str) -> str | None:
    done = records._exec(["cat-file", "blob", spec], check=False)
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def published(records: Path | None, run_id: str) -> Run | None:
    """The run ``refs/magi/runs/<run_id>`` holds in the fetched records, if any."""
    if records is None or not records.is_dir():
        return None
    bare = Git(records)
    text = _show(bare, f"{RUNS}{run_id}:run.json")
    if text is None:
        return None
    try:
        record = parse_record(text, path=Path(f"{RUNS}{run_id}:run.json"), run_id=run_id)
    except MagiError as e:
        raise ActionError(f"{RUNS}{run_id} cannot be carried on: {e.message}") from None
    if not isinstance(record, Run):
        raise ActionError(f"{RUNS}{run_id} is not a competition's record")
    return record


def adopt(
    *, records: Path | None, run_id: str, issue: int, store: Store, git: Git, config: Config
) -> Adopted | None:
    """``run_id`` from the record ref, made in ``store`` when it may be carried on; None when
    the repository holds no record of it (a new run of that id, the App's)."""
    run = published(records, run_id)
    if run is None:
        return None
    if run.task.source != f"issue:{issue}":
        raise ActionError(f"run {run_id} is not issue #{issue}'s")
    where = f"{RUNS}{run_id}"
    if run.status is RunStatus.FAILED:
        return Adopted(fresh_because=f"run {run_id} failed ({where}): this is a new attempt")
    if run.status.finished:
        raise ActionError(
            f"run {run_id} already ended {run.status.value} ({where}); nothing to carry on"
        )
    if not revealed(run):
        return Adopted(
            fresh_because=(
                f"run {run_id} stopped {run.status.value} before its tally on another runner; "
                f"its published record ({where}) ties no candidate to an agent, so only that "
                "runner can carry it on. This is a new competition (the old record is kept). "
                "Keep a repository's runs on one runner to resume them (docs/runner.md)"
            )
        )
    return Adopted(run=_remade(run, records, store, git, config))


def _remade(run: Run, records: Path | None, store: Store, git: Git, config: Config) -> Run:
    """``run`` on this checkout and in this store: branches at their recorded heads, no
    CLI session, this runner's config, the record ref's artifacts copied in."""
    missing = sorted({s.agent for s in run.seats.values()} - {a.id for a in config.agents})
    if missing:
        raise ActionError(
            f"run {run.id} cannot be carried on here: its seats' agents {', '.join(missing)} "
            "are not in this runner's config (the repository's config and this runner's "
            "user config)"
        )
    for c in run.candidates:
        c.worktree = None  # made again where needed (graph.winner.worktree)
        if not c.head:
            continue
        if not git.has_commit(c.head):
            won = run.tally is not None and c.label == run.tally.winner
            if won or not run.folded:  # fold still pins every head it removes
                raise ActionError(
                    f"run {run.id} cannot be carried on here: candidate {c.label}'s head "
                    f"{c.head[:12]} ({c.branch}) is not in this checkout. publish pushes "
                    "the candidates to GitHub after the tally (not one that changes a "
                    "workflow, unless [github] workflow_changes), and the checkout fetches "
                    "every branch (fetch-depth: 0)"
                )
            continue
        git.run("update-ref", f"refs/heads/{c.branch}", c.head)
    moved = sorted(name for name, seat in run.seats.items() if seat.session_id)
    for name in moved:
        run.seats[name].session_id = None
    root = Path(config.graph.worktree_root).expanduser() if config.graph.worktree_root else None
    run.repo = str(git.root)
    run.worktree_root = str((root or store.home / "worktrees") / run.id)
    run.config = config
    run.processes = []
    store.create(run)
    try:
        _copy_artifacts(records, run.id, store.run_dir(run.id))
    except BaseException:
        # Half made is not made: the next retry must find no run here, not resume this.
        store.unlock(run.id)
        shutil.rmtree(store.run_dir(run.id), ignore_errors=True)
        raise
    note = f"carried on from {RUNS}{run.id} on another runner: " + (
        f"the conversations of {', '.join(moved)} stayed on the runner that held them, "
        "so their next turns are sent their full context"
        if moved
        else "no seat had a conversation to carry"
    )
    run.events.append(Event(at=datetime.now(UTC), node="run", message=note, level="warn"))
    store.save(run)
    store.unlock(run.id)
    return run


def _copy_artifacts(records: Path | None, run_id: str, run_dir: Path) -> None:
    """The record ref's ``artifacts/`` (prompts, replies, transcripts) into the run's
    folder, so the next publish, which stores what the run's folder holds, loses none."""
    if records is None:
        return
    bare = Git(records)
    listing = bare._exec(
        ["ls-tree", "-r", "-z", "--name-only", f"{RUNS}{run_id}", "--", ARTIFACTS], check=False
    )
    if listing.returncode:
        return
    out = run_dir / "artifacts"
    out.mkdir(exist_ok=True)
    for name in filter(None, listing.stdout.decode("utf-8", "replace").split("\0")):
        leaf = name.removeprefix(ARTIFACTS)
        if "/" in leaf or leaf.startswith("."):
            continue  # magi writes a flat folder: anything else is not its
        text = _show(bare, f"{RUNS}{run_id}:{name}")
        if text is not None and not (out / leaf).exists():
            (out / leaf).write_text(text, encoding="utf-8")
