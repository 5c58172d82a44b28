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
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from magi import engine
from magi.action.agents_job.adopt import _show, adopt, behind, published, set_aside
from magi.action.agents_job.answers import Answering, deliver
from magi.action.agents_job.checkout import refuse_credentials
from magi.action.agents_job.fork import StaleFork, absorb, delta, fork_seats, slug
from magi.action.agents_job.log import LogReporter
from magi.action.agents_job.panel import (
    adopt_panel,
    key_for,
    needs_key,
    panel_store,
    result_key,
    write_panel,
)
from magi.action.artifact import BUNDLE, FORK_SEALED, MANIFEST, write_artifact
from magi.action.bundle import create_bundle
from magi.action.seal import (
    KEY_FILE,
    PANEL,
    SEALED,
    SEALED_MAX,
    RunnerKey,
    load_key,
    members_of,
    open_sealed,
    parse_sealed,
    seal,
)
from magi.core.seats.runners import (
    JOINED_SEATS,
    PANEL_NODES,
    RUNNER_LABELS,
    STAGE_SEATS,
    has_labels,
    job_labels_of,
    joined,
    joined_entry,
    labels_here,
    runner_host,
    same_labels,
)
from magi.core.threads.pin import EDITED, PINNED, Pinned, read_pinned
from magi.errors import ActionError, CredentialsInCheckout, MagiError
from magi.git.repo import Git
from magi.model.config import Config
from magi.model.run import Run, RunStatus
from magi.report import revealed
from magi.seats import Reporter
from magi.seats.day_spend import RECORDS_ENV, RUNS
from magi.state.store import RUN_ID, Store

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
    edited: bool = False  # the text is the label's pin, and the issue reads otherwise now

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
    pinned = _pinned(path.parent / PINNED, number)
    if pinned is not None:  # the text the writer's label accepted (core.threads.pin)
        return IssueTask(number, pinned.title, pinned.body, pinned.edited)
    return IssueTask(number, str(data.get("title") or ""), str(data.get("body") or ""))


