"""prep: a clone per candidate off the base tip, labels by seeded shuffle, the blind hook."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from magi.core.compete.blind import COMMIT_MSG_HOOK, judge_order, shuffle_labels
from magi.core.seats.seating import seat_name
from magi.git.clones import Skeleton, adopt_or_make, make_at, sound
from magi.graph.context import Context
from magi.model.run import Candidate, JudgeSeat, RunStatus
from magi.seats import ensure_seat, jailing

NAME = "prep"
FRESH = "prep.fresh"  # ctx.cache: the clones this process made and no seat has used yet
# ctx.cache: the clones a resume found unsound and made again, whatever work was in them lost
REMADE = "prep.remade"
# ctx.cache: a fresh run's prep asks the implement wave to tell whether your checkout is dirty
STATUS_CHECK = "prep.status"
STATUS = RunStatus.PREPARING


def branch_for(run_id: str, label: str) -> str:
    # Named by label alone, so a judge can `git show` a candidate without learning its author.
    return f"magi/{run_id}/{label}"


def hooks_dir(ctx: Context) -> Path | None:
    """magi's commit-msg hook's directory, when ``blind.commit_msg_hook`` asks for it."""
    return ctx.run_dir / "hooks" if ctx.config.blind.commit_msg_hook else None


def run(ctx: Context) -> None:
    r = ctx.run
    g = ctx.config.graph
    fresh = not r.candidates
    if fresh:
        labels = shuffle_labels(g.candidates, r.seed)
        r.labels = sorted(labels)
        slots = dict(zip(labels, ctx.seating.implementers, strict=True))
        r.candidates = [
            Candidate(label=label, seat=seat_name("impl", label), branch=branch_for(r.id, label))
            for label in sorted(labels)
        ]
        r.judges = [
            JudgeSeat(seat=seat_name("judge", j + 1), order=judge_order(r.labels, r.seed, j))
            for j in range(g.judges)
        ]
        for c in r.candidates:
            ensure_seat(ctx, c.seat, slots[c.label])
        for j, judge in enumerate(r.judges):
            ensure_seat(ctx, judge.seat, ctx.seating.judges[j])
        # Saved with the clones, below: a prep killed before that draws the same labels
        # from the recorded seed again and adopts what it finds.
        # Whether your checkout has uncommitted changes is asked while the agents work, not
        # here: a status reads the whole checkout, and beside the clones' checkouts it is
        # CPU they wait for, where the implement wave has it idle (``implement``).
        ctx.cache[STATUS_CHECK] = True
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="prep-probe") as pool:
        # The jail's probe, once per run, beside the clones rather than at the start of the
        # implement wave, where every seat would wait for it; and only once a core is left
        # over by the checkouts (fewer clones still being made than cores), where it costs
        # them nothing.
        jail: list[Future[object]] = []
        lock = threading.Lock()

        def probe() -> None:
            with lock:
                if not jail:
                    jail.append(pool.submit(jailing.decision, ctx))

        _make_worktrees(ctx, fresh=fresh, idle=probe)
        probe()
        jail[0].result()


class _First:
    """The git directory ``git init`` made for a fresh prep's first clone, for the others to
    lay out: they wait for it (or for None: the first failed first, and each runs its own)."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._made: Skeleton | None = None

    def set(self, made: Skeleton | None) -> None:
        if not self._ready.is_set():
            self._made = made
            self._ready.set()

    def wait(self) -> Skeleton | None:
        self._ready.wait()
        return self._made


def _make_worktrees(ctx: Context, *, fresh: bool, idle: Callable[[], None]) -> None:
    """Create what is missing; a resumed run finds the clones it already made.

    Each candidate's tree is a clone of its own (``magi.git.clones``). They are independent
    repositories, so they are made in parallel: no lock of the user's repository is taken.
    A clone is renamed into place only when whole, and the record is saved as each one is,
    so a kill at any instant leaves whole clones (recorded or not) and at most a partial one
    under its temporary name, which the resume makes again and fold removes. ``idle``: called
    once fewer clones are still being made than this machine has cores.
    """
    r = ctx.run
    root = ctx.worktree_root()
    hooks = hooks_dir(ctx)
    if hooks is not None:
        hooks.mkdir(parents=True, exist_ok=True)
        script = hooks / "commit-msg"
        if not script.is_file() or script.read_text() != COMMIT_MSG_HOOK:
            script.write_text(COMMIT_MSG_HOOK)
        script.chmod(0o755)
    todo = [c for c in r.candidates if c.worktree is None or not sound(root / c.label, c.branch)]
    if not todo:
        if fresh:
            ctx.save()
        return
    base = r.base_sha or r.base
    ctx.git.layout()  # once, not once per clone thread
    new = [c.label for c in todo if fresh and r.base_sha and not (root / c.label).exists()]
    # One git init for the clones of a fresh run: the first clone's, which the others copy.
    first = _First()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    left = [len(todo)]

    def made_one() -> None:
        with ctx.lock:
            left[0] -= 1
            spare = left[0] < (cores or 1)
        if spare:
            idle()

    if left[0] < (cores or 1):
        idle()

    def one(c: Candidate) -> None:
        tree = root / c.label
        if c.label in new and r.base_sha:
            # The common case: nothing there, and no branch of a new run exists yet.
            mine = c.label == new[0]
            like = None if mine else first.wait()
            made = first.set if mine else None
            try:
                make_at(
                    ctx.git,
                    tree,
                    branch=c.branch,
                    sha=r.base_sha,
                    hooks=hooks,
                    like=like,
                    made=made,
                )
            finally:
                first.set(None)  # a first clone that failed before its init: each its own
            how = "created"
            with ctx.lock:  # untouched: the implement turn that follows needs no reset
                untouched = ctx.cache.setdefault(FRESH, set())
                assert isinstance(untouched, set)  # noqa: S101 - only prep sets it
                untouched.add(tree)
        else:
            # A prep killed at any point left the clone made, half made or not at all:
            # adopt a sound one, make the rest again (never "'…/B' already exists").
            how = adopt_or_make(ctx.git, tree, branch=c.branch, base=base, hooks=hooks)
        if how != "created":
            ctx.event(NAME, f"candidate {c.label}: tree left by an earlier prep {how}")
        if how == "recreated":
            with ctx.lock:
                remade = ctx.cache.setdefault(REMADE, set())
                assert isinstance(remade, set)  # noqa: S101 - only prep sets it
                remade.add(tree)
        made_one()
        with ctx.lock:
            c.worktree = str(root / c.label)
            ctx.save()  # the record says which clones are whole, each as it is made

    workers = max(1, min(ctx.config.graph.max_parallel, len(todo)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prep") as pool:
        for f in [pool.submit(one, c) for c in todo]:
            f.result()  # each saved the record as its clone became whole
