"""implement: every candidate seat works alone in its own clone, in one parallel wave."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from magi.core.compete.prompts import implement_prompt
from magi.core.text.answers import parse_noop
from magi.core.text.bounds import cap
from magi.git import clones
from magi.git.worktree_guard import GuardSnapshot
from magi.graph import test_scan
from magi.graph.context import Context, Stop
from magi.graph.handback import clear_stale_locks, hand_back, watch
from magi.graph.prep import FRESH, hooks_dir
from magi.model.run import Candidate, RunStatus
from magi.seats import RETRYABLE, ask_with_failover
from magi.seats.jailing import decision

NAME = "implement"
STATUS = RunStatus.IMPLEMENTING
RESCUE_MESSAGE = "Work left uncommitted at the end of the implement turn"


def protected_hits(paths: list[str], patterns: list[str]) -> list[str]:
    """Paths under a protected prefix ("dir/"), equal to one, or named like one anywhere."""
    hits = []
    for p in paths:
        for pat in patterns:
            if (
                (pat.endswith("/") and p.startswith(pat))
                or p == pat
                or ("/" not in pat and p.rsplit("/", 1)[-1] == pat)
            ):
                hits.append(p)
                break
    return hits


def viable(c: Candidate) -> bool:
    """May be judged: produced a change, was not disqualified, and was not cut off by quota."""
    return c.produced and c.disqualified is None and c.status in ("ok", "timeout")


def run(ctx: Context) -> None:
    r = ctx.run
    todo = [c for c in r.candidates if c.status in RETRYABLE]
    if todo:
        # The repository's own git directory, once for the wave; each clone's, per seat.
        repo = GuardSnapshot.take(ctx.git)
        workers = min(ctx.config.graph.max_parallel, len(todo))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="impl") as pool:
            for f in [pool.submit(_one, ctx, c, repo) for c in todo]:
                f.result()
    _settle(ctx)


def _reset(ctx: Context, tree: Path, branch: str) -> None:
    """A seat that starts (again) starts from the base: no half-written turn survives a resume."""
    base = ctx.run.base_sha or ctx.run.base
    how = clones.adopt_or_make(ctx.git, tree, branch=branch, base=base, hooks=hooks_dir(ctx))
    if how != "adopted":
        ctx.event(NAME, f"{tree.name}: its tree was not sound; {how}")
    if cleared := clear_stale_locks(tree, branch):
        ctx.event(NAME, f"{tree.name}: removed stale git locks {', '.join(cleared)}")
    own = clones.git_of(ctx.git, tree)
    own.run("update-ref", f"refs/heads/{branch}", base, cwd=tree)
    own.run("reset", "-q", "--hard", base, cwd=tree)
    own.run("clean", "-q", "-fdx", cwd=tree)


def _one(ctx: Context, c: Candidate, repo: GuardSnapshot) -> None:
    assert c.worktree is not None  # noqa: S101 - prep made it; only fold clears it
    tree = Path(c.worktree)
    base = ctx.run.base_sha or ctx.run.base
    with ctx.lock:
        fresh = ctx.cache.get(FRESH)
        untouched = isinstance(fresh, set) and tree in fresh
        if isinstance(fresh, set):
            fresh.discard(tree)
    # A clone prep just made in this process is at the base, clean, unless an unjailed seat
    # of the wave (which can reach every clone) got to it first: then it is reset as ever.
    if not (untouched and decision(ctx).jailed):
        _reset(ctx, tree, c.branch)
    prompt = implement_prompt(
        ctx.run.task.cleaned, prompts=ctx.config.prompts, language=ctx.config.graph.language
    )
    watched = watch(ctx, tree, repo)
    result = ask_with_failover(
        ctx,
        seat=c.seat,
        node=NAME,
        build=lambda _live: prompt,
        cwd=tree,
        allow_write=True,
        label=c.label,
        before_retry=lambda: _reset(ctx, tree, c.branch),
    )
    back = hand_back(
        ctx,
        seat=c.seat,
        tree=tree,
        branch=c.branch,
        since=base,
        watched=watched,
        message=RESCUE_MESSAGE,
    )
    head = back.head
    files = ctx.git.numstat(base, head)
    # Both sides of a rename: `git mv .github/workflows/ci.yml x.bak` must not hide the first.
    touched = ctx.git.changed_paths(base, head)
    edited = test_scan.scan(ctx, c, base, head)
    violations = [*back.own, *back.shared]
    with ctx.lock:
        c.violations = [*c.violations, *violations]
        if violations and (rec := ctx.run.seats.get(c.seat)) is not None:
            rec.violations = [*rec.violations, *violations]  # who tried what, by seat
        c.sabotaged = back.sabotaged or c.sabotaged
        c.rescued = c.rescued or back.rescued
        c.head = head
        c.files = files
        c.commits = ctx.git.commit_count(base, head)
        c.summary = cap(result.text.strip(), ctx.config.graph.text_max_chars, keep="tail")
        c.status = result.status.value
        c.protected_changed = protected_hits(touched, list(ctx.config.blind.protected_paths))
        if c.protected_changed and ctx.config.blind.protected == "fail":
            c.disqualified = "changes protected paths: " + ", ".join(c.protected_changed)
        c.tests_changed = edited
        test_scan.judge(ctx, c)
        if not files and result.ok:
            evidence = parse_noop(result.text)
            c.verified_noop = evidence is not None
            c.noop_evidence = evidence
        ctx.save()
    if back.cleared:
        ctx.event(NAME, f"candidate {c.label}: removed stale git locks {', '.join(back.cleared)}")
    if back.own:
        ctx.event(
            NAME,
            f"candidate {c.label}: its own git directory tampered with and restored: "
            + "; ".join(back.own),
            "warn",
        )
    if back.shared:
        ctx.event(
            NAME,
            f"the repository's git control files tampered and restored after {c.label}'s "
            "turn: " + "; ".join(back.shared),
            "warn",
        )
    if back.scrubbed:
        ctx.event(
            NAME,
            f"candidate {c.label}: trailers stripped from {back.scrubbed} commit(s) that "
            "bypassed the commit-msg hook",
        )
    if back.rescued:
        ctx.event(
            NAME, f"candidate {c.label}: uncommitted work committed under the neutral identity"
        )


def _settle(ctx: Context) -> None:
    """Decide whether there is anything to judge."""
    cands = ctx.run.candidates
    if any(viable(c) for c in cands):
        return
    if cands and all(c.verified_noop for c in cands):
        raise Stop(
            RunStatus.VERIFIED_NOOP,
            "every candidate concluded, with evidence, that nothing needs to change",
        )
    if cands and all(c.status == "quota" for c in cands):
        raise Stop(RunStatus.STALLED, "every implementer seat was lost to a rate limit or quota")
    reasons = ", ".join(
        f"{c.label}: {c.disqualified or ('no change' if c.status == 'ok' else c.status)}"
        for c in cands
    )
    raise Stop(RunStatus.FAILED, f"no candidate produced a change to judge ({reasons})")
