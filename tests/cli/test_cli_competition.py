"""magi run / tally / fold / demo as a person types them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from graph_helpers import SCRIPTED, git_out, scratch_repo
from magi.engine import create, now
from magi.engine.diagnose import diagnose
from magi.git.repo import Git
from magi.model.config import Config
from magi.model.run import RunStatus
from magi.state.store import Store
from magi.testing.cli import invoke

CONFIG = """
[[agents]]
id = "a1"
kind = "command"
command = {right}

[[agents]]
id = "a2"
kind = "command"
command = {wrong}

[roles]
implementers = ["a1", "a2"]
judges = ["a2", "a1", "a2"]

[graph]
candidates = 2

[verify]
e2e = ["python3 -m unittest -q"]
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = scratch_repo(tmp_path)
    (repo / "magi.toml").write_text(
        CONFIG.format(
            right=json.dumps([*SCRIPTED, "right"]), wrong=json.dumps([*SCRIPTED, "wrong"])
        )
    )
    monkeypatch.chdir(repo)
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MAGI_CONFIG_DIR", str(tmp_path / "no-user-config"))
    return repo


def home(tmp_path: Path) -> Store:
    return Store(tmp_path / "home")


def test_a_task_starting_with_a_command_name_is_refused_as_a_typo(repo, tmp_path):
    """`magi run show 3cbf` would pay agents to implement "show 3cbf": refused, nothing spent."""
    res = invoke(["run", "show", "3cbf"])
    assert res.exit_code == 2
    assert "magi run -- show 3cbf" in res.stderr
    assert home(tmp_path).list_ids() == []


def test_after_double_dash_the_same_words_are_the_task(repo, tmp_path):
    """`magi run -- show 3cbf` runs a competition on that sentence."""
    res = invoke(["run", "--", "show", "3cbf"])
    assert res.exit_code == 0, res.output
    run = home(tmp_path).load(home(tmp_path).latest() or "")
    assert run.task.original == "show 3cbf"


