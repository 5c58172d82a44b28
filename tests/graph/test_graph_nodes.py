"""Nodes one at a time, with in-process fake agents; the runner's loop stage; the two bugs."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from graph_helpers import NOW, config, git_out, start
from magi import engine
from magi.agents.base import CancelToken, TurnRequest, TurnResult, TurnStatus
from magi.core.seats.jail import policy, visible, writes_under
from magi.demo.repo import RIGHT
from magi.errors import MagiError, RepoError
from magi.git import repo as repo_module
from magi.git.repo import Git
from magi.graph import Context, Loop, execute, implement, judge, mermaid, prep, verify
from magi.graph.node import names
from magi.model.config import Config
from magi.model.run import Candidate, RunStatus
from magi.report import report_json
from magi.seats import Stop
from magi.state.store import Store
from magi.testing.fakes import FakeAgent

JUDGE_ANSWER = '```json\n{"ranking": ["A", "B"], "rationale": "A passes"}\n```'
CLEAN_REVIEW = '```json\n{"findings": []}\n```'
VOTE_ANSWER = '```json\n{"vote": "A", "rationale": "A passes"}\n```'


def fixer(request: TurnRequest) -> TurnResult:
    """An implementer that fixes textstats.py in its worktree and leaves it uncommitted."""
    (request.cwd / "textstats.py").write_text(RIGHT)
    return TurnResult(TurnStatus.OK, text="fixed")


def judging(request: TurnRequest) -> TurnResult:
    """A judge that ranks A first and votes for A, in the shape each node owes."""
    if request.node == "vote":
        return TurnResult(TurnStatus.OK, text=VOTE_ANSWER)
    if request.node == "review":
        return TurnResult(TurnStatus.OK, text=CLEAN_REVIEW)
    return TurnResult(TurnStatus.OK, text=JUDGE_ANSWER)


def context(repo: Path, home: Path, cfg: Config, agents: dict[str, FakeAgent]) -> Context:
    store = Store(home)
    run = engine.create(
        task="fix word_count",
        source="test",
        config=cfg,
        git=Git.discover(repo),
        store=store,
        now=NOW,
        rng=random.Random(3),
        seed=3,
    )
    return engine.context_for(run, store=store, environ=dict(os.environ), agents=agents)


def two_fake_implementers(sd: Path) -> tuple[Config, dict[str, FakeAgent]]:
    cfg = config(sd, {"a1": "right", "a2": "right"}, judges={"j1": "evidence"})
    agents = {
        "a1": FakeAgent("a1", fixer),
        "a2": FakeAgent("a2", fixer),
        "j1": FakeAgent("j1", judging),
    }
    return cfg, agents


def test_prep_then_implement_alone_with_fake_agents(env):
    """prep makes a worktree per label; implement asks each seat once and records its head."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    prep.run(ctx)
    assert [c.label for c in ctx.run.candidates] == ["A", "B"]
    assert all(Path(c.worktree or "").is_dir() for c in ctx.run.candidates)
    implement.run(ctx)
    assert len(agents["a1"].requests) == len(agents["a2"].requests) == 1
    for c in ctx.run.candidates:
        assert c.status == "ok"
        assert c.rescued, "the fake left its work uncommitted; magi committed it"
        assert c.head == git_out(repo, "rev-parse", f"refs/heads/{c.branch}").strip()
    assert not agents["j1"].requests


