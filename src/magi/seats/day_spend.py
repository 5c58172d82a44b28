"""What other runs spent today, for ``[budget] day_usd``: this machine's, or the repository's.

``magi run`` sums the runs in its own store. On a runner (``GITHUB_ACTIONS=true``,
https://docs.github.com/en/actions/reference/variables) one machine's store is the wrong
answer: the runs of the repository's other runners, and of earlier jobs on ephemeral ones,
live only in the repository, as ``refs/magi/runs/<id>``
(``magi.action.publish_job.record_ref``). There
the records are listed and fetched, without any credential, into a scratch repository in
magi's home (hidden from agents like the rest of it, so no record reaches a candidate's
object store), and merged with this runner's store, whose copy of a run it holds is at
least as new as the published one.

Only runs whose id (their start time) is of today or yesterday are read: a run resumed days
after it began is not counted. Each run is priced with its own recorded ``[budget.prices]``.
A private repository answers no anonymous fetch: there the workflow's step before compete
fetches the day's records with the job's read token into a bare repository of its own
(``MAGI_RUN_RECORDS``, the action's ``run-records`` input), which is read instead. When the
records cannot be read at all, the run says so in a warning and counts this runner's alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import magi.state.council  # noqa: F401 - registers the council record kind, so one reads as itself
from magi.core.figures.pricing import Spend, price_table, spend
from magi.errors import MagiError, RepoError
from magi.git.repo import Git
from magi.model.run import Record
from magi.seats.context import DaySpend, SeatContext
from magi.state.store import RUN_ID, Store, parse_record

__all__ = ["RUNS", "RepositorySpend", "StoreSpend", "record_spend", "source"]

RUNS = "refs/magi/runs/"
RECORDS_ENV = "MAGI_RUN_RECORDS"  # the action's run-records input
SCRATCH = "records.git"  # under magi's home
GIT_TIMEOUT = 120.0
# No credential of the runner's user reaches this fetch: the agents job reads anonymously.
_NO_CREDENTIAL = ("-c", "credential.helper=", "-c", "http.extraHeader=")


def record_spend(record: Record, day: date) -> Spend:
    """What ``record``'s turns started on ``day`` spent, at the prices it ran with."""
    return spend(record.turns, price_table(record.config.budget.prices), on=day)


def _prefixes(day: date) -> tuple[str, str]:
    """Run ids begin with their start date: today's, and yesterday's still running."""
    return day.strftime("%Y%m%d-"), (day - timedelta(days=1)).strftime("%Y%m%d-")


def _stored(store: Store, day: date, besides: str) -> Iterator[Record]:
    for run_id in store.list_ids():
        if run_id == besides or not run_id.startswith(_prefixes(day)):
            continue
        try:
            yield store.load(run_id)
        except MagiError:
            continue  # an unreadable record is reported by `magi list`, not by a budget check


def _repo_of(record: Record) -> Path | None:
    repo = getattr(record, "repo", None)
    return Path(repo).resolve() if isinstance(repo, str) and repo else None


@dataclass(frozen=True)
class StoreSpend:
    """The runs in this machine's store."""

    def spent(self, sctx: SeatContext, day: date, *, besides: str) -> Spend:
        total = Spend()
        for record in _stored(sctx.store, day, besides):
            total += record_spend(record, day)
        return total


@dataclass(frozen=True)
class RepositorySpend:
    """The repository's run records (fetched from ``remote`` of ``checkout``), with this
    machine's store over them."""

    checkout: Path
    remote: str = "origin"
    # A local bare repository the workflow's step before compete filled with today's
    # records using the job's read token (a private repository answers no anonymous
    # fetch); read instead of the remote when given.
    fetched: Path | None = None

    def spent(self, sctx: SeatContext, day: date, *, besides: str) -> Spend:
        runs: dict[str, Record] = {}
        try:
            runs.update(self._published(sctx.store, day, besides))
        except RepoError as e:
            why = e.message.strip().splitlines()[-1] if e.message.strip() else "git failed"
            sctx.event(
                "budget",
                "[budget] day_usd counts only this runner's runs today: the repository's run "
                f"records ({RUNS}*) could not be read ({why})",
                "warn",
            )
        # This runner's own copies, of this repository only: a runner shared by an
        # organization's repositories holds the runs of all of them.
        here = self.checkout.resolve()
        mine = [r for r in _stored(sctx.store, day, besides) if _repo_of(r) == here]
        runs.update({r.id: r for r in mine})
        total = Spend()
        for record in runs.values():
            total += record_spend(record, day)
        return total

    def _published(self, store: Store, day: date, besides: str) -> dict[str, Record]:
        url = (
            str(self.fetched)
            if self.fetched is not None
            else Git(self.checkout).run("remote", "get-url", self.remote).strip()
        )
        scratch = store.home / SCRATCH
        scratch.mkdir(parents=True, exist_ok=True)
        bare = Git(scratch)
        bare.run("init", "--bare", "--quiet")
        listed = bare.run(
            *_NO_CREDENTIAL, "ls-remote", "--refs", url, f"{RUNS}*", timeout=GIT_TIMEOUT
        )
        wanted: dict[str, str] = {}
        for line in listed.splitlines():
            sha, _, ref = line.partition("\t")
            run_id = ref.removeprefix(RUNS)
            if RUN_ID.fullmatch(run_id) and run_id != besides and run_id.startswith(_prefixes(day)):
                wanted[run_id] = sha
        if not wanted:
            return {}
        refs = [f"{RUNS}{run_id}" for run_id in sorted(wanted)]
        fetch = ("fetch", "--quiet", "--no-tags", "--depth=1", url, *refs)
        bare.run(*_NO_CREDENTIAL, *fetch, timeout=GIT_TIMEOUT)
        out: dict[str, Record] = {}
        for run_id, sha in wanted.items():
            where = Path(f"{RUNS}{run_id}:run.json")
            try:
                text = bare.run("cat-file", "blob", f"{sha}:run.json")
                out[run_id] = parse_record(text, path=where, run_id=run_id)
            except (MagiError, TypeError, AttributeError, KeyError):
                continue  # not a record this magi reads (magi.github.records says why)
        return out


def source(sctx: SeatContext) -> DaySpend:
    """The context's own source if it has one; on a runner the repository's records (for
    a record that names its checkout); else this machine's store."""
    if sctx.day_spend is not None:
        return sctx.day_spend
    repo = getattr(sctx.record, "repo", None)
    if sctx.environ.get("GITHUB_ACTIONS") == "true" and isinstance(repo, str):
        fetched = sctx.environ.get(RECORDS_ENV)
        return RepositorySpend(Path(repo), fetched=Path(fetched) if fetched else None)
    return StoreSpend()
