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

import tempfile
from pathlib import Path

from magi.action.agents_job.adopt import _fetch_candidates, _remade, _show, sealed_record
from magi.action.agents_job.fork import artifact_names, fork_seats
from magi.action.seal import (
    BUNDLE,
    PANEL,
    SEALED_MAX,
    RunnerKey,
    Sealed,
    load_key,
    open_sealed,
    panel_key,
    parse_sealed,
    seal,
)
from magi.core.seats.runners import PANEL_NODES, has_labels
from magi.errors import ActionError
from magi.git.clones import objects
from magi.git.repo import NEUTRAL_EMAIL, NEUTRAL_NAME, Git
from magi.model.config import Config
from magi.model.run import Run
from magi.report import revealed
from magi.report.before_tally import panel_copy
from magi.seats.day_spend import RUNS
from magi.state.runner_key import KEY_FILE, PANEL_FILE
from magi.state.store import RECORD, Store

__all__ = ["adopt_panel", "key_for", "needs_key", "panel_store", "result_key", "write_panel"]

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
    """The key a seat job of ``run``'s fork seals its result with: the pool's runner key
    wherever a runner holds it (what a pool runner's seat did may name agents, and a
    judges' runner must not open it); on a runner that only seats judges, the panel key,
    for a judges' wave, or any after the tally (nothing in the run is secret then). The
    join opens each result with whichever of the two sealed it (``key_for``)."""
    key = load_key(home)
    if key is not None:
        return key
    if run.fork_node in PANEL_NODES or revealed(run):
        return needs_key(home)
    raise ActionError(
        f"run {run.id}'s {run.fork_node} wave was forked before its tally: what its seat "
        f"jobs did is sealed with the pool's runner key, and this runner has none "
        f'($MAGI_HOME/{KEY_FILE}; docs/runner.md, "How many runners")'
    )


def key_for(sealed: Sealed, home: Path) -> RunnerKey | None:
    """Which of this runner's keys sealed ``sealed`` (its runner key or the panel key);
    None when neither did (opening then says which key it needs)."""
    for key in (load_key(home), panel_key(home)):
        if key is not None and key.fingerprint == sealed.fingerprint:
            return key
    return None


def write_panel(
    run: Run, store: Store, git: Git, out: Path, issue: int, here: frozenset[str] | None
) -> str:
    """The panel of ``run``'s forked judges' wave, sealed into ``out``; its key's print.
    ``here``: this job's labels. The panel names who holds only the seats of the groups
    a runner with other labels seats (a pool runner's seat job works from the whole run)."""
    key = needs_key(store.home)
    own = {
        seat
        for labels in run.fork
        if here is None or not has_labels(here, labels)
        for seat in fork_seats(run, labels)
    }
    copy = panel_copy(run, own)
    bundle = _neutral_bundle(git, copy)
    members = {RECORD: copy.model_dump_json(by_alias=True, indent=1).encode()}
    folder = store.run_dir(run.id)
    for name in artifact_names(copy, [j.seat for j in copy.judges]):
        path = folder / name
        if path.is_file() and not path.is_symlink():
            members[name] = path.read_bytes()
    if bundle is not None:
        members[BUNDLE] = bundle
    text = seal(key, members, run_id=run.id, issue=issue, base=run.base_sha or "", kind="panel")
    if len(text) > SEALED_MAX:
        raise ActionError(f"the judges' panel is {len(text)} characters, over {SEALED_MAX}")
    (out / PANEL).write_text(text, encoding="ascii")
    return key.fingerprint


def _neutral_bundle(git: Git, copy: Run) -> bytes | None:
    """The viable candidates' branches as a judges' runner may hold them: every commit made
    again with magi's neutral identity and the run's start as its date, its tree, parents
    and message as they were (who committed, from which machine, and when each candidate
    was done would say which runner, and so which agent, wrote it). ``copy``'s heads are
    set to the new commits. None when no viable candidate moved off the base."""
    base = copy.base_sha or ""
    moved = [c for c in copy.candidates if c.viable and c.head and c.head != base]
    if not moved or not base:
        return None
    when = copy.created_at.strftime("%Y-%m-%dT%H:%M:%S+0000")
    ident = {
        "GIT_AUTHOR_NAME": NEUTRAL_NAME,
        "GIT_AUTHOR_EMAIL": NEUTRAL_EMAIL,
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_NAME": NEUTRAL_NAME,
        "GIT_COMMITTER_EMAIL": NEUTRAL_EMAIL,
        "GIT_COMMITTER_DATE": when,
    }
    with tempfile.TemporaryDirectory(prefix="magi-panel-") as tmp:
        # A scratch repository borrowing the user's objects: the new commits never enter it.
        scratch = Path(tmp) / "panel.git"
        fmt = git.object_format()
        git.run("init", "--quiet", "--bare", f"--object-format={fmt}", str(scratch))
        (scratch / "objects" / "info" / "alternates").write_text(f"{objects(git)}\n")
        made: dict[str, str] = {}
        for c in moved:
            log = git._exec(
                ["log", "--reverse", "--topo-order", "-z", "--format=%H%x1f%T%x1f%P%x1f%B",
                 "--end-of-options", c.head or "", f"^{base}"],
            ).stdout  # fmt: skip
            for entry in filter(None, log.split(b"\0")):
                # The message as bytes: whatever its encoding, it is kept as it was.
                sha, tree, parents, message = entry.lstrip(b"\n").split(b"\x1f", 3)
                if sha.decode() in made:
                    continue
                args = ["commit-tree", tree.decode()]
                for parent in parents.decode().split():
                    args += ["-p", made.get(parent, parent)]
                res = git._exec(args, cwd=scratch, input=message, env=ident)
                made[sha.decode()] = res.stdout.decode().strip()
            c.head = made[c.head or ""]
            git._exec(["update-ref", f"refs/heads/{c.branch}", c.head], cwd=scratch)
        bundle = Path(tmp) / BUNDLE
        refs = [f"refs/heads/{c.branch}" for c in moved]
        git._exec(["bundle", "create", "--quiet", str(bundle), *refs, f"^{base}"], cwd=scratch)
        return bundle.read_bytes()


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
    """The panel of ``public``'s forked wave, made in ``store`` (``panel_store``, where no
    copy of the run is left) on this checkout."""
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
    run = sealed_record(members, where, public.id)
    if (run.fork_id, run.base_sha, run.task.source) != (
        public.fork_id,
        public.base_sha,
        public.task.source,
    ):
        raise ActionError(f"{where} is not the panel of the published fork: nothing judged")
    if BUNDLE in members:
        _fetch_candidates(git, run, members[BUNDLE], where)
    files = {k.removeprefix(ARTIFACTS): v for k, v in members.items() if k.startswith(ARTIFACTS)}
    return _remade(
        run, store, git, config, files, sealed_with=key.fingerprint, host=host, panel=True
    )