def test_prep_runs_only_the_git_a_clone_needs(env, monkeypatch):
    """One git process per clone (its checkout) and one ``git init``, the first clone's,
    whose git directory the others copy: the repository's layout is learned once, never
    once per clone thread, and the status of your checkout waits for the implement wave."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    ran: list[str] = []
    real = Git._exec
    monkeypatch.setattr(
        Git, "_exec", lambda self, args, **kw: (ran.append(args[0]), real(self, args, **kw))[1]
    )
    monkeypatch.setattr(repo_module, "_LAYOUTS", {})  # as a process that never discovered it
    ctx.git._common = ctx.git._format = None
    prep.run(ctx)
    assert sorted(ran) == sorted(["rev-parse", "init"] + ["read-tree"] * 2)
    root = ctx.worktree_root()
    assert sorted(p.name for p in root.iterdir()) == ["A", "B"], "nothing half-made left"
    for c in ctx.run.candidates:
        gd = Path(c.worktree or "") / ".git"
        assert (gd / "HEAD").read_text() == f"ref: refs/heads/{c.branch}\n"
        assert git_out(Path(c.worktree or ""), "status", "--porcelain") == ""


def test_judging_puts_back_a_candidate_branch_that_moved_since_its_turn(env, monkeypatch):
    """Moved, or turned into a symbolic ref to another branch (which is replaced, never
    written through): each is put back on its recorded head and charged as moved, from one
    ``for-each-ref`` and one ``update-ref`` whatever the number of candidates."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    prep.run(ctx)
    implement.run(ctx)
    a, b = ctx.run.candidates
    git_out(repo, "update-ref", f"refs/heads/{a.branch}", ctx.run.base_sha or "")
    git_out(repo, "symbolic-ref", f"refs/heads/{b.branch}", f"refs/heads/{a.branch}")
    ran: list[str] = []
    real = Git._exec
    monkeypatch.setattr(
        Git, "_exec", lambda self, args, **kw: (ran.append(args[0]), real(self, args, **kw))[1]
    )
    judge.pin_branches(ctx)
    assert sorted(ran) == ["for-each-ref", "update-ref"]
    for c in (a, b):
        assert git_out(repo, "rev-parse", f"refs/heads/{c.branch}").strip() == c.head
        assert c.violations == [f"branch {c.branch} was moved by another seat; restored"]
    link = subprocess.run(["git", "symbolic-ref", "-q", f"refs/heads/{b.branch}"], cwd=repo)
    assert link.returncode == 1, "a plain branch again"
    ran.clear()
    judge.pin_branches(ctx)  # nothing moved: nothing written, nothing charged twice
    assert ran == ["for-each-ref"]
    assert len(a.violations) == 1


def test_a_first_clone_that_fails_before_its_init_leaves_the_others_their_own(env, monkeypatch):
    """The clones waiting to copy the first one's git directory are released when it fails
    first: each runs a ``git init`` of its own, and the failure is the run's to report."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    real = prep.make_at
    made: list[tuple[str, bool]] = []

    def make_at(git, tree, **kw):  # type: ignore[no-untyped-def]
        if kw.get("made") is not None:  # the first clone
            raise RepoError("git init: cannot create the folder")
        made.append((tree.name, kw.get("like") is None))
        return real(git, tree, **kw)

    monkeypatch.setattr(prep, "make_at", make_at)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            prep.run(ctx)
        except RepoError as e:
            failed.append(e)

    import threading

    done = threading.Thread(target=run, daemon=True)
    done.start()
    done.join(60)
    assert not done.is_alive(), "a clone still waits for the first one's git directory"
    assert "cannot create the folder" in str(failed[0])
    assert made == [("B", True)], "B ran its own git init"
    assert (ctx.worktree_root() / "B" / ".git" / "HEAD").is_file()


def _warnings(ctx: Context) -> list[tuple[str, str]]:
    return [(e.node, e.message) for e in ctx.run.events if e.level == "warn"]


def test_the_wave_says_when_your_checkout_has_uncommitted_changes(env, monkeypatch):
    """Asked beside the agents, not beside prep's checkouts; a status that fails says so and
    the run goes on (it only decides a warning); a resumed wave does not ask again."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    (repo / "textstats.py").write_text("# not committed\n")
    ctx = context(repo, home, cfg, agents)
    asked: list[str] = []
    real = Git.is_dirty
    monkeypatch.setattr(Git, "is_dirty", lambda self: (asked.append("prep"), real(self))[1])
    prep.run(ctx)
    assert asked == []
    assert _warnings(ctx) == []
    monkeypatch.setattr(Git, "is_dirty", lambda self: (asked.append("wave"), real(self))[1])
    implement.run(ctx)
    assert asked == ["wave"]
    (warned,) = _warnings(ctx)
    assert warned[0] == "implement"
    assert "uncommitted changes" in warned[1]
    assert all(c.status == "ok" for c in ctx.run.candidates)
    implement.run(ctx)  # nothing left to ask: nor is the status asked again
    assert asked == ["wave"]

    home2 = home.parent / "home2"
    ctx = context(repo, home2, cfg, agents)
    prep.run(ctx)

    def broken(self: Git) -> bool:
        raise RepoError("git status: index file corrupt")

    monkeypatch.setattr(Git, "is_dirty", broken)
    implement.run(ctx)
    assert _warnings(ctx) == []
    assert any(
        "could not tell" in e.message and "index file corrupt" in e.message for e in ctx.run.events
    )
    assert all(c.status == "ok" for c in ctx.run.candidates)


