"""Hostile seats: what was judged is what merges, whatever a seat does to refs and trees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graph_helpers import COMMIT, FIX, calls, git_out, prompts, start
from graph_helpers import config as jailed_config
from magi import engine
from magi.agents import census
from magi.core.compete.blind import shuffle_labels
from magi.model.config import Config, Sandbox
from magi.model.run import RunStatus
from magi.sandbox.bwrap import decide
from magi.state.store import Store


def config(*args: Any, graph: dict[str, Any] | None = None, **kw: Any) -> Config:
    """Unjailed: every defence here must hold with [sandbox] mode = "off" (macOS, many CI).

    The review loop is left out (review_rounds = 0): a hostile implementer sitting as its
    own fixer would only end the run stagnant, and what is pinned here is the competition.
    """
    graph = {"review_rounds": 0, **(graph or {})}
    return jailed_config(*args, sandbox={"mode": "off"}, graph=graph, **kw)


# Moves the user's base branch to a commit of its own and tags it, then does honest work.
MOVE_MAIN = (
    "sh:c=$(git commit-tree -p HEAD -m evil $(git write-tree)); "
    'git update-ref refs/heads/main "$c"; git tag evil "$c"; '
    f"{FIX} && {COMMIT}m fix"
)
# Writes a failing test into every other candidate's worktree (never committed there).
PLANT = (
    'sh:for d in ../*/; do [ "$d" = "../$(basename "$PWD")/" ] || '
    "printf 'import unittest\\nclass T(unittest.TestCase):\\n    def test_x(self):\\n"
    '        self.fail()\\n\' > "$d/test_zz_planted.py"; done; '
    f"{FIX} && {COMMIT}m fix"
)


def test_an_implementer_that_moves_main_and_tags_is_undone_and_recorded(env):
    """Made in its own clone, never in the repository; removed after the turn, against that
    seat (and shown to the judges on its candidate)."""
    repo, home, sd = env
    main = git_out(repo, "rev-parse", "main").strip()
    run = start(repo, home, config(sd, {"a1": MOVE_MAIN}, judges={}))
    assert run.tally is not None, run.reason  # (the review loop after it may block: not ours)
    assert git_out(repo, "rev-parse", "main").strip() == main
    assert git_out(repo, "tag", "-l").strip() == ""
    c = run.candidates[0]
    found = "\n".join(run.seats[c.seat].violations)
    assert "refs/heads/main created" in found
    assert "refs/tags/evil created" in found
    assert "refs/tags/evil created" in "\n".join(c.violations)
    assert git_out(Path(c.worktree or ""), "tag", "-l").strip() == ""


def test_a_judge_moving_every_branch_during_the_vote_changes_nothing_that_merges(env):
    """The judged heads are put back; the merge hint names the judged sha; verify agrees."""
    repo, home, sd = env
    judges = {"j1": "move-branches:evidence", "j2": "evidence", "j3": "evidence"}
    impl = {"a1": "right", "a2": "wrong"}
    # One seat at a time, so the change is pinned on the seat that made it.
    run = start(repo, home, config(sd, impl, judges=judges, graph={"max_parallel": 1}))
    assert run.status is RunStatus.READY, run.reason
    for c in run.candidates:
        assert git_out(repo, "rev-parse", c.branch).strip() == c.head
    mover = next(j.seat for j in run.judges if run.agent_of(j.seat) == "j1")
    assert any("put back" in v for v in run.seats[mover].violations)
    assert engine.moved_heads(run) == []
    won = run.candidate(run.tally.winner)
    git_out(repo, "update-ref", f"refs/heads/{won.branch}", "main")  # anyone, after the run
    assert engine.moved_heads(run) == [
        f"{won.branch} moved to {git_out(repo, 'rev-parse', 'main')[:12]}, recorded {won.head[:12]}"
    ]


def test_verification_runs_on_the_recorded_head_not_on_a_planted_tree(env):
    """A failing test planted in the other worktree does not fail it; the dirt is recorded."""
    repo, home, sd = env
    seed = next(s for s in range(100) if shuffle_labels(2, s) == ["A", "B"])  # a2 plants after
    cfg = config(
        sd, {"a1": "right", "a2": PLANT}, judges={"j1": "evidence"}, graph={"max_parallel": 1}
    )
    run = start(repo, home, cfg, seed=seed)
    right = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert right.verification is not None
    assert right.verification.passed, right.verification.tail
    assert right.verification.head == right.head
    assert any("test_zz_planted.py" in d for d in right.verification.dirty)


def test_a_file_written_into_the_users_checkout_is_reported_loudly_and_left(env):
    """Never reverted (the user may be working there), always reported as an error."""
    repo, home, sd = env
    drop = f'sh:echo pwned > "{repo}/dropped.txt"; {FIX} && {COMMIT}m fix'
    run = start(repo, home, config(sd, {"a1": drop}, judges={}))
    assert (repo / "dropped.txt").read_text() == "pwned\n"
    errors = [e.message for e in run.events if e.level == "error"]
    assert any("YOUR CHECKOUT" in m and "dropped.txt" in m for m in errors)


def test_the_users_checkout_is_looked_at_once_a_wave_and_a_change_named_against_every_seat(
    env, monkeypatch
):
    """Two implementers at once, one writes into the user's checkout: one ``git status`` for
    the wave, and the error names both seats (which of them did it, no status can tell)."""
    from magi.git.checkout import MainStatus

    repo, home, sd = env
    taken: list[int] = []
    take = MainStatus.take.__func__  # type: ignore[attr-defined]

    def counted(cls: type[MainStatus], git: Any) -> MainStatus:
        taken.append(1)
        return take(cls, git)

    monkeypatch.setattr(MainStatus, "take", classmethod(counted))
    # a1 waits for ``unlock``; a2 writes into the checkout once a1 is out, then unlocks it:
    # both turns are running when the file appears, whatever the machine's pace.
    drop = (
        f'sh:until ls "{sd}"/waiting-* >/dev/null 2>&1; do sleep 0.05; done; '
        f'echo pwned > "{repo}/dropped.txt"; touch "{sd}/unlock"; {FIX} && {COMMIT}m fix'
    )
    cfg = config(sd, {"a1": "wait-for-unlock:right", "a2": drop}, judges={"j1": "evidence"})
    run = start(repo, home, cfg)
    errors = [e.message for e in run.events if e.level == "error"]
    (error,) = [m for m in errors if "YOUR CHECKOUT" in m]
    assert "dropped.txt" in error
    seats = sorted(c.seat for c in run.candidates)
    named = error.split("during the turns of ")[1].split(" (")[0]
    assert sorted(named.split(", ")) == seats
    for seat in seats:
        assert any("the user's checkout changed" in v for v in run.seats[seat].violations)
    # Once at the start, then once per wave (each node here is one), not once per turn; and
    # once after each batch of unjailed check commands (verify, each round's e2e), so what
    # candidate code did there is never charged to the next wave's seats.
    waves = {t.node for t in run.turns}
    assert len(run.turns) > len(waves)
    e2e_runs = [r for r in (run.review.rounds if run.review else []) if r.e2e is not None]
    checks = 1 + len(e2e_runs)
    assert len(taken) == 1 + len(waves) + checks, (len(taken), [t.node for t in run.turns])


def test_a_worktree_deleted_under_its_seat_is_never_rescued_as_work(env):
    """rm -rf of the worktree: no commit deleting the repository, the seat marked sabotaged."""
    repo, home, sd = env
    wreck = 'sh:rm -rf "$PWD"/* "$PWD"/.git'
    run = start(repo, home, config(sd, {"a1": "right", "a2": wreck}, judges={"j1": "evidence"}))
    bad = next(c for c in run.candidates if run.author(c.label) == "a2")
    assert bad.sabotaged is not None
    assert ".git" in bad.sabotaged
    assert not bad.rescued
    assert bad.files == [], "nothing was committed from the wrecked tree"
    assert git_out(repo, "rev-parse", bad.branch).strip() == run.base_sha


@pytest.mark.parametrize(
    "mode",
    [
        "off",
        pytest.param(
            "bwrap",
            marks=pytest.mark.skipif(
                not decide(Sandbox()).jailed, reason="bubblewrap is not usable here"
            ),
        ),
    ],
)
def test_a_descendant_that_escaped_with_setsid_is_ended_with_its_turn(env, mode):
    """No agent of the run outlives the run. Unjailed, the escapee is found by its marker and
    ended; jailed, its pid namespace dies with the turn (the marker scan is skipped)."""
    repo, home, sd = env
    cfg = jailed_config(
        sd, {"a1": "escape:right"}, judges={}, sandbox={"mode": mode}, graph={"review_rounds": 0}
    )
    run = start(repo, home, cfg)
    assert run.status is RunStatus.READY, run.reason
    assert run.jail is not None
    assert run.jail.mode == mode
    [pidfile] = list(sd.glob("escaped-*"))
    if mode == "off":  # in the jail the pid it wrote is its namespace's, not the host's
        pid = int(pidfile.read_text())
        assert not census.alive(pid, None), "the escaped descendant is still running"
    # It carries the run's marker either way: no live process of the host still does.
    assert census.marked(run.id, run_dir=str(Store(home).run_dir(run.id))) == []
    assert Store(home).load_run(run.id).processes == []


def test_a_3mb_rationale_with_nul_bytes_is_capped_and_cleaned_before_it_is_relayed(env):
    """Stored capped with the cut marked; no other judge's prompt carries it or a NUL."""
    repo, home, sd = env
    judges = {"j1": "huge:evidence", "j2": "minimal", "j3": "minimal"}
    run = start(repo, home, config(sd, {"a1": "right", "a2": "wrong"}, judges=judges))
    huge = next(j for j in run.judgements if run.agent_of(j.seat) == "j1")
    assert len(huge.text) <= run.config.graph.text_max_chars
    assert "characters cut by magi" in huge.text
    assert "\x00" not in huge.text
    for text in prompts(home, run, "deliberate") + prompts(home, run, "vote"):
        assert len(text) < 1_000_000
        assert "\x00" not in text
    assert len(calls(sd)) > 0


def test_preflight_refuses_judges_zero_with_several_candidates(tmp_path: Path):
    """Before the implement wave is paid for, not after."""
    from magi.engine.diagnose import diagnose

    cfg = tmp_path / "magi.toml"
    cfg.write_text(
        '[[agents]]\nid = "a"\nkind = "command"\ncommand = ["sh"]\n'
        "[graph]\ncandidates = 3\njudges = 0\n"
    )
    d = diagnose(tmp_path, cfg, {"PATH": "/usr/bin:/bin"})
    assert any("judges = 0" in p.message for p in d.problems if p.severity == "error")
