"""The competition end to end: scripted command agents on real temp repos."""

from __future__ import annotations

import re
from pathlib import Path

from graph_helpers import COMMIT, FIX, calls, config, git_out, prompts, start
from magi.core.compete.blind import shuffle_labels
from magi.graph import PIPELINE
from magi.model.config import Sandbox
from magi.model.run import RunStatus
from magi.sandbox.bwrap import decide

THREE = {"a1": "right", "a2": "partial", "a3": "wrong"}


def test_split_is_deliberated_then_voted_privately_and_the_right_candidate_wins(env):
    """First choices split; one deliberation round; three private votes; code counts them.

    The one whole run of this module whose seats are processes, jailed where bubblewrap
    works (``[sandbox] mode = "auto"``), as a user's command agents would be."""
    repo, home, sd = env
    run = start(repo, home, config(sd, THREE, processes=True))
    assert run.status is RunStatus.READY, run.reason
    assert run.jail is not None
    assert run.jail.configured == "auto"
    assert run.jail.mode == decide(Sandbox()).mode  # bwrap wherever bubblewrap works (CI)
    winner = run.candidate(run.tally.winner)
    assert run.author(winner.label) == "a1"
    firsts = {j.ranking[0] for j in run.judgements}
    assert len(firsts) == 2, "the minimal judge should have split the panel"
    assert [t.seat for t in run.deliberation] == ["judge-1", "judge-2", "judge-3"]
    assert [v.vote for v in run.votes] == [winner.label] * 3
    vote_prompts = prompts(home, run, "vote")
    assert len(vote_prompts) == 3
    for text in vote_prompts:
        assert "nobody" in text.lower()
        assert '"vote"' in text
    assert run.tally.counts[winner.label] == 3


def test_labels_are_reproducible_by_seed_and_judges_see_their_own_order(env, tmp_path):
    """The same seed gives the same label -> author assignment; judge orders differ."""
    repo, home, sd = env
    cfg = config(sd, THREE, graph={"deliberate_rounds": 0})
    # Prep draws the labels and each judge's order: two whole competitions proved no more.
    one = start(repo, home, cfg, seed=5, pipeline=PIPELINE[:1])
    two = start(repo, tmp_path / "home2", cfg, seed=5, pipeline=PIPELINE[:1])
    assert {c.label: one.author(c.label) for c in one.candidates} == {
        c.label: two.author(c.label) for c in two.candidates
    }
    orders = [tuple(j.order) for j in one.judges]
    assert len(set(orders)) == len(orders)
    # That other seeds give other assignments is a pure property of the shuffle
    # (tests/core/test_core_blind.py), not something to re-prove four competitions deep.


def test_judge_packets_name_no_author_and_carry_verification(env):
    """No agent id, model or kind reaches a judge; every packet says how verification went."""
    repo, home, sd = env
    run = start(repo, home, config(sd, THREE, graph={"deliberate_rounds": 0}))
    for text in prompts(home, run, "judge"):
        for needle in ("a1", "a2", "a3", "right", "partial", "wrong", "command", "scripted"):
            assert needle not in text.split(), needle
        verdicts = re.findall(r"^<<<MATERIAL verification [A-Z]\n(PASSED|FAILED)", text, re.M)
        assert sorted(verdicts) == ["FAILED", "FAILED", "PASSED"]
        for c in run.candidates:
            assert c.branch in text


def test_trailers_never_reach_a_branch_or_a_judge_and_leaks_are_recorded(env):
    """A leaky implementer's Co-Authored-By is stripped; its vendor name in code is recorded."""
    repo, home, sd = env
    run = start(
        repo, home, config(sd, {"a1": "leaky", "a2": "wrong"}, graph={"deliberate_rounds": 0})
    )
    leaky = next(c for c in run.candidates if run.author(c.label) == "a1")
    log = git_out(repo, "log", "--format=%B", f"{run.base_sha}..{leaky.branch}")
    assert "Fix textstats word splitting" in log
    assert "Co-Authored-By" not in log
    for text in prompts(home, run, "judge"):
        assert "Co-Authored-By" not in text
    terms = {(lk.label, lk.where, lk.term.lower()) for lk in run.leaks}
    assert (leaky.label, "patch", "claude") in terms
    assert all(lk.action == "warned" for lk in run.leaks)