def test_a_clean_checkout_gets_no_warning(env):
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    prep.run(ctx)
    implement.run(ctx)
    assert _warnings(ctx) == []
    assert all(c.status == "ok" for c in ctx.run.candidates)


@pytest.mark.parametrize(("cores", "done_first"), [(1, 2), (2, 1), (8, 0)])
def test_the_jails_probe_waits_for_a_core_the_checkouts_leave(env, monkeypatch, cores, done_first):
    """prep's checkouts fill every core while more of them run than there are cores: the
    probe starts once fewer clones are still being made than cores (at once when there
    are cores to spare), and prep ends with the jail decided. Checkouts past the ones that
    must finish first wait for the probe, so what it finds done is exact."""
    import threading

    from magi.graph.prep import os as prep_os
    from magi.seats import jailing

    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    monkeypatch.setattr(prep_os, "sched_getaffinity", lambda _pid: set(range(cores)))
    lock, started, checked_out = threading.Lock(), [0], [0]
    probing = threading.Event()
    real = Git._exec

    def counting(self, args, **kw):  # type: ignore[no-untyped-def]
        if args[0] == "read-tree":
            with lock:
                started[0] += 1
                late = started[0] > done_first
            if late and cores > 1:
                assert probing.wait(30), "the probe never started"
        out = real(self, args, **kw)
        if args[0] == "read-tree":
            with lock:
                checked_out[0] += 1
        return out

    monkeypatch.setattr(Git, "_exec", counting)
    probed: list[int] = []
    decide = jailing.decision

    def decision(c):  # type: ignore[no-untyped-def]
        with lock:
            probed.append(checked_out[0])
        probing.set()
        return decide(c)

    monkeypatch.setattr(jailing, "decision", decision)
    prep.run(ctx)
    assert probed[0] == done_first
    assert ctx.run.jail is not None


class _Now:
    """A timer that fires as it starts: the copy is refreshed before the seat begins."""

    def __init__(self, delay: float, fn) -> None:  # type: ignore[no-untyped-def]
        self.fn = fn

    def start(self) -> None:
        self.fn()

    def cancel(self) -> None:
        pass


def stager(request: TurnRequest) -> TurnResult:
    """An implementer that stages its own work: its index is no longer the one magi noted."""
    (request.cwd / "textstats.py").write_text(RIGHT)
    subprocess.run(["git", "add", "textstats.py"], cwd=request.cwd, check=True)
    return TurnResult(TurnStatus.OK, text="staged")


def _staged_wave(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, object], dict[str, Candidate]]:
    """prep and the implement wave, each copy refreshed as its timer starts: the index each
    candidate's rescue commit staged into (None: the clone's own), and candidates by agent."""
    from magi.git import warm_index

    monkeypatch.setattr(warm_index, "_timer", _Now)
    staged: dict[str, object] = {}
    real = Git.commit_all

    def commit_all(self, worktree, message, **kw):  # type: ignore[no-untyped-def]
        staged[Path(worktree).name] = kw.get("index")
        return real(self, worktree, message, **kw)

    monkeypatch.setattr(Git, "commit_all", commit_all)
    prep.run(ctx)
    implement.run(ctx)
    return staged, {ctx.run.agent_of(c.seat): c for c in ctx.run.candidates}


