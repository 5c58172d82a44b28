"""implement: every candidate seat works alone in its own clone, in one parallel wave."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from magi.agents.base import TurnResult, TurnStatus
from magi.core.compete.prompts import answered_prompt, implement_prompt
from magi.core.person.asking import BadQuestion, where
from magi.core.seats.runners import joined_seats
from magi.core.text.answers import parse_noop
from magi.core.text.bounds import cap
from magi.errors import RepoError
from magi.git import clones
from magi.git.worktree_guard import GuardSnapshot
from magi.graph import test_scan
from magi.graph.context import Context, Stop
from magi.graph.fork import fork_wave
from magi.graph.handback import Watch, clear_stale_locks, hand_back, watch
from magi.graph.prep import FRESH, REMADE, STATUS_CHECK, hooks_dir
from magi.model.run import Candidate, Question, RunStatus, Turn
from magi.seats import RETRYABLE, ask_with_failover
from magi.seats.asking import person_answer
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
    """May be judged (``Candidate.viable``)."""
    return c.viable


def run(ctx: Context) -> None:
    r = ctx.run
    # Seats the run parked on (``asking``) whose answer has come: their next turn carries it.
    answered = [(c, q) for c in r.candidates if (q := _answer_in(ctx, c))]
    carried = {c.seat for c, _ in answered}
    # Seats a join's seat jobs asked in this pass are not asked again in it (``joined_seats``).
    asked = joined_seats(ctx.environ, "implement")
    todo = [c for c in r.candidates if c.status in RETRYABLE and c.seat not in carried | asked]
    if any(q.node == NAME and q.status == "waiting" for q in r.questions):
        # The wave was parked on a question: what its other seats did is kept as it ended
        # (a timeout's work too); only a seat that never finished a turn is asked again.
        todo = [c for c in todo if c.status == "pending"]
    if todo and not answered:
        fork_wave(ctx, "implement", [c.seat for c in todo])
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="impl-status") as status:
        check = status.submit(_warn_if_dirty, ctx) if ctx.cache.pop(STATUS_CHECK, None) else None
        _wave(ctx, todo, answered)
        if check is not None:
            check.result()  # what it could not do is said; anything else is magi's bug
    _park_on_questions(ctx)
    _settle(ctx)


def _wave(ctx: Context, todo: list[Candidate], answered: list[tuple[Candidate, Question]]) -> None:
    if todo or answered:
        # The repository's own git directory, once for the wave; each clone's, per seat.
        repo = GuardSnapshot.take(ctx.git)
        workers = min(ctx.config.graph.max_parallel, len(todo) + len(answered))
        clean = _untouched(ctx, todo, workers)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="impl") as pool:
            futures = [
                pool.submit(_one, ctx, c, repo, clean=c.seat in clean, paid=_paid(ctx, c))
                for c in todo
            ]
            futures += [pool.submit(_one, ctx, c, repo, q) for c, q in answered]
            for f in futures:
                f.result()


def _warn_if_dirty(ctx: Context) -> None:
    """Says so when your checkout has uncommitted changes: the run branched from its last
    commit, without them. Asked beside the agents (prep's clones have the CPU, ``prep``);
    a status that fails is said too, and never stops the run: it only decides a warning."""
    r = ctx.run
    try:
        dirty = ctx.git.is_dirty()
    except RepoError as e:
        ctx.event(NAME, f"could not tell whether the working tree has uncommitted changes: {e}")
        return
    if dirty:
        ctx.event(
            NAME,
            f"the working tree has uncommitted changes; the run branches from {r.base} "
            f"({(r.base_sha or '')[:10]}), so those changes are not part of the competition",
            "warn",
        )
        ctx.save()  # said now, not with the first turn's record minutes later


def _untouched(ctx: Context, todo: list[Candidate], workers: int) -> set[str]:
    """The seats whose clone prep just made in this process and nobody can have reached
    since: they start without a reset. A jailed seat reaches no clone but its own; an
    unjailed one reaches every clone, so a clone is untouched only when its seat is of the
    wave's first batch, decided here before any agent starts."""
    with ctx.lock:
        fresh = ctx.cache.pop(FRESH, None)
    if not isinstance(fresh, set):
        return set()
    first = todo if decision(ctx).jailed else todo[:workers]
    return {c.seat for c in first if c.worktree is not None and Path(c.worktree) in fresh}


def _paid(ctx: Context, c: Candidate) -> Turn | None:
    """The turn a kill cut off from its candidate: recorded as ended well, while the
    candidate was never settled (the kill came between the turn's record and the hand-back
    that follows it). Its work is in the clone and its reply in the artifacts: it is taken
    from there, never asked for again. Unless this resume's prep found that clone unsound
    and made it again: the work is gone with it, and the seat is asked once more (handing
    back a tree at the base would record the candidate as having done nothing)."""
    if c.status != "pending":
        return None
    last = next((t for t in reversed(ctx.run.turns) if t.seat == c.seat), None)
    if last is None or last.node != NAME or last.status != "ok" or last.reply_artifact is None:
        return None
    remade = ctx.cache.get(REMADE)
    if isinstance(remade, set) and c.worktree is not None and Path(c.worktree) in remade:
        ctx.event(
            NAME,
            f"candidate {c.label}: its turn ended before magi was stopped, but its clone was "
            "found damaged and made again, so what it did is lost: its seat is asked again",
            "warn",
        )
        return None
    return last


def _waiting(ctx: Context, c: Candidate) -> Question | None:
    """The question ``c``'s seat asked that the run parks on, if any."""
    return next((q for q in ctx.run.questions if q.seat == c.seat and q.status == "waiting"), None)


def _answer_in(ctx: Context, c: Candidate) -> Question | None:
    """``c``'s waiting question once a person answered it (``magi answer``, or ``/magi
    answer`` through the runner), the answer recorded on it; None while nobody has.

    The question stays ``waiting`` until the turn that carries the answer is over (``_one``):
    a run killed during that turn gives it again on resume, from the same recorded head."""
    q = _waiting(ctx, c)
    if q is None:
        return None
    if q.turns[-1].how is not None:
        return q  # taken before a kill: its turn is given again
    try:
        got = person_answer(ctx.run_dir, q.seat, q.box, len(q.turns))
    except BadQuestion as e:
        ctx.event(NAME, f"question {q.id}: its answer could not be read ({e})", "warn")
        return None
    if got is None:
        return None
    with ctx.lock:
        last = q.turns[-1]
        last.how, last.answer = got
        last.answered_at = ctx.clock()
        ctx.save()
    ctx.event(NAME, f"candidate {c.label}: question {q.id} answered; its seat carries on")
    return q


def _park_on_questions(ctx: Context) -> None:
    """Every seat of the wave has finished its turn; one that asked where nobody could
    answer (a runner) parks the run here, until the answer comes."""
    waiting = [q for q in ctx.run.questions if q.parked_on and q.node == NAME]
    if not waiting:
        return
    who = ", ".join(f"{where(q.node, q.label, q.seat)} (question {q.id})" for q in waiting)
    raise Stop(
        RunStatus.ASKING,
        f"{who} asked a person; every other seat's turn is kept. Answer on the issue with "
        "`/magi answer <choice or words>` (or `magi answer`, then `magi run --resume`): "
        "only the asking seat carries on",
    )


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


def _keep(ctx: Context, c: Candidate, tree: Path) -> None:
    """A seat carried on after its question keeps its work: its clone is put back at the head
    magi recorded for it (the turn's own commits, rescued work included), clean."""
    how = clones.adopt_or_make(
        ctx.git, tree, branch=c.branch, base=ctx.run.base_sha or ctx.run.base, hooks=hooks_dir(ctx)
    )
    if how != "adopted":
        ctx.event(NAME, f"{tree.name}: its tree was not sound; {how}")
    if cleared := clear_stale_locks(tree, c.branch):
        ctx.event(NAME, f"{tree.name}: removed stale git locks {', '.join(cleared)}")
    clones.sync(ctx.git, tree, c.branch, c.head or ctx.run.base_sha or ctx.run.base)
    clones.git_of(ctx.git, tree).run("clean", "-q", "-fdx", cwd=tree)


def _one(
    ctx: Context,
    c: Candidate,
    repo: GuardSnapshot,
    answered: Question | None = None,
    *,
    clean: bool = False,
    paid: Turn | None = None,
) -> None:
    """One implementer turn: from the base, or (``answered``) from the seat's own work so far,
    continued with a person's answer to the question the run parked on. ``clean``: its
    clone is as prep made it (``_untouched``). ``paid``: the turn already ended before a
    kill (``_paid``); only what follows a turn is done."""
    assert c.worktree is not None  # noqa: S101 - prep made it; only fold clears it
    tree = Path(c.worktree)
    base = ctx.run.base_sha or ctx.run.base
    if paid is not None:
        watched = watch(ctx, tree, repo, before=False)
        ctx.event(
            NAME,
            f"candidate {c.label}: its turn ended before magi was stopped; its work is taken "
            "from its clone as it is (what the turn did to its own git directory before the "
            "stop cannot be told from the clone's state now)",
            "warn",
        )
        reply = ctx.store.read_artifact(ctx.run.id, paid.reply_artifact or "")
        result = TurnResult(TurnStatus.OK, text=reply)
    else:
        watched, result = _turn(ctx, c, tree, repo, answered, clean)
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
    # Two diffs of the same span, each its own git process: side by side (the slowest
    # seat's are on the wave's way to its end).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="impl-scan") as beside:
        scanned = beside.submit(test_scan.scan, ctx, c, base, head)
        # Both sides of a rename: `git mv .github/workflows/ci.yml x.bak` must not hide the first.
        files, touched = ctx.git.numstat_touched(base, head)
        edited = scanned.result()
    violations = [*back.own, *back.shared]
    with ctx.lock:
        c.violations = [*c.violations, *violations]
        if violations and (rec := ctx.run.seats.get(c.seat)) is not None:
            rec.violations = [*rec.violations, *violations]  # who tried what, by seat
        c.sabotaged = back.sabotaged or c.sabotaged
        c.rescued = c.rescued or back.rescued
        c.head = head
        c.files = files
        c.commits = back.commits if back.commits is not None else ctx.git.commit_count(base, head)
        c.summary = cap(result.text.strip(), ctx.config.graph.text_max_chars, keep="tail")
        if answered is not None and answered.turns[-1].how is not None and result.ok:
            # Carried. A reply on the thread keeps it waiting; a turn lost to quota or a
            # timeout is given again with the answer on the next resume.
            answered.status = "answered"
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


def _turn(
    ctx: Context,
    c: Candidate,
    tree: Path,
    repo: GuardSnapshot,
    answered: Question | None,
    clean: bool,
) -> tuple[Watch, TurnResult]:
    """The seat's turn itself, its clone made ready first; the snapshots taken before it."""
    task, prompts, language = ctx.run.task.cleaned, ctx.config.prompts, ctx.config.graph.language
    if answered is not None:
        _keep(ctx, c, tree)
        asked = answered.turns[-1]

        def build(live: bool) -> str:
            return answered_prompt(
                task,
                question=asked.summary,
                answer=asked.answer or "",
                live=live,
                prompts=prompts,
                language=language,
            )
    else:
        if not clean:
            _reset(ctx, tree, c.branch)
        prompt = implement_prompt(task, prompts=prompts, language=language)

        def build(live: bool) -> str:
            return prompt

    watched = watch(ctx, tree, repo)
    try:
        result = ask_with_failover(
            ctx,
            seat=c.seat,
            node=NAME,
            build=build,
            cwd=tree,
            allow_write=True,
            label=c.label,
            before_retry=lambda: _keep(ctx, c, tree) if answered else _reset(ctx, tree, c.branch),
        )
    except BaseException:
        watched.abandon()
        raise
    return watched, result


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