def test_an_agent_id_in_a_commit_message_is_caught(env):
    """Roster ids are leak terms too: a commit message naming its author is recorded."""
    repo, home, sd = env
    impl = {"zeta9": f"sh:{FIX} && {COMMIT}m 'fix by zeta9' && echo done", "a2": "wrong"}
    run = start(repo, home, config(sd, impl, graph={"deliberate_rounds": 0}))
    label = next(c.label for c in run.candidates if run.author(c.label) == "zeta9")
    assert any(
        lk.label == label and lk.where == "commit message" and lk.term == "zeta9"
        for lk in run.leaks
    )


def test_on_leak_fail_stops_the_run(env):
    """blind.on_leak = fail: a candidate that names its author stops the run before judging."""
    repo, home, sd = env
    run = start(repo, home, config(sd, {"a1": "leaky", "a2": "wrong"}, blind={"on_leak": "fail"}))
    assert run.status is RunStatus.FAILED
    assert "on_leak" in (run.reason or "")
    assert not run.judgements


def test_uncommitted_work_is_rescued_under_the_neutral_identity(env):
    """Work an implementer leaves uncommitted is committed by magi, authored by nobody."""
    repo, home, sd = env
    run = start(
        repo, home, config(sd, {"a1": "uncommitted", "a2": "wrong"}, graph={"deliberate_rounds": 0})
    )
    c = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert c.rescued
    authors = git_out(repo, "log", "--format=%an <%ae>|%cn <%ce>", f"{run.base_sha}..{c.branch}")
    assert authors.strip() == "magi <magi@localhost.invalid>|magi <magi@localhost.invalid>"