def test_the_hand_back_stages_from_the_index_refreshed_while_the_seat_worked(env, monkeypatch):
    """A seat that ran no git is committed from magi's refreshed copy of its index, which
    then is the clone's; one that staged its own work is committed from its own index."""
    from magi.git import warm_index

    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    agents["a2"] = FakeAgent("a2", stager)
    ctx = context(repo, home, cfg, agents)
    staged, by_agent = _staged_wave(ctx, monkeypatch)
    assert staged[by_agent["a1"].label] is not None, "the refreshed copy was not used"
    assert staged[by_agent["a2"].label] is None, "a seat's own staging was overridden"
    for c in ctx.run.candidates:
        tree = Path(c.worktree or "")
        assert "word_count" in git_out(repo, "show", f"{c.head}:textstats.py")
        assert git_out(tree, "status", "--porcelain") == ""
        assert not warm_index.place(tree).exists()


def attributer(request: TurnRequest) -> TurnResult:
    """An implementer whose work includes a .gitattributes of its own."""
    (request.cwd / ".gitattributes").write_text("*.py text eol=lf\n")
    return fixer(request)


def test_new_attributes_are_staged_from_the_clones_own_index(env, monkeypatch):
    """A seat that adds a .gitattributes is staged from its clone's own index, whose every
    file git reads again under it, whatever the copy's refresh already read; and a turn
    taken from a clone after a kill (its turn was over before magi looked) refreshes no
    copy with what the seat left there."""
    from magi.git import warm_index
    from magi.graph.handback import watch

    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    agents["a1"] = FakeAgent("a1", attributer)
    ctx = context(repo, home, cfg, agents)
    staged, by_agent = _staged_wave(ctx, monkeypatch)
    assert staged[by_agent["a1"].label] is None
    assert staged[by_agent["a2"].label] is not None
    assert git_out(repo, "show", f"{by_agent['a1'].head}:.gitattributes")
    tree = Path(by_agent["a2"].worktree or "")
    assert watch(ctx, tree, before=False).warm is None
    assert not warm_index.place(tree).exists()


def planter(request: TurnRequest) -> TurnResult:
    """An unjailed implementer that plants a file in every other candidate's clone."""
    for other in request.cwd.parent.iterdir():
        if other != request.cwd and (other / ".git").is_dir():
            (other / "planted.txt").write_text("from a neighbour\n")
    return fixer(request)


@pytest.mark.parametrize("parallel", [1, 2])
def test_a_clone_another_seat_could_reach_is_reset_before_its_turn(env, parallel, monkeypatch):
    """Unjailed, a seat reaches every clone: one whose seat starts after another's turn (one
    seat at a time) starts from a reset clone, and what was planted never reaches its branch.
    Seats that start together start on prep's clones as they are, with no reset to pay for
    (what they do to each other mid-turn is the guard's to report, not a reset's)."""
    repo, home, sd = env
    cfg, _ = two_fake_implementers(sd)
    cfg = cfg.model_copy(update={"graph": cfg.graph.model_copy(update={"max_parallel": parallel})})
    agents = {"a1": FakeAgent("a1", planter), "a2": FakeAgent("a2", planter)}
    agents["j1"] = FakeAgent("j1", judging)
    resets: list[str] = []
    reset = implement._reset
    monkeypatch.setattr(
        implement,
        "_reset",
        lambda ctx, tree, branch: (resets.append(tree.name), reset(ctx, tree, branch)),
    )
    ctx = context(repo, home, cfg, agents)
    prep.run(ctx)
    implement.run(ctx)
    assert all(c.status == "ok" for c in ctx.run.candidates)
    if parallel == 1:
        assert resets == ["B"]  # A went first, on prep's clone; B after A had been at it
        assert [f.path for c in ctx.run.candidates for f in c.files] == ["textstats.py"] * 2
    else:
        assert resets == []


