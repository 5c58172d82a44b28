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
  (``magi.report.before_tally``) and no candidate's code was pushed; what carries the run
  on is the copy sealed beside it with the runner key (``magi.action.seal``). A runner that
  holds the same key opens it, fetches the candidates' branches from its bundle and goes on
  as above (a question's answer included). Without it (no sealed copy, no key here, another
  key) a new competition starts under a new id, the old record untouched, and the new run
  says why; a sealed copy that does not open is refused;
* **failed**: an attempt spent; ``/magi retry`` after it is a new competition, as on the
  runner that ran it;
* **otherwise ended** (ready, blocked, merged...): nothing to carry on; said, with the state.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from magi.action.seal import (
    BUNDLE,
    KEY_FILE,
    SEALED,
    RunnerKey,
    Sealed,
    load_key,
    open_sealed,
    parse_sealed,
)
from magi.errors import ActionError, MagiError
from magi.git import clones
from magi.git.repo import Git
from magi.model.config import Config
from magi.model.run import Event, Run, RunStatus
from magi.report import revealed
from magi.report.before_tally import HIDDEN
from magi.seats.day_spend import RUNS
from magi.state.runner_key import PANEL_FILE
from magi.state.store import RECORD, Store, parse_record

__all__ = ["Adopted", "adopt", "behind", "set_aside"]

ARTIFACTS = "artifacts/"


@dataclass(frozen=True)
class Adopted:
    """What the record ref said: a run to resume (made in this store), or why a new one."""

    run: Run | None = None
    fresh_because: str | None = None  # a new competition, under a new id, and why
    why: str | None = None  # the same, short: why this runner cannot carry it on


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


def behind(records: Path | None, run: Run) -> int | None:
    """How many events the published record holds when it has gone further than ``run``,
    this runner's own copy (another runner carried the run on since this one last held it:
    a run's events only grow, and publish adds none); None otherwise."""
    pub = published(records, run.id)
    if pub is None or pub.task.source != run.task.source:
        return None
    return len(pub.events) if len(pub.events) > len(run.events) else None


def set_aside(store: Store, run_id: str) -> Path:
    """This runner's copy of ``run_id`` moved to ``runs/<id>.behind-<n>``, which no listing
    reads as a run; refused (RunLockedError) while a live process holds the run."""
    store.lock(run_id)
    store.unlock(run_id)
    here = store.run_dir(run_id)
    n = 1
    while (aside := here.with_name(f"{run_id}.behind-{n}")).exists():
        n += 1
    here.rename(aside)
    return aside


def adopt(
    *,
    records: Path | None,
    run_id: str,
    issue: int,
    store: Store,
    git: Git,
    config: Config,
    host: str | None = None,
) -> Adopted | None:
    """``run_id`` from the record ref, made in ``store`` when it may be carried on; None when
    the repository holds no record of it (a new run of that id, the App's). ``host``: this
    runner's name; a seat whose conversation lives here keeps it."""
    run = published(records, run_id)
    if run is None:
        return None
    if run.task.source != f"issue:{issue}":
        raise ActionError(f"run {run_id} is not issue #{issue}'s")
    where = f"{RUNS}{run_id}"
    if run.status is RunStatus.FAILED:
        return Adopted(
            fresh_because=f"run {run_id} failed ({where}): this is a new attempt",
            why=f"it failed ({where})",
        )
    if run.status.finished:
        raise ActionError(
            f"run {run_id} already ended {run.status.value} ({where}); nothing to carry on"
        )
    if revealed(run):
        files = _record_artifacts(records, run_id)
        return Adopted(run=_remade(run, store, git, config, files, host=host))
    text = _show(Git(records), f"{where}:{SEALED}") if records is not None else None
    key = load_key(store.home)
    sealed = parse_sealed(text, f"{where}:{SEALED}") if text is not None else None
    if sealed is None:
        why = "the runner that ran it sealed no copy of it (it holds no runner key)"
    elif key is None and (store.home / PANEL_FILE).exists():
        # A runner that only seats judges: it carries no run on, nor starts one in its place.
        raise ActionError(
            f"run {run_id} stopped {run.status.value} before its tally, and this runner holds "
            f"the panel key alone ($MAGI_HOME/{PANEL_FILE}): it seats judges from their panels "
            "and carries no run on. Give it only its judges' agents' labels (docs/runner.md, "
            '"A runner that only seats judges")'
        )
    elif key is None:
        why = f"this runner holds no runner key ($MAGI_HOME/{KEY_FILE})"
    elif sealed.fingerprint != key.fingerprint:
        why = f"its sealed copy needs runner key {sealed.fingerprint}, not this runner's"
    else:
        return Adopted(run=_unsealed(run, sealed, key, store, git, config, issue, host))
    return Adopted(
        fresh_because=(
            f"run {run_id} stopped {run.status.value} before its tally on another runner, and "
            f"{why}: its published record ({where}) ties no candidate to an agent, so this is "
            "a new competition (the old record is kept). Give every runner of the pool the "
            "same runner key to carry such runs on (docs/runner.md)"
        ),
        why=f"it stopped {run.status.value} before its tally on another runner, and {why}",
    )


