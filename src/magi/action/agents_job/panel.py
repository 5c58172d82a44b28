"""A judge's seat job on a runner that must not learn who wrote which candidate.

A judges' wave (the first judgement, a deliberation turn, the vote) whose seats need other
runners is forked (``magi.graph.fork``), and its seat jobs never open the sealed run: the
job that forked it also seals a *panel*, the run with no author in it
(``magi.report.before_tally.panel_copy``: the candidates by label, their branches, the
judges' own seats and artifacts), with the panel key (``magi.state.runner_key``), and
publish stores it beside the sealed run as ``panel.sealed``. A seat job of that wave opens
the panel, makes it in a store of its own (``$MAGI_HOME/panels``, never mixed with whole
runs a pool runner holds), asks its judges there, and seals what they answered with the
panel key; the join, on the pool, opens that with the key it derives from its runner key.

So a runner that only seats judges holds ``panel.key`` and no runner key: nothing it is
sent, or can read in the record ref, says which agent wrote a candidate.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from magi.action.agents_job.adopt import _fetch_candidates, _remade, _show
from magi.action.agents_job.fork import artifact_names
from magi.action.seal import (
    BUNDLE,
    PANEL,
    SEALED_MAX,
    RunnerKey,
    bundle_of,
    load_key,
    open_sealed,
    panel_key,
    parse_sealed,
    seal,
)
from magi.core.seats.runners import PANEL_NODES
from magi.errors import ActionError, MagiError
from magi.git.repo import Git
from magi.model.config import Config
from magi.model.run import Run
from magi.report import revealed
from magi.report.before_tally import panel_copy
from magi.seats.day_spend import RUNS
from magi.state.runner_key import KEY_FILE, PANEL_FILE
from magi.state.store import RECORD, Store, parse_record

__all__ = ["adopt_panel", "needs_key", "panel_store", "result_key", "write_panel"]

ARTIFACTS = "artifacts/"


def panel_store(store: Store) -> Store:
    """Where a seat job keeps the panels it works from: beside whole runs, under the same
    home (hidden from every seat), never in their folder."""
    return Store(store.home, remote_park=store.remote_park, runs="panels")


def needs_key(home: Path) -> RunnerKey:
    """The panel key here; ActionError saying how to get one when there is none."""
    key = panel_key(home)
    if key is None:
        raise ActionError(
            f"a judges' wave's seat job works from the run's panel, sealed with the panel "
            f"key, and this runner has none: a runner of the pool derives it from its "
            f"runner key ($MAGI_HOME/{KEY_FILE}); a runner that only seats judges holds "
            f"$MAGI_HOME/{PANEL_FILE} (`magi runner-key --panel`; docs/runner.md)"
        )
    return key


def result_key(run: Run, home: Path) -> RunnerKey:
    """The key a seat job of ``run``'s fork seals its result with, and its join opens it
    with: a judges' wave's, or any after the tally (nothing in the run is secret from a
    judge's runner then), the panel key; an implement wave's before it, the runner key,
    which only the pool holds (what the implementers did names them)."""
    if run.fork_node in PANEL_NODES or revealed(run):
        return needs_key(home)
    key = load_key(home)
    if key is None:
        raise ActionError(
            f"run {run.id}'s {run.fork_node} wave was forked before its tally: what its seat "
            f"jobs did is sealed with the pool's runner key, and this runner has none "
            f'($MAGI_HOME/{KEY_FILE}; docs/runner.md, "How many runners")'
        )
    return key


def write_panel(run: Run, store: Store, git: Git, out: Path, issue: int) -> str:
    """The panel of ``run``'s forked judges' wave, sealed into ``out``; its key's print."""
    key = needs_key(store.home)
    copy = panel_copy(run)
    members = {RECORD: copy.model_dump_json(by_alias=True, indent=1).encode()}
    folder = store.run_dir(run.id)
    for name in artifact_names(run, [j.seat for j in run.judges]):
        path = folder / name
        if path.is_file() and not path.is_symlink():
            members[name] = path.read_bytes()
    bundle = bundle_of(git, run, run.candidates)
    if bundle is not None:
        members[BUNDLE] = bundle
    text = seal(key, members, run_id=run.id, issue=issue, base=run.base_sha or "", kind="panel")
    if len(text) > SEALED_MAX:
        raise ActionError(f"the judges' panel is {len(text)} characters, over {SEALED_MAX}")
    (out / PANEL).write_text(text, encoding="ascii")
    return key.fingerprint


def adopt_panel(
    *,
    records: Path | None,
    public: Run,
    issue: int,
    store: Store,
    git: Git,
    config: Config,
    host: str | None,
) -> Run:
    """The panel of ``public``'s forked wave, made in ``store`` (``panel_store``) on this
    checkout; an earlier panel of the run there (another fork's) is replaced."""
    key = needs_key(store.home)
    where = f"{RUNS}{public.id}:{PANEL}"
    text = _show(Git(records), where) if records is not None else None
    if text is None:
        raise ActionError(f"{where} is not in the repository's run records: nothing to judge from")
    base = public.base_sha or ""
    members = open_sealed(
        key, parse_sealed(text, where), run_id=public.id, issue=issue, base=base, where=where,
        kind="panel",
    )  # fmt: skip
    try:
        run = parse_record(
            members[RECORD].decode("utf-8"), path=Path(f"{where}:{RECORD}"), run_id=public.id
        )
    except (MagiError, UnicodeDecodeError) as e:
        why = e.message if isinstance(e, MagiError) else "not UTF-8"
        raise ActionError(f"{where}: its record cannot be read: {why}") from None
    if not isinstance(run, Run) or (run.fork_id, run.base_sha, run.task.source) != (
        public.fork_id,
        public.base_sha,
        public.task.source,
    ):
        raise ActionError(f"{where} is not the panel of the published fork: nothing judged")
    if public.id in store.list_ids():
        store.unlock(public.id)
        shutil.rmtree(store.run_dir(public.id), ignore_errors=True)
    if BUNDLE in members:
        _fetch_candidates(git, run, members[BUNDLE], where)
    files = {k.removeprefix(ARTIFACTS): v for k, v in members.items() if k.startswith(ARTIFACTS)}
    return _remade(
        run, store, git, config, files, sealed_with=key.fingerprint, host=host, panel=True
    )
