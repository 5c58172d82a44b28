"""The review loop on real repos with scripted reviewers and fixers: every way it ends."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from graph_helpers import calls, config, git_out, prompts, scratch_repo, start
from magi import engine
from magi.core.compete.blind import leak_terms
from magi.core.review.loop import follow_ups
from magi.model.run import Run, RunStatus
from magi.state.store import Store

AUTHOR = "zed-author"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    sd = tmp_path / "scripted"
    sd.mkdir()
    return sd, scratch_repo(tmp_path), tmp_path / "home"


def solo(
    world: tuple[Path, Path, Path],
    fixer: str = "right",
    reviewers: dict[str, str] | None = None,
    **tables: dict[str, Any],
) -> Run:
    """One candidate (uncontested, no judge) through the whole road."""
    sd, repo, home = world
    revs = reviewers if reviewers is not None else {"rev-one": "evidence", "rev-two": "minimal"}
    graph = {"review_rounds": 3, **tables.pop("graph", {})}
    cfg = config(sd, {AUTHOR: fixer}, judges={}, reviewers=revs, graph=graph, **tables)
    return start(repo, home, cfg)


def test_clean_review_gates_and_is_ready(world):
    """No finding and e2e green on the reviewed head: gate (zero commands, still ran), ready."""
    run = solo(world)
    assert run.status is RunStatus.READY, run.reason
    rv = run.review
    assert rv is not None
    assert rv.outcome == "clean"
    assert len(rv.rounds) == 1
    rnd = rv.rounds[0]
    assert rnd.answered == ["review-1", "review-2"]
    assert rnd.e2e is not None
    assert rnd.e2e.passed
    assert rnd.e2e.head == rnd.head == run.candidate(rv.label).head
    assert run.gate is not None
    assert (run.gate.ran, run.gate.head, run.gate.commands) == (True, rnd.head, [])
    assert run.merge is not None
    assert run.merge.result == "printed"
    # The command names the commit that was reviewed and gated, not a movable branch.
    assert f"git merge --squash {rnd.head} && git commit" in (run.merge.command or "")
    assert rv.branch in (run.merge.command or "")


def test_e2e_and_gate_with_no_command_make_no_checkout(world, monkeypatch):
    """With nothing to run, neither e2e nor the gate leases a tree (a full checkout on a
    run's first use), and both still record that they passed on the reviewed head."""
    from magi.graph import e2e, gate

    def no_tree(*_a: object, **_k: object) -> None:
        raise AssertionError("a checkout was made with no command to run in it")

    monkeypatch.setattr(e2e, "clean_worktree", no_tree)
    monkeypatch.setattr(gate, "clean_worktree", no_tree)
    run = solo(world, verify={"e2e": [], "gate": []})
    assert run.status is RunStatus.READY, run.reason
    rnd = run.review.rounds[-1] if run.review else None
    assert rnd is not None
    assert rnd.e2e is not None
    assert (rnd.e2e.passed, rnd.e2e.exit_code, rnd.e2e.head) == (True, 0, rnd.head)
    assert run.gate is not None
    assert (run.gate.ran, run.gate.passed, run.gate.head) == (True, True, rnd.head)


def test_reviewer_prompts_carry_no_author_identity(world):
    """Every review prompt artifact is scanned against the roster ids and vendor names."""
    _sd, _, home = world
    run = solo(world, reviewers={"rev-one": "evidence+blocker", "rev-two": "minimal"})
    texts = prompts(home, run, "review")
    assert len(texts) >= 2
    terms = leak_terms(run.config.agents)
    assert AUTHOR in terms
    for text in texts:
        low = text.lower()
        assert not [t for t in terms if t.lower() in low]


def test_blocking_finding_fixed_then_clean(world):
    """R1-1-1 adopted and committed: round 2 on the new head is clean; e2e deferred, then run."""
    sd, repo, _home = world
    run = solo(world, reviewers={"rev-one": "evidence+blocker", "rev-two": "minimal"})
    assert run.status is RunStatus.READY, run.reason
    rv = run.review
    assert rv is not None
    r1, r2 = rv.rounds
    assert [f.id for f in r1.findings] == ["R1-1-1", "R1-1-2"]
    assert r1.e2e is not None
    assert r1.e2e.deferred
    assert r1.e2e.passed is None
    assert r1.fix is not None
    assert r1.fix.asked == ["R1-1-1"]
    assert r1.fix.adopted == ["R1-1-1"]
    assert r1.progressed is True
    assert r2.head == r1.fix.head_after != r1.head
    assert r2.e2e is not None
    assert (r2.e2e.passed, r2.e2e.head) == (True, r2.head)
    assert [f.id for f in follow_ups(rv)] == ["R1-1-2"]
    # The fixer is the author's own seat, continuing its conversation.
    fix_calls = [c for c in calls(sd) if c["node"] == "fix"]
    assert [c["seat"] for c in fix_calls] == [run.candidates[0].seat]
    assert "REVIEWED.md" in git_out(repo, "show", "--stat", "--format=", rv.branch)


def test_out_of_rounds_is_blocked(world):
    """A blocking finding every round: blocked once review_rounds are used up."""
    run = solo(world, reviewers={"rev-one": "evidence+always"}, graph={"review_rounds": 2})
    assert run.status is RunStatus.BLOCKED
    assert run.review is not None
    assert run.review.outcome == "rounds"
    assert "R2-1-1" in (run.reason or "")
    assert run.gate is None


@pytest.mark.parametrize("mode", ["nocommit", "same-tree"])
def test_stagnant_fixer_is_blocked(world, mode):
    """No commit, or a commit with an identical tree: blocked as stagnant after round 1."""
    run = solo(world, fixer=f"right+{mode}", reviewers={"rev-one": "evidence+blocker"})
    assert run.status is RunStatus.BLOCKED
    assert run.review is not None
    assert run.review.outcome == "stagnant"
    assert len(run.review.rounds) == 1
    fix = run.review.rounds[0].fix
    assert fix is not None
    assert fix.adopted == ["R1-1-1"]  # what it said ...
    assert fix.progressed is False  # ... is not what git measured
    assert (fix.head_before == fix.head_after) is (mode == "nocommit")


def test_incomplete_round_blocks_under_block(world):
    """A reviewer that never answers validly: re-reviewed, then blocked naming the seat."""
    revs = {"rev-one": "evidence", "rev-two": "evidence+malformed"}
    run = solo(world, reviewers=revs, graph={"review_rounds": 2})
    assert run.status is RunStatus.BLOCKED
    assert run.review is not None
    assert run.review.outcome == "incomplete"
    assert [r.missing for r in run.review.rounds] == [["review-2"], ["review-2"]]
    assert "review-2" in (run.reason or "")


def test_incomplete_round_gates_under_warn(world):
    """incomplete_review = warn gates on those who answered; the gap stays on record."""
    revs = {"rev-one": "evidence", "rev-two": "evidence+malformed"}
    run = solo(world, reviewers=revs, graph={"incomplete_review": "warn"})
    assert run.status is RunStatus.READY, run.reason
    assert run.review is not None
    assert run.review.rounds[0].missing == ["review-2"]
    assert "review-2" in (run.review.reason or "")


def test_e2e_red_then_green(world):
    """The partial solution fails e2e; the fixer gets the output, and round 2 is green."""
    _sd, _, home = world
    run = solo(world, fixer="partial", graph={"review_rounds": 3}, verify={"candidates": False})
    assert run.status is RunStatus.READY, run.reason
    assert run.review is not None
    r1, r2 = run.review.rounds
    assert r1.e2e is not None
    assert (r1.e2e.passed, r1.e2e.head) == (False, r1.head)
    assert r1.e2e.exit_code not in (0, None)
    assert r2.e2e is not None
    assert (r2.e2e.passed, r2.e2e.head) == (True, r2.head)
    fix_prompt = prompts(home, run, "fix")[0]
    assert f"on commit {r1.head}" in fix_prompt


def test_red_gate_blocks_with_the_output(world):
    """A gate command that exits non-zero blocks the run, naming the command and head."""
    run = solo(world, verify={"gate": ["true", "echo broken >&2; exit 3", "true"]})
    assert run.status is RunStatus.BLOCKED
    assert run.gate is not None
    assert run.gate.ran
    assert run.gate.passed is False
    assert [r.exit_code for r in run.gate.results] == [0, 3]
    assert "exit 3" in (run.reason or "")
    assert "broken" in (run.reason or "")


def _local(world: tuple[Path, Path, Path], run: Run) -> BaseException:
    """Run the merge node on a ready run with merge.mode = local."""
    from magi.graph import merge
    from magi.seats import Stop

    _, _, home = world
    cfg = run.config.model_copy(
        update={"merge": run.config.merge.model_copy(update={"mode": "local"})}
    )
    run.config = cfg
    ctx = engine.context_for(run, store=Store(home), environ=dict(os.environ))
    with pytest.raises(Stop) as stop:
        merge.run(ctx)
    return stop.value


def _commit_on_main(repo: Path, path: str, text: str) -> str:
    git_out(repo, "checkout", "-q", "main")
    (repo / path).write_text(text)
    git_out(repo, "add", "-A")
    git_out(repo, "-c", "user.name=o", "-c", "user.email=o@x", "commit", "-q", "-m", "moved")
    return git_out(repo, "rev-parse", "HEAD").strip()


def test_merge_local_squashes_onto_the_base(world):
    """local: one squash commit on main, subject from the task, body naming the run."""
    _, repo, _ = world
    run = solo(world)
    stop = _local(world, run)
    assert stop.status is RunStatus.MERGED  # type: ignore[attr-defined]
    assert run.merge is not None
    assert (run.merge.result, run.merge.base_moved) == ("merged", False)
    assert git_out(repo, "rev-parse", "main").strip() == run.merge.commit
    subject, body = git_out(repo, "log", "-1", "--format=%s%n%b", "main").split("\n", 1)
    assert subject == run.task.cleaned.splitlines()[0][:72]
    assert run.id in body
    assert git_out(repo, "rev-list", "--count", f"{run.base_sha}..main").strip() == "1"


def test_merge_local_after_the_base_moved_rebases_first(world):
    """A moved base: the winner is rebased onto it (gate again), then squashed on top."""
    _, repo, _ = world
    run = solo(world)
    moved = _commit_on_main(repo, "NOTES.md", "unrelated\n")
    stop = _local(world, run)
    assert stop.status is RunStatus.MERGED  # type: ignore[attr-defined]
    assert run.merge is not None
    assert run.merge.base_moved
    assert git_out(repo, "rev-parse", "main~1").strip() == moved
    assert (repo / "NOTES.md").exists()


def test_merge_local_conflict_is_blocked_with_gits_words(world):
    """A rebase that does not apply stops blocked, quoting git; main is untouched."""
    _, repo, _ = world
    run = solo(world)
    moved = _commit_on_main(repo, "textstats.py", "def word_count(t):\n    return 0\n")
    stop = _local(world, run)
    assert stop.status is RunStatus.BLOCKED  # type: ignore[attr-defined]
    assert run.merge is not None
    assert run.merge.result == "blocked"
    assert "CONFLICT" in run.merge.detail or "could not apply" in run.merge.detail
    assert git_out(repo, "rev-parse", "main").strip() == moved