def test_verify_alone_records_the_head_it_checked(env):
    """verify runs e2e in each viable candidate and names the commit it checked."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    prep.run(ctx)
    implement.run(ctx)
    verify.run(ctx)
    for c in ctx.run.candidates:
        assert c.verification is not None
        assert c.verification.head == c.head
        assert c.verification.passed


def test_judge_alone_fails_over_and_the_report_names_who_sat(env):
    """A judge seat lost to quota passes on; the record and the report name the new agent."""
    repo, home, sd = env
    judges = {"j1": "evidence", "j2": "quota", "j3": "evidence"}
    run = start(repo, home, config(sd, {"a1": "right", "a2": "partial"}, judges=judges))
    assert run.status is RunStatus.READY, run.reason
    seat = run.seats["judge-2"]
    assert seat.failover_from == ["j2"]
    assert seat.agent == "j3"
    shown = {j["seat"]: j["agent"] for j in report_json(run)["judges"]}
    assert shown["judge-2"] == "j3"


def test_a_rename_cannot_hide_a_protected_path(env):
    """`git mv .github/workflows/ci.yml x.bak` is flagged: the old path counts too."""
    repo, home, sd = env
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ci"],
        cwd=repo,
        check=True,
    )
    mover = "sh:git mv .github/workflows/ci.yml x.bak && echo moved"
    run = start(repo, home, config(sd, {"a1": mover, "a2": "partial"}))
    moved = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert ".github/workflows/ci.yml" in moved.protected_changed
    assert "x.bak" not in moved.protected_changed


class Counter:
    """A node that counts its runs; ``stop_at`` raises Stop(blocked) on that run."""

    NAME = "count"
    STATUS = RunStatus.REVIEWING

    def __init__(self, stop_at: int | None = None) -> None:
        self.runs = 0
        self.stop_at = stop_at

    def run(self, ctx: Context) -> None:
        self.runs += 1
        if self.runs == self.stop_at:
            raise Stop(RunStatus.BLOCKED, f"stopped on run {self.runs}")


def test_a_loop_runs_until_its_condition_and_at_most_its_rounds(env):
    """Loop stops when `until` holds, never runs more than max_rounds; the runner ends ready."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    body = Counter()
    loop = Loop("review", (body,), until=lambda ctx: body.runs >= 2, max_rounds=lambda ctx: 5)
    run = execute(context(repo, home, cfg, agents), [loop])
    assert body.runs == 2
    assert run.status is RunStatus.READY
    capped = Counter()
    loop = Loop("review", (capped,), until=lambda ctx: False, max_rounds=lambda ctx: 3)
    execute(context(repo, home / "2", cfg, agents), [loop])
    assert capped.runs == 3


def test_a_stop_inside_a_loop_ends_the_run_with_its_status(env):
    """The runner, not a node, sets the final status: a Stop wins over the sequence ending."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    body = Counter(stop_at=2)
    loop = Loop("review", (body,), until=lambda ctx: False, max_rounds=lambda ctx: 5)
    run = execute(context(repo, home, cfg, agents), [loop])
    assert run.status is RunStatus.BLOCKED
    assert run.reason == "stopped on run 2"
    assert "count" in run.timings


def test_the_diagram_draws_a_loop_with_its_back_edge():
    """README's diagram comes from the pipeline, loops included."""
    body = Counter()
    pipeline = [prep, Loop("review", (body, judge), until=lambda c: True, max_rounds=lambda c: 1)]
    assert names(pipeline) == ["prep", "count", "judge"]
    drawn = mermaid(pipeline)
    assert "prep --> count" in drawn
    assert "judge -. next round .-> count" in drawn


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[roles]\nplanner = 'a'\n[[agents]]\nid = 'a'\nkind = 'claude'\n", "roles.planner"),
    ],
)
def test_a_key_nothing_reads_yet_is_an_error_naming_file_and_key(tmp_path, text, key):
    """Set to a non-default value, a key whose feature has not landed is refused."""
    from magi.config.load import load_config
    from magi.errors import ConfigError
    from magi.model.config import NOT_IMPLEMENTED

    assert key in NOT_IMPLEMENTED
    path = tmp_path / "magi.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="not implemented yet") as err:
        load_config(None, config_path=path)
    assert str(path) in str(err.value)
    assert key in str(err.value)


def test_every_not_implemented_key_is_a_real_key():
    """The list of pending keys names keys the schema has (no stale entries)."""
    from magi.model import config as model

    for key in model.NOT_IMPLEMENTED:
        node: type = model.Config
        for part in key.split("."):
            info = node.model_fields[part]  # type: ignore[attr-defined]
            ann = info.annotation
            inner = [a for a in (ann, *getattr(ann, "__args__", ())) if isinstance(a, type)]
            node = next((a for a in inner if hasattr(a, "model_fields")), ann)