def _unsealed(
    public: Run,
    sealed: Sealed,
    key: RunnerKey,
    store: Store,
    git: Git,
    config: Config,
    issue: int,
    host: str | None = None,
) -> Run:
    """The run as the runner that stopped it held it: its record, its artifacts and its
    candidates' branches, from the sealed copy beside the public record."""
    where = f"{RUNS}{public.id}:{SEALED}"
    base = public.base_sha or ""
    members = open_sealed(key, sealed, run_id=public.id, issue=issue, base=base, where=where)
    run = sealed_record(members, where, public.id)
    if (run.status, run.base_sha, run.task.source) != (
        public.status,
        public.base_sha,
        public.task.source,
    ):
        raise ActionError(
            f"{where} is not the published record's run as it stopped (another state of it): "
            "nothing carried on"
        )
    if BUNDLE in members:
        _fetch_candidates(git, run, members[BUNDLE], where)
    files = {k.removeprefix(ARTIFACTS): v for k, v in members.items() if k.startswith(ARTIFACTS)}
    return _remade(run, store, git, config, files, sealed_with=key.fingerprint, host=host)


def sealed_record(members: dict[str, bytes], where: str, run_id: str) -> Run:
    """The competition record a sealed text holds; ActionError naming ``where`` when it
    does not read as one."""
    if RECORD not in members:
        raise ActionError(f"{where}: it holds no {RECORD}")
    try:
        run = parse_record(
            members[RECORD].decode("utf-8"), path=Path(f"{where}:{RECORD}"), run_id=run_id
        )
    except (MagiError, UnicodeDecodeError) as e:
        why = e.message if isinstance(e, MagiError) else "not UTF-8"
        raise ActionError(f"{where}: its record cannot be read: {why}") from None
    if not isinstance(run, Run):
        raise ActionError(f"{where}: its record is not a competition's")
    return run


def _fetch_candidates(git: Git, run: Run, bundle: bytes, where: str) -> None:
    """The candidates' branches, from the sealed bundle into this checkout, each at the head
    the sealed record gives it (anything else in the bundle is not fetched)."""
    moved = [c for c in run.candidates if c.head and c.head != run.base_sha]
    for c in moved:
        if c.branch != f"magi/{run.id}/{c.label}":
            raise ActionError(f"{where}: candidate {c.label}'s branch is {c.branch!r}")
    if not moved:
        return
    with tempfile.TemporaryDirectory(prefix="magi-unseal-") as tmp:
        path = Path(tmp) / BUNDLE
        path.write_bytes(bundle)
        specs = [f"+refs/heads/{c.branch}:refs/heads/{c.branch}" for c in moved]
        done = git._exec(["fetch", "--quiet", "--no-tags", str(path), *specs], check=False)
    if done.returncode:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["(silent)"]
        raise ActionError(f"{where}: its candidates do not fetch: {said[0]}")
    for c in moved:
        if git.rev_parse(f"refs/heads/{c.branch}") != c.head:
            raise ActionError(f"{where}: candidate {c.label}'s branch is not at its recorded head")


