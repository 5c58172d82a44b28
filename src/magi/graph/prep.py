"""prep: a clone per candidate off the base tip, labels by seeded shuffle, the blind hook."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from magi.core.compete.blind import COMMIT_MSG_HOOK, judge_order, shuffle_labels
from magi.core.seats.seating import seat_name
from magi.git.clones import SKELETON, adopt_or_make, make_at, skeleton, sound
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
        # implement wave, where every seat would wait for it.
        jail = pool.submit(jailing.decision, ctx)
        _make_worktrees(ctx, fresh=fresh)
        jail.result()


def _make_worktrees(ctx: Context, *, fresh: bool) -> None:
    """Create what is missing; a resumed run finds the clones it already made.

    Each candidate's tree is a clone of its own (``magi.git.clones``). They are independent
    repositories, so they are made in parallel: no lock of the user's repository is taken.
    A clone is renamed into place only when whole, and the record is saved as each one is,
    so a kill at any instant leaves whole clones (recorded or not) and at most a partial one
    under its temporary name, which the resume makes again and fold removes.
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
    new = {c.label for c in todo if fresh and r.base_sha and not (root / c.label).exists()}
    # One git init for the clones of a fresh run; a skeleton a killed prep left goes.
    like = skeleton(ctx.git, root) if len(new) > 1 else None
    if like is None and (left := root / SKELETON).exists():
        shutil.rmtree(left, ignore_errors=True)

    def one(c: Candidate) -> None:
        tree = root / c.label
        if c.label in new and r.base_sha:
            # The common case: nothing there, and no branch of a new run exists yet.
            make_at(ctx.git, tree, branch=c.branch, sha=r.base_sha, hooks=hooks, like=like)
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
        with ctx.lock:
            c.worktree = str(root / c.label)
            ctx.save()  # the record says which clones are whole, each as it is made

    workers = max(1, min(ctx.config.graph.max_parallel, len(todo)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prep") as pool:
        for f in [pool.submit(one, c) for c in todo]:
            f.result()  # each saved the record as its clone became whole