def _pinned(path: Path, number: int) -> Pinned | None:
    """``pinned.json`` from the task job, if it wrote one; one that does not read is an error
    (the run must not fall back to text no writer accepted)."""
    if not path.is_file():
        return None
    try:
        found = read_pinned(json.loads(path.read_text(encoding="utf-8")), number)
    except (OSError, ValueError) as e:
        raise ActionError(f"cannot read the pinned issue text {path.name}: {e}") from None
    if found is None:
        raise ActionError(f"{path.name} is not the pinned text of issue #{number}")
    return found


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
    run_id: str | None = None,
    rng: random.Random | None = None,
    answer: Answering | None = None,
    fork: bool = False,
) -> Run:
    """Run (or resume) the competition for ``issue`` and write its artifact into ``out``.

    ``run_id`` is the id the App assigned when it dispatched: the run is resumed when this
    runner has it, else a new run gets that id (so the App's comment and the record agree).
    ``answer`` is a writer's ``/magi answer`` to the question the run parked on: it, and the
    thread's other writers' answers to questions still waiting (``agents_job.answers``), go
    into the seats' answers before the resume, which carries those seats alone on.
    ``fork``: this job is one seat job of a forked wave (``agents_job.fork``); without it,
    a run whose wave was forked is joined from what its seat jobs stored, then goes on.
    """
    refuse_tokens(environ)
    if fork and run_id is None:
        raise ActionError("a fork's seat job needs the run id (the run_id input)")
    git = Git.discover(cwd)
    refuse_credentials(git.root)
    now: datetime | None = None
    config: Config | None = None
    fresh_because: str | None = None
    if run_id is not None:
        if not RUN_ID.fullmatch(run_id):
            raise ActionError(f"{run_id!r} is not a magi run id (YYYYMMDD-HHMMSS-xxxx)")
        if fork:
            return _fork_seat_job(run_id, store, git, out, issue.number, environ, reporter)
        record = store.load_run(run_id) if run_id in store.list_ids() else None
        if record is not None and record.task.source != f"issue:{issue.number}":
            raise ActionError(f"run {run_id} is not issue #{issue.number}'s")
        records = environ.get(RECORDS_ENV)
        aside: Path | None = None
        if record is not None and (further := behind(Path(records) if records else None, record)):
            # Another runner carried it on since: this copy is behind the repository's.
            aside = set_aside(store, run_id)
            reporter.note(
                f"run {run_id} went further on another runner ({further} events, this "
                f"runner's copy {len(record.events)}): the repository's record decides, "
                "and this runner's copy is set aside",
                "warn",
            )
            record = None
        if record is None:
            # Not on this runner: the repository's record of it decides (agents_job.adopt).
            config = engine.preflight(git.root, None, environ, reporter, action=True)
            try:
                adopted = adopt(
                    records=Path(records) if records else None,
                    run_id=run_id,
                    issue=issue.number,
                    store=store,
                    git=git,
                    config=config,
                    host=runner_host(environ),
                )
            except BaseException:
                if aside is not None:
                    aside.rename(store.run_dir(run_id))  # this runner's copy, as it was
                raise
            if aside is not None and (adopted is None or adopted.run is None):
                aside.rename(store.run_dir(run_id))  # nothing newer to go on from: as it was
                raise ActionError(
                    f"run {run_id} went further on another runner than this runner's copy, "
                    "and the repository's record of it cannot be carried on here: "
                    + (adopted.why or "" if adopted is not None else "it is gone")
                    + ". Going on from this runner's older copy would undo that work"
                )
            if adopted is not None and adopted.run is not None:
                record = adopted.run
            elif answer is not None:
                # An answer never starts a competition: the asking run waits for a runner
                # that holds it, or holds the key it was sealed with.
                raise ActionError(
                    f"/magi answer: run {run_id} is not on this runner and cannot be carried "
                    "on here: "
                    + (
                        adopted.why or ""
                        if adopted is not None
                        else "the repository holds no record of it"
                    )
                )
            elif adopted is None:
                now, rng = _id_parts(run_id, rng)  # the App's id for a new run
            else:
                fresh_because = adopted.fresh_because
                reporter.note(fresh_because or "", "warn")
    else:
        record = find_run(store, git.root, issue.number)
    came = (
        (record.status, list(record.handoff), len(record.turns), record.fork_id) if record else None
    )
    if record is not None and record.joined and record.status is not RunStatus.HANDED_OFF:
        record.joined = []  # a new pass (a retry, an answer): every seat may be asked again
        store.save(record)
    if answer is not None:
        if record is None or record.status is not RunStatus.ASKING:
            held = f"is {record.status.value}" if record is not None else "is not on this runner"
            raise ActionError(f"/magi answer: run {run_id or '?'} {held}, not asking")
        deliver(store, record, answer, reporter.note)
    if record is not None and record.fork:
        node = record.fork_node
        rounds = record.review.rounds if record.review is not None else []
        which = rounds[-1].round if node == "review" and rounds else 0
        which = record.fork_round if node == "deliberate" else which
        asked = _join(record, store, git, issue.number, environ, reporter)
        # This pass goes on from what the seat jobs did: their seats are not asked again
        # in that wave, whatever they ended in (a wave on one runner asks each seat once),
        # by this stage or any later one of the pass.
        record.joined = sorted({*record.joined, *(joined_entry(node, which, s) for s in asked)})
        store.save(record)
    if record is not None and record.joined and record.status.resumable:
        environ = {**environ, JOINED_SEATS: joined(record.joined)}
    if record is not None and record.status.resumable:
        _hide(reporter, record.config, environ)
        reporter.note(f"resuming run {record.id} ({record.status.value}) for #{issue.number}")
        record = engine.resume(store, record.id, environ=environ, reporter=reporter).run
    elif record is None or record.status is RunStatus.FAILED:
        # A failed run is an attempt spent; `/magi retry` after it is a new competition.
        if config is None:
            config = engine.preflight(git.root, None, environ, reporter, action=True)
        _hide(reporter, config, environ)
        record = engine.start(
            task=issue.text,
            source=f"issue:{issue.number}",
            config=config,
            git=git,
            store=store,
            environ=environ,
            reporter=reporter,
            rng=rng,
            now=now,
            why="\n".join(w for w in (fresh_because, EDITED if issue.edited else None) if w)
            or None,
        ).run
    else:
        reporter.note(f"run {record.id} already ended {record.status.value}; writing it out")
    out.mkdir(parents=True, exist_ok=True)
    (out / BUNDLE).unlink(missing_ok=True)
    (out / FORK_SEALED).unlink(missing_ok=True)  # a seat job's, from an earlier job here
    # Before the tally no candidate leaves the runner (publish pushes none yet, and a
    # patch can name its author): the artifact is public (report.before_tally).
    heads = create_bundle(git, record, out / BUNDLE) if revealed(record) else {}
    write_artifact(record, store, out, heads, issue.number)
    (out / SEALED).unlink(missing_ok=True)
    (out / PANEL).unlink(missing_ok=True)
    if not revealed(record) and record.status.resumable:
        _seal(record, store, git, out, issue.number, reporter)
    if record.status is RunStatus.HANDED_OFF:
        try:
            if record.fork and record.fork_node in PANEL_NODES:
                # The judges' seat jobs work from this, never the sealed run (agents_job.panel).
                here = labels_here(environ)
                printed = write_panel(record, store, git, out, issue.number, here)
                reporter.note(f"the judges' panel sealed with panel key {printed}")
            _handing_off(record, came, out, environ)
        except MagiError:
            # Not published as handed off (publish would dispatch a stage that cannot go
            # on): the refusal the command line writes says why on the issue instead.
            (out / MANIFEST).unlink(missing_ok=True)
            raise
    return record