def _spy_fetches(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """The branches ``clones.fetch_back`` brings back from now on, in order."""
    from magi.git import clones

    fetched: list[str] = []
    real = clones.fetch_back

    def fetch_back(git, tree, **kw):  # type: ignore[no-untyped-def]
        fetched.append(kw["branch"])
        return real(git, tree, **kw)

    monkeypatch.setattr(clones, "fetch_back", fetch_back)
    return fetched


def test_work_left_uncommitted_comes_back_without_a_fetch(env, monkeypatch):
    """A seat that never ran git: magi's commit goes straight into the repository's store
    and its clone's own store stays empty; a seat that committed is fetched as ever."""
    fetched = _spy_fetches(monkeypatch)
    repo, home, sd = env
    agents = {"a1": f"sh:{FIX}", "a2": f"sh:{FIX} && {COMMIT} -m mine"}
    run = start(repo, home, config(sd, agents, graph={"deliberate_rounds": 0}))
    by = {run.author(c.label): c for c in run.candidates}
    assert by["a1"].rescued
    assert not by["a2"].rescued
    assert set(fetched) == {by["a2"].branch}  # its turn, and its fixer's if it won
    assert git_out(repo, "rev-parse", by["a1"].branch).strip() == by["a1"].head
    assert "word_count" in git_out(repo, "show", f"{by['a1'].head}:textstats.py")


def test_a_shared_repository_gets_the_fetch(env, monkeypatch):
    """core.sharedRepository: objects must get the group's permissions, which only the
    repository's own git gives them, so the work comes back by fetch."""
    fetched = _spy_fetches(monkeypatch)
    repo, home, sd = env
    git_out(repo, "config", "core.sharedRepository", "group")
    run = start(repo, home, config(sd, {"a1": f"sh:{FIX}"}, graph={"deliberate_rounds": 0}))
    (c,) = run.candidates
    assert c.rescued
    assert c.branch in fetched
    assert "word_count" in git_out(repo, "show", f"{c.head}:textstats.py")


def test_a_straight_commit_that_fails_falls_back_to_the_fetch(env, monkeypatch):
    """An index naming an object the repository lacks (the seat's own alternates): the
    commit is made in the clone and fetched, and the work still comes back."""
    from magi.errors import RepoError
    from magi.git.repo import Git

    real = Git.commit_all

    def commit_all(self, worktree, message, *, objects=None, index=None):  # type: ignore[no-untyped-def]
        if objects is not None:
            raise RepoError("git write-tree: invalid object")
        return real(self, worktree, message, index=index)

    monkeypatch.setattr(Git, "commit_all", commit_all)
    repo, home, sd = env
    run = start(repo, home, config(sd, {"a1": f"sh:{FIX}"}, graph={"deliberate_rounds": 0}))
    (c,) = run.candidates
    assert c.rescued
    assert not c.violations
    assert "word_count" in git_out(repo, "show", f"{c.head}:textstats.py")


def test_single_viable_candidate_is_uncontested(env):
    """One candidate produced something: no judge sits and the record says so."""
    repo, home, sd = env
    run = start(repo, home, config(sd, {"a1": "right", "a2": "empty"}))
    assert run.status is RunStatus.READY
    assert run.judge_skipped
    assert run.tally.uncontested
    assert run.tally.judges == 0
    assert not [c for c in calls(sd) if c["node"] in ("judge", "vote")]


def test_every_candidate_verified_noop_ends_verified_noop(env):
    """NO CHANGE NEEDED with evidence from every seat ends VerifiedNoop, not Failed."""
    repo, home, sd = env
    run = start(repo, home, config(sd, {"a1": "noop", "a2": "noop"}))
    assert run.status is RunStatus.VERIFIED_NOOP
    assert all(c.verified_noop for c in run.candidates)


def test_nothing_produced_fails_with_the_reason(env):
    """No candidate changed anything and none claimed a no-op: Failed, with why."""
    repo, home, sd = env
    run = start(repo, home, config(sd, {"a1": "empty", "a2": "noop"}))
    assert run.status is RunStatus.FAILED
    assert "no candidate produced a change" in (run.reason or "")


def test_tie_is_broken_by_the_documented_rule(env):
    """Two judges, two first choices, no deliberation: the tie-break is recorded with its reason."""
    repo, home, sd = env
    run = start(
        repo,
        home,
        config(
            sd,
            {"a1": "right", "a2": "partial"},
            judges={"j1": "evidence", "j2": "minimal"},
            graph={"deliberate_rounds": 0},
        ),
    )
    assert run.status is RunStatus.READY
    assert run.tally.tie_break
    assert sorted(run.tally.counts.values()) == [1, 1]


def test_protected_path_is_flagged_and_can_disqualify(env):
    """A candidate touching .magi/ is flagged; with blind.protected = fail it may not win."""
    repo, home, sd = env
    impl = {
        "a1": "sh:mkdir -p .magi && echo x > .magi/config.toml && echo changed",
        "a2": "partial",
    }
    run = start(repo, home, config(sd, impl, blind={"protected": "fail"}))
    bad = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert bad.protected_changed == [".magi/config.toml"]
    assert bad.disqualified
    assert run.tally.uncontested
    assert run.tally.winner != bad.label


def test_secrets_in_the_task_never_reach_an_agent(env):
    """A token pasted into the task is redacted before any prompt, and the record keeps the
    task as given but for the token's value (kind and count only)."""
    repo, home, sd = env
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    run = start(
        repo,
        home,
        config(sd, {"a1": "right"}, judges={}),
        task=f"fix textstats; deploy with {token}",
    )
    assert token not in run.task.original
    assert run.task.original.endswith("deploy with [REDACTED:github_token]")
    assert token not in (Path(home) / "runs" / run.id / "run.json").read_text()
    assert token not in run.task.cleaned
    for text in prompts(home, run, "implement"):
        assert token not in text
    assert run.task.redactions


def test_budget_cap_holds_the_run_before_a_seat_starts(env):
    """A seat that would start past the run's cap is not started: held, with the figures."""
    from magi.testing.fakes import FakeAgent, answering

    repo, home, sd = env
    cfg = config(sd, THREE, budget={"run_usd": 1.5}, graph={"max_parallel": 1})
    agents = {a.id: FakeAgent(a.id, answering("did it", cost_usd=1.0)) for a in cfg.agents}
    run = start(repo, home, cfg, task="t", agents=agents)
    assert run.status is RunStatus.HELD
    assert "$2.00 of its $1.50 cap" in (run.reason or "")
    asked = sum(len(a.requests) for a in agents.values())
    assert asked == 2, "the third implementer must not start past the cap"


def test_trailers_committed_past_the_hook_are_scrubbed_from_the_branch(env):
    """An implementer that commits with --no-verify still cannot land a Co-Authored-By."""
    repo, home, sd = env
    bypass = (
        f"sh:{FIX} && {COMMIT} --no-verify -m 'Fix split' "
        "-m 'Co-Authored-By: Someone <s@example.invalid>' && echo done"
    )
    run = start(repo, home, config(sd, {"a1": bypass, "a2": "wrong"}))
    c = next(c for c in run.candidates if run.author(c.label) == "a1")
    log = git_out(repo, "log", "--format=%B|%an", f"{run.base_sha}..{c.branch}")
    assert "Fix split" in log
    assert "|x" in log, "authors and trees are kept; only the message changes"
    assert "Co-Authored-By" not in log
    assert git_out(repo, "rev-parse", c.branch).strip() == c.head


def test_a_branch_moved_by_another_seat_is_put_back_before_judging(env):
    """One implementer resetting another's branch cannot change what the judges see."""
    repo, home, sd = env
    # a2 runs after a1 (max_parallel 1, label order). Its own clone holds no other branch, so
    # it finds the repository through the object store its clone borrows and points every
    # magi branch there at base.
    saboteur = (
        'sh:R=$(dirname "$(cat .git/objects/info/alternates)"); base=$(git rev-parse HEAD); '
        "for b in $(git --git-dir=\"$R\" for-each-ref --format='%(refname)' refs/heads/magi/); "
        'do git --git-dir="$R" update-ref "$b" "$base"; done; '
        f"echo x >> README.md && {COMMIT}m r"
    )
    # Unjailed: inside the jail the repository's refs are hidden and the move fails
    # outright (tests/e2e/test_jail_hostile.py); this is the repair for when there is no jail.
    cfg = config(
        sd,
        {"a1": "right", "a2": saboteur},
        graph={"deliberate_rounds": 0, "max_parallel": 1},
        sandbox={"mode": "off"},
    )
    seed = next(s for s in range(100) if shuffle_labels(2, s) == ["A", "B"])  # a1 runs first
    run = start(repo, home, cfg, seed=seed)
    right = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert git_out(repo, "rev-parse", right.branch).strip() == right.head
    wrong = next(c for c in run.candidates if run.author(c.label) == "a2")
    # Found right after the saboteur's turn, and recorded against the seat that did it.
    assert any(right.branch in v for v in run.seats[wrong.seat].violations)
    assert run.author(run.tally.winner) == "a1"


def test_a_worktree_left_on_another_ref_is_put_back_on_its_branch(env):
    """An implementer that detaches HEAD after committing: its branch is what is judged."""
    repo, home, sd = env
    impl = {
        "a1": f"sh:{FIX} && {COMMIT}m fix && git checkout -q --detach && echo done",
        "a2": "wrong",
    }
    run = start(repo, home, config(sd, impl, graph={"deliberate_rounds": 0}))
    c = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert any("detached HEAD" in v for v in c.violations)
    assert [f.path for f in c.files] == ["textstats.py"]
    assert git_out(repo, "rev-parse", c.branch).strip() == c.head


def test_a_git_lock_left_by_a_killed_or_careless_agent_does_not_stop_the_run(env):
    """index.lock left behind (as by an agent killed mid-commit) is cleared, the work kept."""
    repo, home, sd = env
    careless = f'sh:{FIX} && touch "$(git rev-parse --git-dir)/index.lock" && echo done'
    run = start(repo, home, config(sd, {"a1": careless, "a2": "wrong"}))
    assert run.status is RunStatus.READY, run.reason
    c = next(c for c in run.candidates if run.author(c.label) == "a1")
    # Once (of many runs) this read False under the full parallel suite: say why if again.
    assert c.rescued, [(e.node, e.message) for e in run.events]
    assert [f.path for f in c.files] == ["textstats.py"]
    assert any("stale git locks index.lock" in e.message for e in run.events)