def _remade(
    run: Run,
    store: Store,
    git: Git,
    config: Config,
    artifacts: dict[str, bytes],
    *,
    sealed_with: str | None = None,
    host: str | None = None,
    panel: bool = False,
) -> Run:
    """``run`` on this checkout and in this store: branches at their recorded heads, the
    CLI sessions of this runner (``host``) only, this runner's config, ``artifacts`` (name
    -> bytes) in its folder. ``panel``: a judge's seat job's panel, whose implementers'
    seats name nobody, with trees of its own (a pool runner may hold the whole run too)."""
    agents = {s.agent for s in run.seats.values()} - ({HIDDEN} if panel else set())
    missing = sorted(agents - {a.id for a in config.agents})
    if missing:
        raise ActionError(
            f"run {run.id} cannot be carried on here: its seats' agents {', '.join(missing)} "
            "are not in this runner's config (the repository's config and this runner's "
            "user config)"
        )
    root = Path(config.graph.worktree_root).expanduser() if config.graph.worktree_root else None
    # A seat job's copy (``panels``, ``forks``) has trees of its own: the runner may hold
    # the whole run too, whose trees are the join's.
    own = store.runs_dir.name
    trees = (root or store.home / "worktrees") / ("" if own == "runs" else own) / run.id
    for c in run.candidates:
        # After the tally a tree is made again where needed (graph.winner.worktree); before
        # it, at the path prep gives it, which implement remakes from the branch when absent.
        c.worktree = str(trees / c.label) if run.tally is None and not run.folded else None
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
        _current(git, c.worktree, c.branch, c.head)
    talking = {name: seat for name, seat in run.seats.items() if seat.session_id}
    kept = sorted(n for n, s in talking.items() if host is not None and s.session_host == host)
    moved = sorted(set(talking) - set(kept))
    for name in moved:
        run.seats[name].session_id = None
        run.seats[name].session_host = None
    run.repo = str(git.root)
    run.worktree_root = str(trees)
    run.config = config
    run.processes = []
    store.create(run)
    try:
        _write_artifacts(store.run_dir(run.id) / "artifacts", artifacts)
    except BaseException:
        # Half made is not made: the next retry must find no run here, not resume this.
        store.unlock(run.id)
        shutil.rmtree(store.run_dir(run.id), ignore_errors=True)
        raise
    what = "panel, panel key" if panel else "sealed copy, runner key"
    how = f" (its {what} {sealed_with})" if sealed_with else ""
    said = []
    # Before the tally which seats' conversations live on which runner would say which
    # login sat there (a stage's labels are public): the count only.
    blind = not revealed(run)
    if kept:
        who = f"{len(kept)} seat(s)" if blind else ", ".join(kept)
        said.append(f"{who} go on in their conversations, which live on this runner")
    if moved:
        who = f"{len(moved)} seat(s)" if blind else ", ".join(moved)
        said.append(
            f"the conversations of {who} stayed on the runner that held them, "
            "so their next turns are sent their full context"
        )
    note = f"carried on from {RUNS}{run.id}{how} on another runner: " + (
        "; ".join(said) or "no seat had a conversation to carry"
    )
    run.events.append(Event(at=datetime.now(UTC), node="run", message=note, level="warn"))
    store.save(run)
    store.unlock(run.id)
    return run


def _current(git: Git, worktree: str | None, branch: str, head: str) -> None:
    """A clone this runner made when it held the run before (its copy set aside since)
    is still sound but behind the record: put it on the recorded head, or the checks and
    the review would run on what the candidate was then."""
    if worktree is None or not clones.sound(Path(worktree), branch):
        return  # prep makes it again, from the branch
    clones.sync(git, Path(worktree), branch, head)


def _write_artifacts(folder: Path, artifacts: dict[str, bytes]) -> None:
    folder.mkdir(exist_ok=True)
    for name, data in artifacts.items():
        if not (folder / name).exists():
            (folder / name).write_bytes(data)


def _record_artifacts(records: Path | None, run_id: str) -> dict[str, bytes]:
    """The record ref's ``artifacts/`` (prompts, replies, transcripts), for the run's
    folder, so the next publish, which stores what the run's folder holds, loses none."""
    if records is None:
        return {}
    bare = Git(records)
    listing = bare._exec(
        ["ls-tree", "-r", "-z", "--name-only", f"{RUNS}{run_id}", "--", ARTIFACTS], check=False
    )
    if listing.returncode:
        return {}
    out: dict[str, bytes] = {}
    for name in filter(None, listing.stdout.decode("utf-8", "replace").split("\0")):
        leaf = name.removeprefix(ARTIFACTS)
        if "/" in leaf or leaf.startswith("."):
            continue  # magi writes a flat folder: anything else is not its
        text = _show(bare, f"{RUNS}{run_id}:{name}")
        if text is not None:
            out[leaf] = text.encode("utf-8")
    return out