def test_run_prints_the_report_and_exits_zero_when_ready(repo, tmp_path):
    """A finished competition prints its report, with the merge command for the winner."""
    # Wide: the merge command must not wrap where the tmp path (longer under xdist) would.
    res = invoke(["run", "--seed", "4", "repair", "textstats"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    run = home(tmp_path).load(home(tmp_path).latest() or "")
    assert run.seed == 4
    won = run.candidate(run.tally.winner)
    assert f"git merge --squash {won.head}" in res.stdout  # the recorded head, not the branch
    assert f"# {won.branch}" in res.stdout
    assert "as judged" not in res.stdout  # one merge command, the merge node's, not two
    assert "\x1b[" not in res.stdout, "piped output carries no escape codes"


def test_task_from_a_file(repo, tmp_path):
    """--file reads the task; the record says where it came from."""
    task = tmp_path / "task.md"
    task.write_text("make the failing tests pass\n")
    res = invoke(["run", "--file", str(task)])
    assert res.exit_code == 0, res.output
    run = home(tmp_path).load(home(tmp_path).latest() or "")
    assert run.task.source == f"file:{task}"


def test_a_failed_run_exits_non_zero_after_printing_the_report(repo, tmp_path):
    """No candidate produced anything: the report is printed, then exit 1."""
    (repo / "magi.toml").write_text(
        CONFIG.format(
            right=json.dumps([*SCRIPTED, "empty"]), wrong=json.dumps([*SCRIPTED, "empty"])
        )
    )
    res = invoke(["run", "do", "nothing"])
    assert res.exit_code == 1
    assert "failed" in res.stdout
    assert "no candidate produced a change" in res.stdout


def test_a_broken_config_is_a_clear_error_before_anything_starts(repo, tmp_path):
    """Malformed TOML names the file and line; exit 3; no run recorded."""
    (repo / "magi.toml").write_text("[graph\ncandidates = 2\n")
    res = invoke(["run", "anything"])
    assert res.exit_code == 3
    assert "magi.toml:1" in res.stderr
    assert home(tmp_path).list_ids() == []


def test_tally_verify_recomputes_and_catches_a_doctored_record(repo, tmp_path):
    """The stored tally matches a recount; an edited run.json does not."""
    assert invoke(["run", "repair", "it"]).exit_code == 0
    store = home(tmp_path)
    run_id = store.latest() or ""
    ok = invoke(["tally", "--verify", run_id[-4:]])
    assert ok.exit_code == 0
    assert "verified" in ok.stdout
    path = store.run_dir(run_id) / "run.json"
    record = json.loads(path.read_text())
    loser = next(label for label in record["tally"]["counts"] if label != record["tally"]["winner"])
    record["tally"]["winner"] = loser
    path.write_text(json.dumps(record))
    bad = invoke(["tally", "--verify", run_id])
    assert bad.exit_code == 1
    assert "does NOT match" in bad.stderr


def test_fold_removes_worktrees_and_losing_branches_but_keeps_the_winner(repo, tmp_path):
    """magi fold: the winner's branch is the product and stays."""
    assert invoke(["run", "repair", "it"]).exit_code == 0
    run = home(tmp_path).load(home(tmp_path).latest() or "")
    sessions = home(tmp_path).run_dir(run.id) / "cli-state" / "judge-1" / "x-.claude"
    sessions.mkdir(parents=True)  # what a jailed CLI seat keeps of its own
    res = invoke(["fold", run.id])
    assert res.exit_code == 0, res.output
    assert not sessions.parent.parent.exists(), "the seats' own CLI sessions go with it"
    branches = git_out(repo, "branch", "--format=%(refname:short)").split()
    winner = run.candidate(run.tally.winner).branch
    assert winner in branches
    assert not [b for b in branches if b.startswith(f"magi/{run.id}/") and b != winner]
    assert not Path(run.worktree_root or "").exists(), "the run's empty folder goes too"
    assert "removed" in res.stdout
    again = invoke(["fold", run.id])
    assert again.exit_code == 0, again.output
    assert "nothing left to remove" in again.stdout, "a second fold claims nothing it did not do"


def test_fold_keeps_a_losing_branch_you_checked_out_and_your_worktree(repo, tmp_path):
    """A worktree of yours on a losing branch (to read a candidate): fold removes neither it,
    nor what you wrote there, nor the branch, and says how to let it go."""
    assert invoke(["run", "repair", "it"]).exit_code == 0
    run = home(tmp_path).load(home(tmp_path).latest() or "")
    loser = next(c for c in run.candidates if c.label != run.tally.winner)
    mine = tmp_path / "look"
    git_out(repo, "worktree", "add", "-q", str(mine), loser.branch)
    (mine / "notes.txt").write_text("mine\n")
    res = invoke(["fold", run.id])
    assert res.exit_code == 0, res.output
    assert (mine / "notes.txt").read_text() == "mine\n"
    assert loser.branch in git_out(repo, "branch", "--format=%(refname:short)").split()
    assert f"checked out in your worktree {mine}" in res.stdout
    assert str(mine) in git_out(repo, "worktree", "list")


def test_resume_of_a_finished_run_is_refused(repo, tmp_path):
    """There is nothing to resume in a ready run."""
    assert invoke(["run", "repair", "it"]).exit_code == 0
    res = invoke(["run", "--resume", home(tmp_path).latest() or ""])
    assert res.exit_code == 2
    assert "nothing to resume" in res.stderr


def test_demo_runs_a_whole_competition_offline(tmp_path, monkeypatch):
    """`magi demo`: scratch repo, scripted roster, split, deliberation, the right one wins."""
    monkeypatch.setenv("MAGI_CONFIG_DIR", str(tmp_path / "none"))
    res = invoke(["demo", "--dir", str(tmp_path / "demo")])
    assert res.exit_code == 0, res.output
    store = Store(tmp_path / "demo" / "magi-home")
    run = store.load(store.latest() or "")
    assert run.author(run.tally.winner) == "right"
    assert run.deliberation
    assert "deliberation" in res.stdout


def test_a_missing_agent_cli_stops_the_run_before_anything_is_spent(repo, tmp_path):
    """A roster naming a CLI that is not on PATH: exit 6 with the doctor's reason, no run."""
    (repo / "magi.toml").write_text(
        '[[agents]]\nid = "opus"\nkind = "claude"\n\n[graph]\ncandidates = 1\njudges = 0\n'
    )
    res = invoke(["run", "repair", "it"], env={"PATH": "/usr/bin:/bin"})
    assert res.exit_code == 6
    assert "`claude` is not on PATH" in res.stderr
    assert home(tmp_path).list_ids() == []


def test_a_held_run_resumes_under_the_budget_in_force_now(repo, tmp_path):
    """Raising [budget] in the config is how a person lets a held run go on."""
    cfg_text = (repo / "magi.toml").read_text()
    (repo / "magi.toml").write_text(cfg_text + "\n[budget]\nrun_usd = 1.0\n")
    store = home(tmp_path)
    cfg = diagnose(repo, None).config
    assert isinstance(cfg, Config)
    run = create(
        task="t",
        source="test",
        config=cfg,
        git=Git.discover(repo),
        store=store,
        now=now(),
        rng=random.Random(1),
    )
    run.status = RunStatus.HELD
    store.save(run)
    (repo / "magi.toml").write_text(cfg_text + "\n[budget]\nrun_usd = 50.0\n")
    res = invoke(["run", "--resume", run.id])
    assert res.exit_code == 0, res.output
    again = store.load(run.id)
    assert again.config.budget.run_usd == 50.0
    assert "[budget] taken from the current config" in res.stdout


def test_with_no_config_at_all_the_roster_is_the_clis_on_path(tmp_path, monkeypatch):
    """No [[agents]] anywhere: doctor seats the agent CLIs it finds, and says so."""
    from magi.testing.standins import write_standin

    repo = scratch_repo(tmp_path)
    monkeypatch.chdir(repo)
    bin_dir = tmp_path / "bin"
    write_standin(bin_dir, "claude")
    write_standin(bin_dir, "codex")
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "MAGI_HOME": str(tmp_path / "home"),
        "MAGI_CONFIG_DIR": str(tmp_path / "no-user-config"),
    }
    res = invoke(["doctor", "--json"], env=env)
    data = json.loads(res.stdout)
    assert data["roster_from_path"] is True
    assert sorted(a["id"] for a in data["roster"]) == ["claude", "codex"]
    assert data["seating"]["implementers"]
    assert res.exit_code == 0, data["problems"]