def test_cancelling_one_run_does_not_poison_the_next_in_the_same_process(env):
    """Cancellation is the run's token: the run ends interrupted, the next one runs whole."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    token = CancelToken()

    def cancel_mid_turn(request: TurnRequest) -> TurnResult:
        token.cancel()  # what a signal handler or `/magi stop` does while a seat works
        return TurnResult(TurnStatus.ERROR, error="killed")

    agents["a1"] = FakeAgent("a1", cancel_mid_turn)
    first = engine.start(
        task="t",
        source="test",
        config=cfg,
        git=Git.discover(repo),
        store=Store(home),
        environ=dict(os.environ),
        agents=agents,
        cancel=token,
        seed=3,
    )
    assert first.run.status is RunStatus.INTERRUPTED
    assert first.signal_exit is not None
    assert not [t for t in first.run.turns if t.agent == "a1"], (
        "a seat cut off by cancellation records nothing, so a resume asks it again"
    )
    agents["a1"] = FakeAgent("a1", fixer)
    second = engine.start(
        task="t",
        source="test",
        config=cfg,
        git=Git.discover(repo),
        store=Store(home),
        environ=dict(os.environ),
        agents=agents,
        seed=4,
    )
    assert second.run.status is RunStatus.READY, second.run.reason
    resumed = engine.resume(Store(home), first.run.id, environ=dict(os.environ), agents=agents)
    assert resumed.run.status is RunStatus.READY, resumed.run.reason


def test_an_agent_that_failed_its_login_is_never_asked_again_in_the_run(env):
    """Failover skips an agent whose turn ended in an auth failure, and so do later seats."""
    repo, home, sd = env
    # a1 sits as an implementer and as judge-1: the judge seat must pass on unasked.
    cfg = config(sd, {"a1": "right", "a2": "right"}, judges={"a1": "evidence", "j2": "e"})

    def logged_out(request: TurnRequest) -> TurnResult:
        return TurnResult(TurnStatus.ERROR, error="claude: not logged in", failure="auth")

    def both(request: TurnRequest) -> TurnResult:
        return fixer(request) if request.node == "implement" else judging(request)

    agents = {
        "a1": FakeAgent("a1", logged_out),
        "a2": FakeAgent("a2", both),
        "j2": FakeAgent("j2", judging),
    }
    run = start(repo, home, cfg, agents=agents)
    assert len(agents["a1"].requests) == 1, "a logged-out agent is asked once, then skipped"
    assert run.seats["judge-1"].failover_from == ["a1"]
    assert run.agent_of("judge-1") != "a1"
    said = " ".join(e.message for e in run.events)
    assert "lost to auth" in said
    assert "judge-1 held by a1, which auth: claude: not logged in" in said


def test_retry_failed_reasks_only_the_seats_that_failed_once_the_login_works(env):
    """--retry-failed: a run failed on a login goes on; seats that answered are not paid again."""
    repo, home, sd = env
    cfg = config(sd, {"a1": "right", "a2": "right"}, judges={"j1": "e"}, graph={"failover": False})
    logged_in = {"j1": False}

    def maybe(request: TurnRequest) -> TurnResult:
        if not logged_in["j1"]:
            return TurnResult(TurnStatus.ERROR, error="not logged in", failure="auth")
        return judging(request)

    agents = {
        "a1": FakeAgent("a1", fixer),
        "a2": FakeAgent("a2", fixer),
        "j1": FakeAgent("j1", maybe),
    }
    first = start(repo, home, cfg, agents=agents)
    assert first.status is RunStatus.FAILED, first.reason  # the only judge could not log in
    with pytest.raises(MagiError, match="nothing to resume"):
        engine.resume(Store(home), first.id, environ=dict(os.environ), agents=agents)
    logged_in["j1"] = True
    again = engine.resume(
        Store(home), first.id, environ=dict(os.environ), agents=agents, retry_failed=True
    )
    assert again.run.status is RunStatus.READY, again.run.reason
    assert len(agents["a1"].requests) == len(agents["a2"].requests) == 1, (
        "the implementers answered: they are not asked again"
    )
    judged = [r.node for r in agents["j1"].requests if r.node != "review"]
    assert judged == ["judge", "judge", "vote"], "one failed judgement, then judge and vote"
    assert again.run.tally is not None
    assert again.run.tally.quorum


def test_judge_worktrees_go_however_the_run_ends(env):
    """A run that fails at the tally (no quorum) leaves no judge worktree behind."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)

    def broken(request: TurnRequest) -> TurnResult:
        return TurnResult(TurnStatus.ERROR, error="boom")

    agents["j1"] = FakeAgent("j1", broken)
    run = start(repo, home, cfg, agents=agents)
    assert run.status is RunStatus.FAILED, run.reason
    root = Path(run.worktree_root or "")
    assert not (root / "judge-1").exists()
    assert all(Path(c.worktree or "").is_dir() for c in run.candidates), "candidates stay"


