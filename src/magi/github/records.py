"""Run records in the repository, through the Git Data API: ``refs/magi/runs/<id>``.

Each ``magi action publish`` writes a run's record as a commit whose tree holds ``run.json``
(with ``artifacts/`` and ``published.json`` beside it;
``magi.action.publish_job.record_ref``). The App
has no git, so it reads a record as GitHub stores it (ref -> commit -> tree -> blob) and
parses it with magi's own loading (``magi.state.store.parse_record``: migrations, kinds,
validation), never a copy of it. A record that cannot be read (a foreign ref, bad JSON, a
schema newer than this magi, a blob too large, an object GitHub no longer has) is *skipped
with its reason*: one bad record never takes the others, or the App, down with it.

Reading is bounded (``MAX_RECORDS`` per request, newest first: run ids begin with their
time; ``MAX_RECORD_BYTES`` per record). A record is a commit, so what was read at one sha
never changes: ``RecordCache`` keeps records read (bounded by count and bytes) and
``read_all`` asks GitHub only for the records it does not hold at the sha listed: one call
for the listing plus about three per other record, instead of three per record.

Writing (``update``) makes one commit on the record's own commit that replaces ``run.json``
alone (``base_tree`` keeps the rest) and moves the ref with ``force: false``: if a publish
moved the ref meanwhile, GitHub refuses (422), and the change is made again on the new
record, ``RACE_ATTEMPTS`` times at most. A publish is never overwritten.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import magi.state.council  # noqa: F401 - registers the council record kind, so one reads as itself
from magi.errors import StateError
from magi.github.models import Repo, TreeEntry
from magi.github.port import GitHubError, GitHubPort
from magi.model.run import Record
from magi.state.store import RUN_ID, parse_record

__all__ = [
    "MAX_RECORDS",
    "RACE_ATTEMPTS",
    "RecordCache",
    "Records",
    "Skipped",
    "Stored",
    "read",
    "read_all",
    "record_ref",
    "update",
]

Key = tuple[str, str, str]  # (repository, run id, commit sha)
RUNS = "magi/runs/"
RUN_JSON = "run.json"
# What publish did, beside run.json (magi.action.publish_job.record_ref).
PUBLISHED_JSON = "published.json"
MAX_RECORDS = 100  # records one request reads, newest first
MAX_RECORD_BYTES = 8 * 1024 * 1024  # a run.json larger than this is not read at all
RACE_ATTEMPTS = 3  # tries of an update that loses the ref to a concurrent publish
READERS = 8  # records read at once
CACHED_RECORDS = 256  # records a RecordCache keeps ...
CACHED_BYTES = 4 * 1024 * 1024  # ... and their run.json bytes at most (parsed: about 7x)


def record_ref(run_id: str) -> str:
    return f"refs/{RUNS}{run_id}"


@dataclass(frozen=True)
class Stored:
    """A record as the repository holds it: which commit, which tree, and its text."""

    run_id: str
    commit: str
    tree: str
    text: str
    record: Record
    published_pr: int | None = None  # published.json's PR, when read (``published=True``)


@dataclass(frozen=True)
class Skipped:
    """A ref under ``refs/magi/runs/`` that was not read, and why (said in a sentence)."""

    ref: str
    reason: str


@dataclass(frozen=True)
class Records:
    runs: list[Stored] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    found: int = 0  # refs under refs/magi/runs/
    left_out: int = 0  # run refs not read because of the cap (the oldest ones)


class RecordCache:
    """Records already read, by (repository, run id, commit sha): a commit never changes.

    Bounded by ``entries`` and by the bytes of the records' text (a parsed record takes
    about seven times its text); the least recently used go first, and a record larger
    than the whole bound is not kept. ``read_all`` looks every record up before it reads
    any, so a read of more records than fit still hits as many as fit. Losing it loses
    nothing (the repository is the record); it only saves calls. A cached ``Stored`` is
    shared: readers must not change its record.
    """

    def __init__(self, entries: int = CACHED_RECORDS, max_bytes: int = CACHED_BYTES) -> None:
        self.entries, self.max_bytes = entries, max_bytes
        self._kept: OrderedDict[Key, Stored] = OrderedDict()
        self._bytes = 0

    @staticmethod
    def key(repo: Repo, run_id: str, sha: str) -> Key:
        return (repo.full_name.lower(), run_id, sha)

    def get(self, repo: Repo, run_id: str, sha: str) -> Stored | None:
        key = self.key(repo, run_id, sha)
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
        return found

    def put(self, repo: Repo, stored: Stored) -> bool:
        """Keep ``stored`` (the least recently used make room); False if it cannot fit."""
        key = self.key(repo, stored.run_id, stored.commit)
        if key in self._kept:
            self._kept.move_to_end(key)
            return True
        size = len(stored.text.encode())
        if size > self.max_bytes:
            return False
        self._kept[key] = stored
        self._bytes += size
        while len(self._kept) > self.entries or self._bytes > self.max_bytes:
            _, gone = self._kept.popitem(last=False)
            self._bytes -= len(gone.text.encode())
        return True

    def __len__(self) -> int:
        return len(self._kept)


def _where(run_id: str) -> Path:
    """Where the record lives; StateError when ``run_id`` is no run id (it comes from a
    branch name anyone can pick: it never reaches a ref or a URL path unchecked)."""
    if not RUN_ID.fullmatch(run_id):
        raise StateError(f"not a run id: {run_id[:64]!r}; no record is read or written for it")
    return Path(f"{record_ref(run_id)}:{RUN_JSON}")


async def read(
    gh: GitHubPort, repo: Repo, run_id: str, sha: str | None = None, *, published: bool = False
) -> Stored:
    """One record (at commit ``sha`` when known, else where its ref points now).

    Raises ``StateError`` naming the ref when the record is missing or unreadable, and
    ``GitHubError`` when GitHub fails in a way that is not about the record.
    """
    where = _where(run_id)
    if sha is None:
        ref = await gh.get_ref(repo, record_ref(run_id))
        if ref is None:
            raise StateError("no such run record", path=where)
        sha = ref.sha
    try:
        commit = await gh.get_git_commit(repo, sha)
        tree = await gh.get_tree(repo, commit.tree)
    except GitHubError as exc:
        if exc.status in {404, 409, 422}:
            raise StateError(
                f"GitHub has no commit or tree for it ({exc.status})", path=where
            ) from exc
        raise
    entry = next((e for e in tree.tree if e.path == RUN_JSON and e.type == "blob"), None)
    if entry is None:
        raise StateError(f"its commit {sha[:12]} holds no {RUN_JSON}", path=where)
    if entry.size is not None and entry.size > MAX_RECORD_BYTES:
        raise StateError(
            f"{entry.size} bytes, more than the {MAX_RECORD_BYTES} the App reads",
            path=where,
        )
    blob = await gh.get_blob(repo, entry.sha)
    try:
        text = blob.content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StateError(f"not UTF-8 at byte {exc.start}", path=where) from None
    try:
        record = parse_record(text, path=where, run_id=run_id)
    except (TypeError, AttributeError, KeyError) as exc:
        # A migration met a shape no magi ever wrote (a hand-made or foreign record): the
        # record is unreadable, which is its problem, not a reason to fail the request.
        raise StateError(
            f"not a record magi wrote ({exc.__class__.__name__} while migrating it)", path=where
        ) from None
    pr = await _published_pr(gh, repo, tree.tree) if published else None
    return Stored(
        run_id=run_id, commit=sha, tree=commit.tree, text=text, record=record, published_pr=pr
    )


async def _published_pr(gh: GitHubPort, repo: Repo, tree: list[TreeEntry]) -> int | None:
    """The PR number publish stored in ``published.json`` beside the record, if it holds one."""
    entry = next((e for e in tree if e.path == PUBLISHED_JSON and e.type == "blob"), None)
    if entry is None or (entry.size is not None and entry.size > MAX_RECORD_BYTES):
        return None
    try:
        data = json.loads((await gh.get_blob(repo, entry.sha)).content)
    except (ValueError, UnicodeDecodeError):
        return None
    pr = data.get("pr") if isinstance(data, dict) else None
    return pr if isinstance(pr, int) and not isinstance(pr, bool) else None


async def read_all(
    gh: GitHubPort, repo: Repo, *, limit: int = MAX_RECORDS, cache: RecordCache | None = None
) -> Records:
    """The newest ``limit`` records under ``refs/magi/runs/``; every other ref says why not.

    A failure to list the refs is the caller's (``GitHubError``); a failure to read one
    record is that record's ``Skipped`` line (and is read again next time). With ``cache``,
    a record already read at the sha its ref names now is not read again.
    """
    refs = await gh.matching_refs(repo, RUNS)
    skipped: list[Skipped] = []
    named: dict[str, str] = {}
    for ref in refs:
        run_id = ref.ref.removeprefix(f"refs/{RUNS}")
        if RUN_ID.fullmatch(run_id):
            named[run_id] = ref.sha
        else:
            skipped.append(Skipped(ref.ref, "not a magi run id (YYYYMMDD-HHMMSS-xxxx)"))
    newest = sorted(named, reverse=True)
    chosen, left_out = newest[:limit], max(0, len(newest) - limit)
    gate = asyncio.Semaphore(READERS)

    async def one(run_id: str) -> Stored | Skipped:
        kept = cache.get(repo, run_id, named[run_id]) if cache is not None else None
        if kept is not None:
            return kept
        async with gate:
            try:
                stored = await read(gh, repo, run_id, named[run_id])
                if cache is not None:
                    cache.put(repo, stored)
                return stored
            except StateError as exc:
                return Skipped(record_ref(run_id), exc.message.removeprefix(f"{exc.path}: "))
            except GitHubError as exc:
                why = f"GitHub failed reading it ({exc.status or 'no answer'}: {exc.message})"
                return Skipped(record_ref(run_id), why)

    got = await asyncio.gather(*(one(r) for r in chosen))
    runs = [g for g in got if isinstance(g, Stored)]
    skipped += [g for g in got if isinstance(g, Skipped)]
    return Records(runs=runs, skipped=skipped, found=len(refs), left_out=left_out)


async def update(
    gh: GitHubPort,
    repo: Repo,
    run_id: str,
    change: Callable[[Record], Record | None],
    *,
    message: str,
    attempts: int = RACE_ATTEMPTS,
    pr: int | None = None,
) -> str | None:
    """Apply ``change`` to the record and commit it; the new record commit, or None when
    ``change`` says there is nothing to change (it returns None or an equal record).

    With ``pr``, a record whose ``published.json`` names another pull request is left alone
    (None): only the PR publish opened for a run ends it.

    ``change`` gets a fresh record on every attempt (after a lost race it sees what the
    publish wrote) and must not keep state between calls. Raises ``StateError`` when the
    record cannot be read (nothing is written then: a record of a newer schema is never
    rewritten by an older magi) or the race was lost ``attempts`` times.
    """
    _where(run_id)  # a bad run id is refused before any call
    for _ in range(attempts):
        stored = await read(gh, repo, run_id, published=pr is not None)
        if pr is not None and stored.published_pr not in (None, pr):
            return None  # the record is another PR's (publish said which): not this one's
        new = change(stored.record.model_copy(deep=True))
        if new is None:
            return None
        text = new.model_dump_json(by_alias=True, indent=2) + "\n"
        if text == stored.text:
            return None
        blob = await gh.create_blob(repo, text.encode("utf-8"))
        entry = TreeEntry(path=RUN_JSON, mode="100644", type="blob", sha=blob)
        tree = await gh.create_tree(repo, [entry], base_tree=stored.tree)
        commit = await gh.create_git_commit(
            repo, message=message, tree=tree.sha, parents=[stored.commit]
        )
        try:
            await gh.update_ref(repo, record_ref(run_id), commit.sha, force=False)
        except GitHubError as exc:
            if exc.status == 422:  # not a fast forward: a publish moved the ref meanwhile
                continue
            raise
        return commit.sha
    raise StateError(
        f"the record moved under every one of {attempts} attempts to update it; not written",
        path=_where(run_id),
    )