def _fork_seat_job(
    run_id: str,
    store: Store,
    git: Git,
    out: Path,
    issue: int,
    environ: Mapping[str, str],
    reporter: Reporter,
) -> Run:
    """A forked wave's seat job, from a copy of its own: the run as the record ref holds it
    (``fork``, kept apart from any whole run this runner holds, which is the join's), or, on
    a runner that only seats judges, the wave's panel (``agents_job.panel``)."""
    records = environ.get(RECORDS_ENV)
    public = published(Path(records), run_id) if records else None
    if public is None or not public.fork:
        state = "not in the repository's run records" if public is None else "not forked"
        raise ActionError(f"this seat job's run {run_id} is {state}: there is no wave to join")
    if public.task.source != f"issue:{issue}":
        raise ActionError(f"run {run_id} is not issue #{issue}'s")
    if load_key(store.home) is None and public.fork_node in PANEL_NODES:
        return _panel_seat_job(public, store, git, out, issue, environ, reporter)
    forks = Store(store.home, remote_park=store.remote_park, runs="forks")

    def made() -> Run:
        adopted = adopt(
            records=Path(records) if records else None,
            run_id=run_id,
            issue=issue,
            store=forks,
            git=git,
            config=engine.preflight(git.root, None, environ, reporter, action=True),
            host=runner_host(environ),
        )
        if adopted is None or adopted.run is None:
            why = adopted.why if adopted is not None else "the repository holds no record of it"
            raise ActionError(f"this seat job cannot take up run {run_id}'s fork: {why}")
        return adopted.run

    record = _own_copy(forks, public, reporter, made)
    return _seat_job(record, forks, git, out, issue, environ, reporter)


def _panel_seat_job(
    public: Run,
    store: Store,
    git: Git,
    out: Path,
    issue: int,
    environ: Mapping[str, str],
    reporter: Reporter,
) -> Run:
    """A judges' wave's seat job: from the fork's panel, never the sealed run."""
    panels = panel_store(store)
    key = needs_key(store.home)
    records = environ.get(RECORDS_ENV)

    def made() -> Run:
        return adopt_panel(
            records=Path(records) if records else None,
            public=public,
            issue=issue,
            store=panels,
            git=git,
            config=engine.preflight(git.root, None, environ, reporter, action=True),
            host=runner_host(environ),
        )

    record = _own_copy(panels, public, reporter, made)
    return _seat_job(record, panels, git, out, issue, environ, reporter, key)


def _own_copy(copies: Store, public: Run, reporter: Reporter, make: Callable[[], Run]) -> Run:
    """A seat job's own copy of its fork in ``copies``: the one a killed run of the same
    seat job left, or made again by ``make`` (another fork's copy, or one that does not
    read, is disposable; one a live seat job holds is refused, RunLockedError)."""
    try:
        record = copies.load_run(public.id) if public.id in copies.list_ids() else None
    except MagiError as e:
        reporter.note(f"this runner's copy of the fork does not read ({e.message}): made again")
        record = None
    if record is not None and record.fork_id == public.fork_id:
        return record
    if copies.run_dir(public.id).exists():
        copies.lock(public.id)
        copies.unlock(public.id)
        shutil.rmtree(copies.run_dir(public.id), ignore_errors=True)
    return make()


