"""``magi action land --pr N``: one landing fix round in the agents job (no credential at all).

The read step before it wrote the round's input (``magi.core.fix_round.RoundInput``: the
failing checks' output, the review comments) to a file with the job's read-only token.
Here the fixer seat, the winner's own implementer seat, continues its conversation from
the run record (this runner's store, else the record ``refs/magi/runs/<id>`` holds, which
the read step saved) in a throw-away worktree at the head the job read; magi commits what
it changed, runs e2e, and writes the artifact publish reads: ``round.json`` and a bundle
of the new commits. A round that changes no tree is written as such: publish then ends
landing blocked instead of dispatching the same round again.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from magi.action.checkout import refuse_credentials
from magi.action.compete import refuse_tokens
from magi.core.fix_round import RoundInput, fix_prompt
from magi.engine import context_for
from magi.git import Git
from magi.seats import ask
from magi.shell import run_checks
from magi.state.model import Run
from magi.state.store import Store

__all__ = ["ROUND", "LandRound", "fix_round", "load_run"]

ROUND = "round.json"
BUNDLE = "round.bundle"
OUT_REF = "refs/magi/land-out"


class Checked(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: bool
    commands: list[str] = Field(default_factory=list)
    tail: str = ""


class LandRound(BaseModel):
    """What one fix round did: publish's only input besides the bundle."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pr: int
    run: str
    round: int
    head: str  # the head the job read: publish's lease
    new_head: str
    changed: bool
    e2e: Checked | None = None
    reply: str = ""
    input: RoundInput


def load_run(store: Store, run_id: str, record: Path | None) -> Run:
    """The run from this runner's store, else from the record file the read step saved."""
    if (store.run_dir(run_id) / "run.json").is_file():
        return store.load_run(run_id)
    if record is None:
        raise FileNotFoundError(f"run {run_id} is not on this runner and no --record was given")
    run = Run.model_validate_json(record.read_text(encoding="utf-8"))
    store.create(run)
    return run


def _seat(run: Run) -> str:
    winner = run.tally.winner if run.tally else None
    for c in run.candidates:
        if c.label == winner:
            return c.seat
    raise ValueError(f"run {run.id} has no winner: nothing to land")


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
    cfg = run.config
    ctx = context_for(run, store=store, environ=environ)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="magi-land-") as tmp:
        wt = Path(tmp) / "wt"
        git.run("worktree", "add", "--detach", str(wt), inp.head)
        try:
            prompt = fix_prompt(inp, round_no, cfg.graph.land_rounds)
            result = ask(ctx, seat=_seat(run), node="fix", prompt=prompt, cwd=wt, allow_write=True)
            git.commit_all(wt, f"magi: landing fix round {round_no} for #{inp.pr}")
            new = git.run("rev-parse", "HEAD", cwd=wt).strip()
            tree = git.run("rev-parse", f"{new}^{{tree}}").strip()
            changed = tree != git.run("rev-parse", f"{inp.head}^{{tree}}").strip()
            checked = None
            if changed:
                v = run_checks(
                    list(cfg.verify.e2e),
                    cwd=wt,
                    timeout=float(cfg.graph.timeout_verify),
                    environ=environ,
                    output_max_bytes=cfg.graph.output_max_bytes,
                    head=new,
                )
                checked = Checked(passed=v.passed, commands=v.commands, tail=v.tail)
                git.run("update-ref", OUT_REF, new)
                git.run("bundle", "create", str(out / BUNDLE), OUT_REF, f"^{inp.head}")
        finally:
            git.run("worktree", "remove", "--force", str(wt), check=False)
    ctx.save()
    done = LandRound(
        pr=inp.pr,
        run=run.id,
        round=round_no,
        head=inp.head,
        new_head=new if changed else inp.head,
        changed=changed,
        e2e=checked,
        reply=(result.text or "")[-2000:],
        input=inp,
    )
    (out / ROUND).write_text(json.dumps(done.model_dump(mode="json"), indent=2) + "\n")
    return done