def test_a_linked_worktrees_seat_cannot_touch_the_users_index(env):
    """The user's index is read-only in the jail of a seat working in a worktree magi made
    (so a jailed turn cannot change what the user's ``git status`` shows, and the guard need
    not look); a seat working in the user's own checkout keeps the index it commits through."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    common = ctx.git.common_dir().resolve()
    tree = judge.ensure_judge_worktree(ctx, "judge-1")
    assert common / "index" in judge_paths(ctx, tree)
    assert common / "index" not in judge_paths(ctx, repo)


def test_a_read_only_seat_has_the_whole_git_directory_read_only_in_one_bind(env):
    """A judge's or reviewer's jail binds its tree and the shared git directory read-only
    whole: the user's index, every ref, hooks and config stay out of its reach with no bind
    of their own (a mount each: one a branch on a repository with hundreds)."""
    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    common = ctx.git.common_dir().resolve()
    for n in range(5):
        git_out(repo, "branch", f"feature-{n}")
    tree = judge.ensure_judge_worktree(ctx, "judge-1")
    paths = ctx.jail_paths(tree, writable=False)
    spec = policy(
        cwd=str(tree.resolve()),
        writable=False,
        hide=[str(p) for p in paths.hide],
        git_dirs=[str(p) for p in paths.git_dirs],
        read=[str(p) for p in paths.read],
    )
    for inside in ("index", "refs/heads/main", "refs/heads/feature-3", "hooks", "config", "HEAD"):
        assert visible(spec, str(common / inside)) == "read", inside
    assert visible(spec, str(tree / "textstats.py")) == "read"
    assert not writes_under(spec, str(common))
    assert not [p for p in spec.read if Path(p).is_relative_to(common) and Path(p) != common]
    assert len(ctx.jail_paths(tree).read) > len(spec.read), "a writable seat's has them all"


def judge_paths(ctx: Context, tree: Path) -> list[Path]:
    return [Path(p) for p in ctx.jail_paths(tree).read]


def test_a_run_leaves_the_users_unreachable_worktree_registered(env, tmp_path):
    """A worktree of the user's whose directory cannot be seen now (a disk not mounted) is
    the user's: a whole run, with its trees made, leased and dropped, leaves it registered."""
    repo, home, sd = env
    away = tmp_path / "usb" / "feature"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(away)], cwd=repo, check=True)
    shutil.rmtree(away)
    run = start(repo, home, config(sd, {"a1": "right", "a2": "partial"}))
    assert run.status is RunStatus.READY, run.reason
    listed = git_out(repo, "worktree", "list", "--porcelain")
    assert f"worktree {away.resolve()}" in listed