def _seat_job(
    record: Run | None,
    store: Store,
    git: Git,
    out: Path,
    issue: int,
    environ: Mapping[str, str],
    reporter: Reporter,
    key: RunnerKey | None = None,
) -> Run:
    """One seat job of a forked wave: only the seats of its label set are asked; what they
    did is sealed as the artifact's ``fork.sealed`` (the record stays the join's), with
    ``key``, else the key ``agents_job.panel.result_key`` names."""
    # A seat job killed and re-run finds its own copy in the middle of the wave.
    if record is None or not record.status.resumable or not record.fork:
        state = record.status.value if record is not None else "not here"
        raise ActionError(f"this seat job's run is {state}, not a forked wave")
    job = sorted(job_labels_of(environ) or [])
    labels = next((g for g in record.fork if same_labels(g) == same_labels(job)), None)
    if labels is None:
        raise ActionError(
            f"run {record.id}'s wave was forked to {record.fork}, and this job runs on {job}"
        )
    key = key or result_key(record, store.home)
    seats = fork_seats(record, labels)
    _hide(reporter, record.config, environ)
    reporter.note(f"run {record.id}: the forked wave's seats of {', '.join(labels)}")
    staged = {**environ, STAGE_SEATS: json.dumps(seats)}
    record = engine.resume(store, record.id, environ=staged, reporter=reporter).run
    out.mkdir(parents=True, exist_ok=True)
    for stale in (BUNDLE, SEALED, FORK_SEALED):
        (out / stale).unlink(missing_ok=True)
    write_artifact(record, store, out, {}, issue, fork=labels)
    members = delta(record, store, git, seats, labels)
    base = record.base_sha or ""
    text = seal(key, members, run_id=record.id, issue=issue, base=base, kind="fork")
    if len(text) > SEALED_MAX:
        (out / MANIFEST).unlink(missing_ok=True)
        raise ActionError(f"the seat job's result is {len(text)} characters, over {SEALED_MAX}")
    (out / FORK_SEALED).write_text(text, encoding="ascii")
    (out / PANEL).unlink(missing_ok=True)
    _drop_trees(store, record)
    return record


def _drop_trees(copies: Store, record: Run) -> None:
    """A seat job's copy's checkouts, once its result is sealed: what its seats did is in
    the result, and a re-run of the job goes on from the copy's record, which makes again
    whatever tree it needs. The copy's record stays (a few kilobytes); its trees are whole
    checkouts of the repository, which a runner serving many runs would pile up."""
    sub = copies.runs_dir.name
    trees = Path(record.worktree_root or "")
    if sub == "runs" or not record.worktree_root or trees.parent.name != sub:
        return  # only a seat job's own copy, under worktrees/<forks|panels>/<id>
    shutil.rmtree(trees, ignore_errors=True)


def _join(
    record: Run,
    store: Store,
    git: Git,
    issue: int,
    environ: Mapping[str, str],
    reporter: Reporter,
) -> set[str]:
    """The forked wave made whole: each seat job's result, from the record ref, in place
    of its seats' state at the fork (``agents_job.fork.absorb``); the seats they asked."""
    records = environ.get(RECORDS_ENV)
    if not records:
        raise ActionError(
            f"run {record.id}'s wave was forked: its join needs the repository's run records"
        )
    key = result_key(record, store.home)
    bare = Git(Path(records))
    settled: list[str] = []
    # Each group's seats as the fork made them, read before any result moves a seat (a
    # seat failover handed to another group's agent would move it between groups).
    groups = {slug(labels): fork_seats(record, labels) for labels in record.fork}
    asked: set[str] = set()
    for labels in record.fork:
        where = f"{RUNS}{record.id}:fork/{slug(labels)}.sealed"
        text = _show(bare, where)
        if text is None:
            # A retry (or a re-run) before every seat job stored: what is stored is taken,
            # and the other seats are asked again from here (forked again, or handed on).
            reporter.note(
                f"the seat job of {', '.join(labels)} stored nothing: its seats are asked again",
                "warn",
            )
            continue
        sealed = parse_sealed(text, where)
        base = record.base_sha or ""
        members = open_sealed(
            key_for(sealed, store.home) or key, sealed, run_id=record.id, issue=issue,
            base=base, where=where, kind="fork",
        )  # fmt: skip
        held = {s: record.agent_of(s) for s in groups[slug(labels)]}
        try:
            settled += absorb(
                record, members, labels, store, git, where, runner_host(environ),
                seats=groups[slug(labels)],
            )  # fmt: skip
            # A seat that passed to another agent in the seat job, and was not asked there
            # by it (that agent is another runner's), is still to be asked in this pass.
            for seat, agent in held.items():
                now = record.agent_of(seat)
                if now == agent or any(
                    t.seat == seat and t.agent == now and t.node == record.fork_node
                    for t in record.turns
                ):
                    asked.add(seat)
        except StaleFork:
            reporter.note(
                f"the seat job of {', '.join(labels)} stored an earlier fork's result: its "
                "seats are asked again",
                "warn",
            )
    record.fork = []
    store.save(record)
    reporter.note(f"joined the forked wave: {len(settled)} seat(s) from its seat jobs")
    return asked


