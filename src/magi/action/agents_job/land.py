"""``magi action land --pr N``: one landing fix round in the agents job (no credential at all).

The read step before it wrote the round's input (``magi.model.fix_round.RoundInput``: the
failing checks' output and job log tails, the review comments) to a file with the job's
read-only token. Here the fixer is asked through the review loop's own path
(``magi.graph.fix.fixer_turn``): the winner's seat continues its conversation from the run
record (this runner's store, else the record ``refs/magi/runs/<id>`` holds, which the read
step saved), on a landing branch at the head the job read; progress is what git measures
(a new commit whose tree differs), adopted / rejected parsed by the items' ids. On the new
head magi runs e2e and the gate (``graph.e2e.check``, ``graph.gate.check``) and writes the
artifact publish reads: ``round.json`` and a bundle of the new commits. A round that
changes no tree is written as such: publish then ends landing blocked instead of
dispatching the same round again. A PR whose base conflicts starts the round from the base
merged in, conflicts marked (``magi.action.agents_job.land_conflict``): the fixer resolves
them, and the paths it left marked are written beside the round.

The round works on a copy of the run in a throw-away store (its repository this checkout,
its worktrees under a temp dir), so nothing of the competition's record is rewritten; only
the seats (the fixer's conversation) and the round itself go back into the real record.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from magi.action.agents_job.checkout import refuse_credentials
from magi.action.agents_job.compete import refuse_tokens
from magi.action.agents_job.land_conflict import base_tip, conflicting, left_marked, merge_base_in
from magi.core.review.land_prompt import fix_prompt, item_ids
from magi.engine import context_for
from magi.git.repo import Git
from magi.graph import e2e as e2e_node
from magi.graph import gate as gate_node
from magi.graph.fix import fixer_turn
from magi.graph.winner import winner
from magi.model.fix_round import RoundInput
from magi.model.landing import LandConflict, Landing, LandingRound
from magi.model.review import E2eResult, FixReport, Gate
from magi.model.run import Run
from magi.state.migrations import migrate
from magi.state.store import Store

__all__ = ["ROUND", "LandRound", "fix_round", "load_run"]

ROUND = "round.json"
BUNDLE = "round.bundle"
OUT_REF = "refs/magi/land-out"


class LandRound(BaseModel):
    """What one fix round did: publish's only input besides the bundle."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pr: int
    run: str
    round: int
    head: str  # the head the job read: publish's lease
    new_head: str
    changed: bool
    fix: FixReport | None = None
    e2e: E2eResult | None = None
    gate: Gate | None = None
    at: datetime | None = None  # when the round started
    input: RoundInput
    conflict: LandConflict | None = None  # the base conflicted: merged in for the fixer

    def record(self) -> LandingRound:
        """The round as the run record's ``landing`` section keeps it."""
        return LandingRound(
            round=self.round,
            head=self.head,
            input=self.input,
            fix=self.fix,
            changed=self.changed,
            commit=self.new_head if self.changed else None,
            e2e=self.e2e,
            gate=self.gate,
            at=self.at,
            conflict=self.conflict,
        )

    def verdict(self) -> str:
        """e2e and the gate in words, for the PR comment."""
        if not self.changed:
            return "nothing changed"
        e2e = "e2e passed" if self.e2e and self.e2e.passed else "e2e failed"
        if self.gate is None:
            return f"{e2e}; the gate did not run"
        if self.gate.passed:
            return f"{e2e}; gate passed"
        last = self.gate.results[-1] if self.gate.results else None
        what = f": `{last.command}` exited {last.exit_code}" if last else ""
        return f"{e2e}; gate failed{what}"


def add_round(run: Run, pr: int, done: LandingRound) -> None:
    """Append (or replace, on a re-run of the same round) ``done`` in ``run.landing``."""
    if run.landing is None or run.landing.pr != pr:
        run.landing = Landing(pr=pr)
    rounds = [r for r in run.landing.rounds if r.round != done.round]
    run.landing.rounds = sorted([*rounds, done], key=lambda r: r.round)