@pytest.mark.parametrize("reach", ["unjailed", "jailed, the git directory writable", "shut out"])
def test_refs_are_read_after_a_turn_only_when_it_could_change_one(env, monkeypatch, reach):
    """A jail that binds nothing of the repository's git directory writable (a candidate's
    clone, a judge's read-only tree) leaves the turn no way to move a ref: no
    ``for-each-ref`` follows it. Any other turn's refs are read and what it did is undone."""
    from magi.graph.guard import CompetitionGuard

    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    prep.run(ctx)
    common = str(ctx.git.common_dir().resolve())
    clone = str(Path(ctx.run.candidates[0].worktree or "").resolve())
    jail = {
        "unjailed": None,
        "jailed, the git directory writable": policy(
            cwd=str(repo.resolve()), writable=True, hide=[], git_dirs=[common]
        ),
        "shut out": policy(cwd=clone, writable=True, hide=[str(repo.resolve())], read=[common]),
    }[reach]
    guard = CompetitionGuard()
    seat = ctx.run.candidates[0].seat
    guard.before(ctx, seat, "implement", jail=jail)
    git_out(repo, "tag", "planted")  # what the turn did, where it could
    ran: list[str] = []
    real = Git._exec
    monkeypatch.setattr(
        Git, "_exec", lambda self, args, **kw: (ran.append(args[0]), real(self, args, **kw))[1]
    )
    found = guard.after(ctx, seat, "implement")
    tags = git_out(repo, "tag", "--list").split()
    if reach == "shut out":
        assert "for-each-ref" not in ran
        assert found == []
        assert tags == ["planted"]  # nothing read, nothing undone: the jail is what stops it
    else:
        assert "for-each-ref" in ran
        assert any("refs/tags/planted created" in f for f in found)
        assert tags == []


def test_each_node_compares_refs_with_how_they_were_when_it_began(env):
    """A turn that can reach the refs, then a node whose turns cannot, then the first kind
    again (a fixer in your own tree between review rounds): the second compares with the
    refs as its own node found them, so what moved in between (yours, or magi's) is neither
    undone nor charged to it."""
    from magi.graph.guard import CompetitionGuard

    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    prep.run(ctx)
    common = str(ctx.git.common_dir().resolve())
    clone = str(Path(ctx.run.candidates[0].worktree or "").resolve())
    reach = policy(cwd=str(repo.resolve()), writable=True, hide=[], git_dirs=[common])
    shut = policy(cwd=clone, writable=False, hide=[str(repo.resolve())], read=[common])
    guard = CompetitionGuard()
    seat = ctx.run.candidates[0].seat
    guard.before(ctx, seat, "fix", jail=reach)
    assert guard.after(ctx, seat, "fix") == []
    guard.before(ctx, "review-1", "review", jail=shut)
    assert guard.after(ctx, "review-1", "review") == []
    git_out(repo, "tag", "yours")  # between the rounds
    guard.before(ctx, seat, "fix", jail=reach)
    assert guard.after(ctx, seat, "fix") == []
    assert git_out(repo, "tag", "--list").split() == ["yours"]


@pytest.mark.parametrize("jailed", [True, False])
def test_a_checkout_baseline_a_kill_left_is_settled_before_the_next_seat(env, jailed):
    """A wave killed mid-way left the user's checkout as it began on disk: the next process
    compares with it before its first seat starts, jailed or not (a jailed resume would
    otherwise keep it for a later wave to blame on its own seats), says who worked then or
    that it may have been the user, and drops it. Nothing is charged to this process's seats."""
    from magi.git.checkout import MainStatus
    from magi.graph.guard import BASELINE, CompetitionGuard

    repo, home, sd = env
    cfg, agents = two_fake_implementers(sd)
    ctx = context(repo, home, cfg, agents)
    prep.run(ctx)
    left = MainStatus.take(ctx.git)
    data = {
        "head": left.head,
        "entries": sorted(left.entries),
        "node": "implement",
        "seats": ["impl-A"],
    }
    (ctx.run_dir / BASELINE).write_text(json.dumps(data))
    (repo / "while-stopped.txt").write_text("the user's, or impl-A's before the kill\n")
    guard = CompetitionGuard()
    jail = policy(cwd=str(ctx.worktree_root() / "B"), writable=True, hide=[]) if jailed else None
    guard.before(ctx, "impl-B", "implement", jail=jail)
    assert not (ctx.run_dir / BASELINE).exists() or not jailed
    (said,) = [e.message for e in ctx.run.events if "YOUR CHECKOUT" in e.message]
    assert "while-stopped.txt" in said
    assert "stopped mid-wave at implement (by impl-A" in said
    assert "by you while it was stopped" in said
    (why,) = ctx.run.seats["impl-A"].violations
    assert "it may have been you" in why
    assert not ctx.run.seats["impl-B"].violations
    assert guard.after(ctx, "impl-B", "implement") == []  # the file is the baseline no more
    assert not (ctx.run_dir / BASELINE).exists()
