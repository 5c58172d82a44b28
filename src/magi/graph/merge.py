"""merge: what happens to the reviewed, gated winner (``merge.mode``).

* ``none`` (the default): print the exact command and stop; the run is ``ready``.
* ``local``: squash the winner onto the base branch, with a subject made from the task and
  a body naming the run. The base must still be where the run started (fast-forward check);
  a moved base gets the winner rebased onto it first (and the gate run again on the new
  head), and a rebase that does not apply stops the run blocked with git's words. The base
  ref moves by compare-and-swap, or, when a worktree has it checked out, by ``merge
  --ff-only`` there, so nobody's checkout is left pointing at a tree it does not hold.
* ``pr``: the Action's. Its publish job opens the pull request from the recorded head and a
  writer's ``merge`` comment lands it, so the node records that and the run is ``ready``.
  ``magi action compete`` runs every competition with ``pr`` (a runner's checkout is thrown
  away, so squashing there would land nothing); the CLI refuses ``pr`` at preflight, since
  on a laptop nothing would open the pull request.
"""

from __future__ import annotations

from pathlib import Path

from magi.errors import ConfigError, RepoError
from magi.git import clones
from magi.git.repo import NEUTRAL_EMAIL, NEUTRAL_NAME
from magi.graph import gate
from magi.graph.context import Context, Stop
from magi.graph.winner import tree, winner, worktree
from magi.model.config import Config
from magi.model.review import MergeRecord
from magi.model.run import RunStatus
from magi.state.failpoint import failpoint

NAME = "merge"
STATUS = RunStatus.MERGING
SUBJECT_CHARS = 72
_IDENT = ("-c", f"user.name={NEUTRAL_NAME}", "-c", f"user.email={NEUTRAL_EMAIL}")


PR_COMMAND = "publish opens the pull request; a writer's `merge` comment lands it"


def preflight(config: Config) -> None:
    """The CLI's check: ``pr`` is what the Action does, never a silent ``none`` here."""
    if config.merge.mode == "pr":
        raise ConfigError(
            "merge.mode = 'pr' is the GitHub Action's: label the issue on GitHub (the App "
            "dispatches `magi action compete`, whose publish job opens the pull request); "
            "on the command line use 'none' (print the command) or 'local' (squash onto the base)"
        )


def subject(task: str) -> str:
    first = next((line.strip() for line in task.splitlines() if line.strip()), "magi run")
    return first if len(first) <= SUBJECT_CHARS else first[: SUBJECT_CHARS - 1].rstrip() + "…"


def message(ctx: Context) -> str:
    c = winner(ctx)
    body = f"magi run {ctx.run.id} (candidate {c.label}, {c.branch})"
    return f"{subject(ctx.run.task.cleaned)}\n\n{body}\n"


def run(ctx: Context) -> None:
    r = ctx.run
    mode = ctx.config.merge.mode
    c = winner(ctx)
    if r.merge is not None and r.merge.result == "merged":
        raise Stop(RunStatus.MERGED, f"squashed onto {r.merge.base} as {r.merge.commit}")
    if mode == "pr":
        _record(ctx, MergeRecord(mode="pr", result="printed", command=PR_COMMAND, at=ctx.clock()))
        with ctx.lock:
            r.reason = f"reviewed and gated; {PR_COMMAND}"  # the runner sets ready
            ctx.save()
        return
    if mode == "none":
        # The recorded head, not the branch name: a branch can be moved after the tally, the
        # commit that was judged, reviewed and gated cannot.
        what = c.head or c.branch
        command = f"git switch {r.base} && git merge --squash {what} && git commit"
        if c.head:
            command += f"   # {c.branch}"
        _record(ctx, MergeRecord(mode="none", result="printed", command=command, at=ctx.clock()))
        with ctx.lock:
            r.reason = f"reviewed and gated; merge with: {command}"  # the runner sets ready
            ctx.save()
        return
    _local(ctx)


def _record(ctx: Context, rec: MergeRecord) -> None:
    with ctx.lock:
        ctx.run.merge = rec
        ctx.save()


def _blocked(ctx: Context, why: str, *, moved: bool) -> None:
    rec = MergeRecord(
        mode="local",
        result="blocked",
        base=ctx.run.base,
        base_moved=moved,
        detail=why,
        at=ctx.clock(),
    )
    _record(ctx, rec)
    raise Stop(RunStatus.BLOCKED, f"merge: {why}")


