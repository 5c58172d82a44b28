"""``magi review`` and ``magi fix``: the winner's road without a competition, and targeted fixes.

``magi review BRANCH`` records a run whose candidates list holds that branch alone,
uncontested (no judge sits), and drives ``REVIEW_PIPELINE`` on it: the same review / e2e /
fix loop, gate and merge as after a competition. The run's ``base_sha`` is the merge base
of the branch and the base, so reviewers see the branch's own change and a base that moved
since is a moved base at merge time.

``magi fix RUN ID...`` hands recorded findings to the fixer seat as one targeted turn,
recorded in ``operator_fixes`` apart from the rounds: a reviewer's severity and its place
in a round are never rewritten to look like the operator's verdict.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from magi.agents.base import Agent
from magi.core.seats.seating import assign_seats
from magi.engine.session import Outcome, _drive
from magi.engine.start import context_for, create
from magi.engine.start import now as utc_now
from magi.errors import UsageError
from magi.git.repo import Git
from magi.graph import REVIEW_PIPELINE
from magi.graph.fix import fix_turn
from magi.model.config import Config
from magi.model.review import FindingRecord, OperatorFix
from magi.model.run import Candidate, Run, Seat, Tally
from magi.seats import Reporter, SilentReporter
from magi.state.store import Store

REVIEW_SOURCE = "review:"  # Task.source prefix of a `magi review` run


def is_review_run(run: Run) -> bool:
    return run.task.source.startswith(REVIEW_SOURCE)


def _checked_out_at(git: Git, branch: str) -> Path | None:
    path = None
    for line in git.run("worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            path = Path(line.removeprefix("worktree "))
        elif line == f"branch refs/heads/{branch}":
            return path
    return None


def review_branch(
    *,
    branch: str | None,
    base: str | None,
    config: Config,
    git: Git,
    store: Store,
    environ: Mapping[str, str],
    reporter: Reporter | None = None,
    rng: random.Random | None = None,
    now: datetime | None = None,
    agents: Mapping[str, Agent] | None = None,
) -> Outcome:
    """Record a one-candidate, uncontested run of ``branch`` and drive the review road."""
    reporter = reporter or SilentReporter()
    branch = branch or git.current_branch()
    if not branch or not git.ref_exists(f"refs/heads/{branch}"):
        raise UsageError(f"no such branch: {branch or '(HEAD is detached)'}")
    base = base or next((b for b in ("main", "master") if git.ref_exists(f"refs/heads/{b}")), None)
    if base is None or base == branch:
        raise UsageError("name the base to review against: magi review BRANCH --base B")
    head = git.rev_parse(f"refs/heads/{branch}")
    fork = git.run("merge-base", f"refs/heads/{base}", head).strip()
    if fork == head:
        raise UsageError(f"{branch} has nothing {base} does not already have")
    subjects = git.commit_messages(fork, head)
    task = f"Review the change on branch {branch} against {base}.\n\n" + "\n".join(
        m.splitlines()[0] for m in subjects if m
    )
    where = _checked_out_at(git, branch)
    if where is not None and git.run("status", "--porcelain", cwd=where).strip():
        raise UsageError(f"{branch} is checked out at {where} with uncommitted changes")
    # A review run has one candidate and no judge: its recorded config says so, so the
    # record checks (state.invariants) hold it to what it is, not to a competition's shape.
    graph = config.graph.model_copy(update={"candidates": 1, "judges": 0})
    config = config.model_copy(update={"graph": graph})
    run = create(
        task=task,
        source=REVIEW_SOURCE + branch,
        config=config,
        git=git,
        store=store,
        now=now or utc_now(),
        rng=rng or random.Random(),
        base=base,
    )
    seating = assign_seats(config)
    author = seating.fixer or seating.implementers[0]
    run.base_sha = fork
    run.labels = ["A"]
    run.candidates = [
        Candidate(
            label="A",
            seat="impl-A",
            branch=branch,
            worktree=str(where) if where is not None else None,
            status="ok",
            head=head,
            files=git.numstat(fork, head),
            commits=git.commit_count(fork, head),
        )
    ]
    run.seats["impl-A"] = Seat(name="impl-A", agent=author)
    run.judge_skipped = True
    run.deliberated = True
    run.folded = True
    run.tally = Tally(
        winner="A",
        judges=0,
        answered=0,
        quorum=True,
        uncontested=True,
        reason=f"magi review: {branch} alone, uncontested",
    )
    store.save(run)
    reporter.note(f"run {run.id}: reviewing {branch} against {base} ({fork[:10]})")
    ctx = context_for(run, store=store, environ=environ, agents=agents, reporter=reporter)
    return _drive(ctx, REVIEW_PIPELINE)


def operator_fix(
    store: Store,
    ref: str,
    ids: Sequence[str],
    *,
    environ: Mapping[str, str],
    reporter: Reporter | None = None,
    agents: Mapping[str, Agent] | None = None,
) -> tuple[Run, OperatorFix]:
    """One targeted fixer turn on recorded findings, stored in ``operator_fixes``."""
    run = store.load_run(store.resolve(ref))
    if run.review is None:
        raise UsageError(f"run {run.id} has no review findings")
    known: dict[str, FindingRecord] = {f.id: f for r in run.review.rounds for f in r.findings}
    unknown = [i for i in ids if i not in known]
    if not ids or unknown:
        have = ", ".join(known) or "none"
        missing = ", ".join(unknown) or "(none given)"
        raise UsageError(f"unknown finding id(s) {missing}; run {run.id} has: {have}")
    ctx = context_for(run, store=store, environ=environ, agents=agents, reporter=reporter)
    findings = [known[i].model_copy() for i in dict.fromkeys(ids)]  # verbatim: severity as raised
    e2e = run.review.rounds[-1].e2e if run.review.rounds else None
    report = fix_turn(ctx, findings, e2e)
    record = OperatorFix(at=ctx.clock(), findings=findings, report=report)
    with ctx.lock:
        run.operator_fixes.append(record)
        ctx.save()
    ctx.event(
        "fix",
        f"magi fix {' '.join(ids)}: adopted {', '.join(report.adopted) or 'none'}; "
        + ("new tree" if report.progressed else "no new tree"),
    )
    ctx.save()
    return run, record