def _handing_off(
    run: Run,
    came: tuple[RunStatus, list[list[str]], int, str] | None,
    out: Path,
    environ: Mapping[str, str],
) -> None:
    """A run handed off must be able to go on where it is handed (before its tally only
    sealed: the pool's key), and a stage dispatched for the labels the run waits for must
    seat someone: one that asked nobody would hand the run back and forth for ever. (A
    re-run of the stage that handed it off asks nobody either, and is no error.)"""
    wants = "; ".join(", ".join(labels) for labels in run.handoff)
    if not revealed(run) and not (out / SEALED).exists():
        raise ActionError(
            f"run {run.id} waits for a runner labelled {wants}: before its tally a run goes "
            "to another runner only sealed with the pool's runner key, and this runner has "
            f'none usable ($MAGI_HOME/{KEY_FILE}; docs/runner.md, "How many runners")'
        )
    here = labels_here(environ) or frozenset()
    ours = any(has_labels(here, labels) for labels in run.handoff)
    # A new fork (its own id) is progress: its seat jobs are dispatched afresh.
    stuck = came == (RunStatus.HANDED_OFF, run.handoff, len(run.turns), run.fork_id) and ours
    if stuck:
        raise ActionError(
            f"run {run.id} was handed to this runner and it could seat nobody: it still "
            f"waits for a runner labelled {wants}. Give this runner those labels (and "
            f"{RUNNER_LABELS} in its service's .env), or the agent other labels"
        )


def _seal(run: Run, store: Store, git: Git, out: Path, issue: int, reporter: Reporter) -> None:
    """Stopped before its tally: sealed for the runners of the pool (``magi.action.seal``)."""
    try:
        key = load_key(store.home)
    except ActionError as e:
        reporter.note(f"the run is not sealed for other runners: {e.message}", "warn")
        return
    if key is None:
        reporter.note(
            f"no runner key ($MAGI_HOME/{KEY_FILE}): stopped before its tally, this run can "
            'be carried on only by this runner (docs/runner.md, "How many runners")'
        )
        return
    text = seal(
        key, members_of(run, store, git), run_id=run.id, issue=issue, base=run.base_sha or ""
    )
    if len(text) > SEALED_MAX:
        reporter.note(f"the sealed run is {len(text)} characters, over {SEALED_MAX}: not sent")
        return
    (out / SEALED).write_text(text, encoding="ascii")
    reporter.note(f"sealed for the runners holding key {key.fingerprint}")


class _Suffix(random.Random):
    """A Random whose 16-bit draws give one run-id suffix: ``new_run_id`` then yields the id
    the App assigned. Every other draw (the label seed) is random as usual."""

    def __init__(self, suffix: int) -> None:
        super().__init__()
        self.suffix = suffix

    def getrandbits(self, k: int, /) -> int:
        return self.suffix if k == 16 else super().getrandbits(k)


def _id_parts(run_id: str, rng: random.Random | None) -> tuple[datetime, random.Random]:
    """The ``now`` and ``rng`` with which the engine names a new run ``run_id``."""
    stamp, _, suffix = run_id.rpartition("-")
    when = datetime.strptime(stamp, "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    fixed = _Suffix(int(suffix, 16))
    if rng is not None:
        fixed.seed(rng.getrandbits(64))
    return when, fixed


def _hide(reporter: Reporter, config: Config, environ: Mapping[str, str]) -> None:
    """A job log is public to the repository's readers: it names no agent of this roster,
    and in a staged job no candidate (``LogReporter.in_stages``)."""
    if isinstance(reporter, LogReporter):
        reporter.with_roster(config.agents)
        if labels_here(environ) is not None:
            reporter.in_stages()
