"""implement: every candidate seat works alone in its worktree, in one parallel wave."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from magi.checkout import damage
from magi.core.answers import parse_noop
from magi.core.bounds import cap
from magi.core.prompts import implement_prompt
from magi.graph import test_scan
from magi.graph.context import Context, Stop
from magi.graph.scrub import scrub_branch
from magi.salvage import adopt_or_recreate
from magi.seats import RETRYABLE, ask_with_failover
from magi.state.model import Candidate, RunStatus
from magi.worktree_guard import GuardSnapshot, restore

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
        guard = GuardSnapshot.take(ctx.git, [Path(c.worktree) for c in r.candidates if c.worktree])
        workers = min(ctx.config.graph.max_parallel, len(todo))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="impl") as pool:
            for f in [pool.submit(_one, ctx, c, guard) for c in todo]:
                f.result()
    _settle(ctx)


def _clear_stale_locks(ctx: Context, worktree: Path, branch: str) -> list[str]:
    """Lock files a killed seat left mid-git (its whole process group is dead by now).

    A timeout, a failover or Ctrl-C kills an agent wherever it is, possibly inside
    ``git commit``; the lock it held would stop every later git command in that worktree.
    """
    admin = Path(ctx.git.run("rev-parse", "--absolute-git-dir", cwd=worktree).strip())
    common = ctx.git.common_dir()
    locks = [admin / "index.lock", admin / "HEAD.lock", common / f"refs/heads/{branch}.lock"]
    cleared = []
    for lock in locks:
        if lock.is_file():
            lock.unlink()
            cleared.append(lock.name)
    return cleared


def _reset(ctx: Context, worktree: Path, branch: str) -> None:
    """A seat that starts (again) starts from the base: no half-written turn survives a resume."""
    base = ctx.run.base_sha or ctx.run.base
    if cleared := _clear_stale_locks(ctx, worktree, branch):
        ctx.event(NAME, f"{worktree.name}: removed stale git locks {', '.join(cleared)}")
    ctx.git.run("reset", "-q", "--hard", base, cwd=worktree)
    ctx.git.run("clean", "-q", "-fdx", cwd=worktree)


def _back_on_branch(ctx: Context, worktree: Path, branch: str) -> list[str]:
    """The candidate is its branch: a worktree left on another ref is put back on it."""
    on = ctx.git.run("symbolic-ref", "-q", "HEAD", cwd=worktree, check=False).strip()
    if on == f"refs/heads/{branch}":
        return []
    ctx.git.run("checkout", "-q", "-f", branch, cwd=worktree)
    return [f"left its worktree on {on or 'a detached HEAD'}; put back on {branch}"]


def _one(ctx: Context, c: Candidate, guard: GuardSnapshot) -> None:
    assert c.worktree is not None  # noqa: S101 - prep made it; only fold clears it
    worktree = Path(c.worktree)
    base = ctx.run.base_sha or ctx.run.base
    _reset(ctx, worktree, c.branch)
    prompt = implement_prompt(
        ctx.run.task.cleaned, prompts=ctx.config.prompts, language=ctx.config.graph.language
    )
    result = ask_with_failover(
        ctx,
        seat=c.seat,
        node=NAME,
        build=lambda _live: prompt,
        cwd=worktree,
        allow_write=True,
        label=c.label,
        before_retry=lambda: _reset(ctx, worktree, c.branch),
    )
    # Never rescue from a damaged tree: committing "everything" in a deleted worktree
    # committed the deletion of the repository as this candidate's work. Asked before the
    # tamper guard puts a deleted .git file back, which would make the tree look sound.
    sabotaged = damage(ctx.git, worktree, c.branch)
    with ctx.lock:
        violations = restore(ctx.git, guard)
    rescued = False
    if sabotaged is not None:
        how = adopt_or_recreate(ctx.git, worktree, branch=c.branch, start=base)
        violations.append(f"sabotaged: {sabotaged}; nothing rescued, worktree {how}")
    else:
        if cleared := _clear_stale_locks(ctx, worktree, c.branch):
            ctx.event(NAME, f"candidate {c.label}: removed stale git locks {', '.join(cleared)}")
        violations += _back_on_branch(ctx, worktree, c.branch)
        rescued = ctx.git.commit_all(worktree, RESCUE_MESSAGE)
    scrubbed = scrub_branch(ctx.git, base=base, branch=c.branch)
    head = ctx.git.head(worktree)
    files = ctx.git.numstat(base, head)
    # Both sides of a rename: `git mv .github/workflows/ci.yml x.bak` must not hide the first.
    touched = ctx.git.changed_paths(base, head)
    edited = test_scan.scan(ctx, c, base, head)
    with ctx.lock:
        c.violations = [*c.violations, *violations]
        c.sabotaged = sabotaged or c.sabotaged
        c.rescued = c.rescued or rescued
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
    if violations:
        ctx.event(
            NAME,
            f"candidate {c.label}: git control files tampered and restored: "
            + "; ".join(violations),
            "warn",
        )
    if scrubbed:
        ctx.event(
            NAME,
            f"candidate {c.label}: trailers stripped from {scrubbed} commit(s) that "
            "bypassed the commit-msg hook",
        )
    if rescued:
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
