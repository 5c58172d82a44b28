"""prep: a worktree per candidate off the base tip, labels by seeded shuffle, the blind hook."""

from __future__ import annotations

from pathlib import Path

from magi.checkout import damage
from magi.core.blind import COMMIT_MSG_HOOK, judge_order, shuffle_labels
from magi.core.seating import seat_name
from magi.graph.context import Context
from magi.salvage import adopt_or_recreate
from magi.seats import ensure_seat
from magi.state.model import Candidate, JudgeSeat, RunStatus

NAME = "prep"
STATUS = RunStatus.PREPARING


def branch_for(run_id: str, label: str) -> str:
    # Named by label alone, so a judge can `git show` a candidate without learning its author.
    return f"magi/{run_id}/{label}"


def hooks_dir(ctx: Context) -> Path:
    return ctx.run_dir / "hooks"


def run(ctx: Context) -> None:
    r = ctx.run
    g = ctx.config.graph
    if not r.candidates:
        if ctx.git.is_dirty():
            ctx.event(
                NAME,
                f"the working tree has uncommitted changes; the run branches from {r.base} "
                f"({(r.base_sha or '')[:10]}), so those changes are not part of the competition",
                "warn",
            )
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
        ctx.save()
    _make_worktrees(ctx)


def _make_worktrees(ctx: Context) -> None:
    """Create what is missing; a resumed run finds the worktrees it already made."""
    r = ctx.run
    root = ctx.worktree_root()
    if ctx.config.blind.commit_msg_hook:
        ctx.git.enable_worktree_config()
    for c in r.candidates:
        path = root / c.label
        if c.worktree is None or damage(ctx.git, path, c.branch) is not None:
            # A prep killed at any point left the worktree made, half made or not at all:
            # adopt a sound one, make the rest again (never "'…/B' already exists").
            how = adopt_or_recreate(ctx.git, path, branch=c.branch, start=r.base_sha or r.base)
            if how != "created":
                ctx.event(NAME, f"candidate {c.label}: worktree left by an earlier prep {how}")
            if ctx.config.blind.commit_msg_hook:
                ctx.git.install_commit_msg_hook(path, hooks_dir(ctx), COMMIT_MSG_HOOK)
            c.worktree = str(path)
            ctx.save()