def _checked_out(ctx: Context, ref: str) -> str | None:
    """The worktree that has ``ref`` checked out, if any."""
    out = ctx.git.run("worktree", "list", "--porcelain")
    path = None
    for line in out.splitlines():
        if line.startswith("worktree "):
            path = line.removeprefix("worktree ")
        elif line == f"branch {ref}":
            return path
    return None


def _landed(ctx: Context, tip: str) -> str | None:
    """The squash commit this run already put on the base, if a kill came between landing
    it and recording it (found by the run's own line in its message), else None."""
    r, c = ctx.run, winner(ctx)
    if not r.base_sha or tip == r.base_sha or not ctx.git.is_ancestor(r.base_sha, tip):
        return None
    mine = f"magi run {r.id} (candidate {c.label}, "
    log = ctx.git.run("log", "--first-parent", "--format=%H%x00%B%x01", f"{r.base_sha}..{tip}")
    for entry in log.split("\x01"):
        sha, _, body = entry.strip("\n").partition("\x00")
        if sha and mine in body:
            return sha
    return None


def _local(ctx: Context) -> None:
    r = ctx.run
    ref = f"refs/heads/{r.base}"
    cwd = worktree(ctx)
    c = winner(ctx)
    tip = ctx.git.rev_parse(ref)
    landed = _landed(ctx, tip)
    if landed is not None:
        # Killed after the fast-forward, before the record: landing it again would squash
        # the same change twice. The record catches up with what the repository holds.
        ctx.event(NAME, f"found the squash {landed[:12]} an interrupted merge left on {r.base}")
        merged = MergeRecord(
            mode="local",
            result="merged",
            commit=landed,
            base=r.base,
            base_moved=False,
            at=ctx.clock(),
        )
        _record(ctx, merged)
        raise Stop(RunStatus.MERGED, f"squashed onto {r.base} as {landed[:12]}")
    if c.head is not None and ctx.git.head(cwd) != c.head:
        _blocked(
            ctx,
            f"the winner's tree is at {ctx.git.head(cwd)[:12]}, not at the reviewed and gated "
            f"head {c.head[:12]}: nothing merged",
            moved=False,
        )
    moved = r.base_sha is not None and tip != r.base_sha
    if moved:
        try:
            ctx.git.run(*_IDENT, "rebase", "--quiet", tip, cwd=cwd)
        except RepoError as e:
            ctx.git.run("rebase", "--abort", cwd=cwd, check=False)
            _blocked(ctx, f"{r.base} moved and the winner does not rebase onto it: {e}", moved=True)
        head = ctx.git.head(cwd)
        if clones.is_clone(cwd):
            # Rebased in the winner's own clone: brought back like any of its work.
            before = ctx.git.rev_parse(f"refs/heads/{c.branch}")
            back = clones.fetch_back(ctx.git, cwd, branch=c.branch, base=tip, fallback=before)
            if back.violations:
                why = back.violations[0]
                _blocked(ctx, f"the rebased winner was not taken: {why}", moved=True)
            head = back.head
        ctx.event(NAME, f"{r.base} moved since the run started; winner rebased to {head[:12]}")
        with ctx.lock:
            c.head = head
            ctx.save()
        if not gate.check(ctx, head).passed:
            _blocked(ctx, f"the gate failed on the winner rebased onto {r.base}", moved=True)
    head = ctx.git.rev_parse(f"refs/heads/{c.branch}")
    squash = ctx.git.run(
        *_IDENT, "commit-tree", tree(ctx, head), "-p", tip, "-F", "-", input=message(ctx)
    ).strip()
    where = _checked_out(ctx, ref)
    try:
        if where is not None:
            ctx.git.run("merge", "--ff-only", "--quiet", squash, cwd=Path(where))
        else:
            ctx.git.run("update-ref", ref, squash, tip)  # fails if the base moved meanwhile
    except RepoError as e:
        _blocked(ctx, f"{r.base} could not be fast-forwarded: {e}", moved=moved)
    failpoint("merge:landed")  # the kill tests: landed on the base, not yet recorded
    _record(
        ctx,
        MergeRecord(
            mode="local",
            result="merged",
            commit=squash,
            base=r.base,
            base_moved=moved,
            at=ctx.clock(),
        ),
    )
    raise Stop(RunStatus.MERGED, f"squashed onto {r.base} as {squash[:12]}")