def load_run(store: Store, run_id: str, record: Path | None) -> Run:
    """The run from this runner's store, else from the record file the read step saved."""
    if (store.run_dir(run_id) / "run.json").is_file():
        return store.load_run(run_id)
    if record is None:
        raise FileNotFoundError(f"run {run_id} is not on this runner and no --record was given")
    run = Run.model_validate(migrate(json.loads(record.read_text(encoding="utf-8"))))
    store.create(run)
    return run


def _landing_copy(run: Run, *, root: Path, tmp: Path, base: str, pr: int) -> Run:
    """The run as this round works on it: this checkout, its own worktrees, the winner on
    the branch ``magi-land/<pr>`` (the caller makes it at the head the job read)."""
    work = run.model_copy(deep=True)
    work.repo = str(root)
    work.worktree_root = str(tmp / "worktrees")
    work.base_sha = base or work.base_sha  # the PR's base as the read step saw it, if here
    label = work.tally.winner if work.tally else None
    if label is None:
        raise ValueError(f"run {run.id} has no winner: nothing to land")
    c = work.candidate(label)
    c.branch = f"magi-land/{pr}"
    c.worktree = None  # graph.winner.worktree makes it, on the branch
    work.gate = None
    return work


def fix_round(
    *,
    checkout: Path,
    inp: RoundInput,
    run: Run,
    store: Store,
    environ: Mapping[str, str],
    out: Path,
    round_no: int,
) -> LandRound:
    """Run one fix round; see the module docstring."""
    refuse_tokens(environ)
    git = Git.discover(checkout)
    refuse_credentials(git.root)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="magi-land-") as tmp:
        base = inp.base if inp.base and git.has_commit(inp.base) else ""
        work = _landing_copy(run, root=git.root, tmp=Path(tmp), base=base, pr=inp.pr)
        scratch = Store(Path(tmp) / "home")
        scratch.create(work)
        ctx = context_for(work, store=scratch, environ=environ)
        started = ctx.clock()
        branch = winner(ctx).branch
        # A base that conflicts is merged in, markers and all, for the fixer to resolve.
        onto = base_tip(git, inp)
        merged = conflicting(git, inp.head, onto)
        conflict = merge_base_in(git, inp.head, onto, merged) if merged else None
        start = conflict.merge if conflict else inp.head
        git.run("branch", "-f", "--end-of-options", branch, start)
        try:
            cfg = work.config

            def build(live: bool) -> str:
                task = None if live else work.task.cleaned
                return fix_prompt(
                    inp, round_no, cfg.graph.land_rounds, task=task, conflict=conflict
                )

            report = fixer_turn(ctx, ids=item_ids(inp, round_no), build=build)
            new = report.head_after or inp.head
            e2e = gate = None
            if conflict is not None:
                kept = conflict.paths if not report.progressed else None
                left = kept or left_marked(git, new, conflict.paths)
                conflict = conflict.model_copy(update={"left": left})
            if report.progressed:
                e2e = e2e_node.check(ctx, new)
                gate = gate_node.check(ctx, new)
                git.run("update-ref", OUT_REF, new)
                git.run("bundle", "create", str(out / BUNDLE), OUT_REF, f"^{inp.head}")
        finally:
            # The winner's clone lives under the temp dir and goes with it; the landing
            # branch in this checkout goes now (the bundle holds the new commits).
            git.run("branch", "-D", "--end-of-options", branch, check=False)
    done = LandRound(
        pr=inp.pr,
        run=run.id,
        round=round_no,
        head=inp.head,
        new_head=new if report.progressed else inp.head,
        changed=report.progressed,
        fix=report,
        e2e=e2e,
        gate=gate,
        at=started,
        input=inp,
        conflict=conflict,
    )
    run.seats = work.seats  # the fixer's conversation goes on from here next round
    run.events = work.events
    add_round(run, inp.pr, done.record())
    store.save(run)
    (out / ROUND).write_text(json.dumps(done.model_dump(mode="json"), indent=2) + "\n")
    return done
