"""The commands that spend nothing: init, doctor, config schema, list, show and bare magi."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from magi import report
from magi.cli import main
from magi.config.load import load_config
from magi.errors import AgentError, UsageError
from magi.model.run import Run, RunStatus
from magi.state.store import Store
from magi.testing.cli import invoke

FIXTURE = Path(__file__).parents[1] / "fixtures" / "report" / "run.json"
OLD, NEW = "20260830-153012-a1b2", "20260831-090000-a1c3"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
TWO_AGENTS = """\
[[agents]]
id = "mock"
kind = "command"
command = ["sh", "-c", "echo hi"]

[[agents]]
id = "opus"
kind = "claude"

[graph]
judges = 2
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str | None]:
    """An environment whose PATH holds only git and sh, with magi's dirs under tmp_path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    (tmp_path / "machine").mkdir()
    return {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "MAGI_HOME": str(tmp_path / "magi-home"),
        "MAGI_CONFIG_DIR": str(tmp_path / "machine"),
        "COLUMNS": "300",
        "ANTHROPIC_API_KEY": None,
        "OPENAI_API_KEY": None,
        **GIT_ENV,
    }


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with one commit on main, as the current directory."""
    root = tmp_path / "repo"
    root.mkdir()
    run_env = {**os.environ, **GIT_ENV, "HOME": str(tmp_path)}
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *argv], cwd=root, env=run_env, check=True)
    monkeypatch.chdir(root)
    return root


def _head(repo: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True)
    return out.stdout.strip()


def _store(env: dict[str, str | None], *runs: Run) -> Store:
    store = Store(Path(str(env["MAGI_HOME"])))
    for run in runs:
        store.create(run)
    return store


def _run(run_id: str, **update: object) -> Run:
    run = Run.model_validate_json(FIXTURE.read_text(encoding="utf-8"))
    return run.model_copy(update={"id": run_id, **update})


def test_doctor_names_missing_cli_seats_base_and_layers(repo: Path, env: dict) -> None:
    """doctor shows each value's layer, the seats and the base, and fails on a missing CLI."""
    (repo / ".magi").mkdir()
    (repo / ".magi" / "config.toml").write_text(TWO_AGENTS)
    result = invoke(["doctor"], env=env)
    out = result.stdout
    assert result.exit_code == AgentError.exit_code  # a roster CLI is missing
    assert "`claude` is not on PATH" in out
    assert "judges =" in out
    assert "← .magi/config.toml" in out
    assert "← default" in out
    assert "implementers" in out
    assert "mock" in out
    assert "opus" in out
    assert "slot 1 is not label A" in out
    assert f"main @ {_head(repo)[:12]}" in out
    assert "`sh` is not on PATH" not in out  # the command agent's argv[0] does resolve
    assert "error" in out


def test_doctor_json_lists_every_problem(repo: Path, env: dict) -> None:
    """doctor --json carries the problems, the seats and the resolved sources."""
    (repo / ".magi").mkdir()
    (repo / ".magi" / "config.toml").write_text(TWO_AGENTS)
    result = invoke(["doctor", "--json"], env=env)
    data = json.loads(result.stdout)
    assert result.exit_code == 6
    assert data["ok"] is False
    assert data["config"]["values"]["graph.judges"]["value"] == 2
    assert data["config"]["values"]["graph.judges"]["source"].endswith(".magi/config.toml")
    assert data["config"]["values"]["graph.candidates"]["source"] == "default"
    assert [e["id"] for e in data["roster"]] == ["mock", "opus"]
    assert data["roster"][1]["path"] is None
    assert "marker in /proc" in data["process_census"]  # how a turn's escapees are found
    assert data["seating"]["implementers"]
    assert data["repo"]["base"] == "main"
    assert any("claude" in p["message"] for p in data["problems"])


def test_doctor_reports_broken_toml_and_still_shows_repo(repo: Path, env: dict) -> None:
    """A broken config is a problem with file:line; the repository section still prints."""
    (repo / "magi.toml").write_text("[graph]\njudges = 2\n[graph\n")
    result = invoke(["doctor"], env=env)
    assert result.exit_code == 3
    assert "magi.toml:3" in result.stdout
    assert "repository" in result.stdout
    assert f"main @ {_head(repo)[:12]}" in result.stdout


def test_doctor_outside_a_repo_reports_it(tmp_path: Path, env: dict, monkeypatch) -> None:
    """Not a git repository is an error with the repo's exit code, and doctor still finishes."""
    monkeypatch.chdir(tmp_path)
    result = invoke(["doctor"], env=env)
    assert result.exit_code == 6  # no agents at all outranks "not a repo" (5)
    assert "not a git repository" in result.stdout
    assert "no agents" in result.stdout


def test_doctor_warning_alone_exits_zero(repo: Path, env: dict) -> None:
    """An API key set but not passed is a warning, and warnings alone exit 0."""
    config = repo / "only.toml"
    config.write_text('[[agents]]\nid = "c"\nkind = "claude"\n')
    fake = Path(str(env["PATH"])) / "claude"
    fake.write_text("#!/bin/sh\necho 1.2.3\n")
    fake.chmod(0o755)
    result = invoke(["doctor", "--config", str(config)], env={**env, "ANTHROPIC_API_KEY": "k"})
    assert result.exit_code == 0, result.stdout
    assert "warning" in result.stdout
    assert "ANTHROPIC_API_KEY" in result.stdout
    assert "1.2.3" in result.stdout


def test_doctor_reports_unwritable_worktree_root_and_missing_base(
    tmp_path: Path, env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worktree_root under a file and a base with no commit are both reported, at once."""
    empty = tmp_path / "empty"
    subprocess.run(["git", "init", "-q", "-b", "main", str(empty)], check=True)
    monkeypatch.chdir(empty)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    config = tmp_path / "one.toml"
    config.write_text(
        '[[agents]]\nid = "mock"\nkind = "command"\ncommand = ["sh"]\n'
        f'[graph]\nworktree_root = "{blocker}/wt"\n'
    )
    result = invoke(["--config", str(config), "doctor"], env=env)  # the global --config form
    assert result.exit_code == 5  # RepoError outranks the generic worktree_root error
    assert f"{blocker} is not a writable directory" in result.stdout
    assert "has no commits yet" in result.stdout  # an empty repository, said as such
    assert "main (not found)" in result.stdout


def test_config_schema_is_json_with_agents() -> None:
    """config schema prints a JSON Schema that describes [[agents]]."""
    result = invoke(["config", "schema"])
    assert result.exit_code == 0
    assert "agents" in json.loads(result.stdout)["properties"]


def test_init_writes_a_loadable_config_and_refuses_to_overwrite(repo: Path, env: dict) -> None:
    """init writes .magi/config.toml that load_config accepts, and will not clobber it."""
    first = invoke(["init"], env=env)
    target = repo / ".magi" / "config.toml"
    assert first.exit_code == 0, first.output
    assert str(target) in first.stdout
    assert "magi doctor" in first.stdout
    assert "git add .magi/config.toml" in first.stdout, "an uncommitted config dirties every run"
    load_config(repo, environ={}, user_config_dir=Path(str(env["MAGI_CONFIG_DIR"])))
    target.write_text("# mine\n")
    second = invoke(["init"], env=env)
    assert second.exit_code == 2
    assert "--force" in second.stderr
    assert target.read_text() == "# mine\n"
    assert invoke(["init", "--force"], env=env).exit_code == 0
    assert target.read_text() != "# mine\n"


def test_list_newest_first(env: dict) -> None:
    """list shows every run, newest first, with status, winner and the task's first line."""
    _store(env, _run(OLD), _run(NEW, status=RunStatus.BLOCKED))
    result = invoke(["list"], env=env)
    assert result.exit_code == 0
    assert result.stdout.index(NEW) < result.stdout.index(OLD)
    assert "blocked" in result.stdout
    assert "add retries" in result.stdout
    data = json.loads(invoke(["list", "--json"], env=env).stdout)
    assert [r["id"] for r in data] == [NEW, OLD]
    assert data[1]["winner"] == "A"


def test_show_latest_by_default_and_by_prefix(env: dict) -> None:
    """show prints the latest run, or the one a unique suffix prefix names."""
    _store(env, _run(OLD), _run(NEW, status=RunStatus.BLOCKED))
    assert f"magi run {NEW}" in invoke(["show"], env=env).stdout
    by_prefix = invoke(["show", "a1b"], env=env)
    assert by_prefix.exit_code == 0
    assert f"magi run {OLD}" in by_prefix.stdout
    blocked = invoke(["show", "a1c3"], env=env)
    assert blocked.exit_code == 0  # a report, not a run: its status is not the exit code


def test_show_unknown_or_ambiguous_is_state_error(env: dict) -> None:
    """An unknown run exits 4; an ambiguous prefix names the runs it matches."""
    _store(env, _run(OLD), _run(NEW))
    unknown = invoke(["show", "ffff"], env=env)
    assert unknown.exit_code == 4
    assert unknown.stderr.startswith("error: ")
    ambiguous = invoke(["show", "a1"], env=env)
    assert ambiguous.exit_code == 4
    assert OLD in ambiguous.stderr
    assert NEW in ambiguous.stderr


def test_show_json_is_the_report_json_of_the_stored_run(env: dict) -> None:
    """show --json prints report_json of the run as stored (its keys are pinned in test_report)."""
    _store(env, _run(OLD))
    data = json.loads(invoke(["show", "--json"], env=env).stdout)
    stored = Store(Path(str(env["MAGI_HOME"]))).load(OLD)
    assert data == json.loads(json.dumps(report.report_json(stored), default=str))
    assert data["id"] == OLD
    assert data["winner"] == "A"


def test_show_hides_author_before_tally(env: dict) -> None:
    """Mid-run, show hides every author; after the tally it names them."""
    _store(env, _run(OLD), _run(NEW, status=RunStatus.JUDGING, tally=None))
    hidden = invoke(["show", NEW], env=env).stdout
    assert "hidden until the tally" in hidden
    assert "opus-agent" not in hidden
    assert "opus-agent" not in invoke(["show", NEW, "--json"], env=env).stdout
    shown = invoke(["show", OLD], env=env).stdout
    assert "opus-agent" in shown
    assert "hidden until the tally" not in shown


def test_bare_magi_prints_latest_report_plain(env: dict) -> None:
    """Bare magi, piped, prints the latest report without escape codes."""
    _store(env, _run(OLD), _run(NEW))
    result = invoke([], env=env)
    assert result.exit_code == 0
    assert f"magi run {NEW}" in result.stdout
    assert "\x1b" not in result.stdout


def test_bare_magi_without_runs_prints_help(env: dict) -> None:
    """With no run on disk, bare magi prints the help."""
    result = invoke([], env=env)
    assert result.exit_code == 0
    assert "Usage" in result.stdout
    assert "doctor" in result.stdout


def test_piped_process_prints_no_escape_codes(env: dict) -> None:
    """As a real process with stdout on a pipe, magi prints plain text (no alternate screen)."""
    _store(env, _run(OLD))
    proc_env = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    proc_env.pop("FORCE_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "magi"], env=proc_env, capture_output=True, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert f"magi run {OLD}".encode() in proc.stdout
    assert b"\x1b" not in proc.stdout


def test_main_maps_errors_and_interrupts(env: dict, monkeypatch, capsys) -> None:
    """main() turns a MagiError into message + exit code and Ctrl-C into 130, no traceback."""
    monkeypatch.setenv("MAGI_HOME", str(env["MAGI_HOME"]))
    _store(env, _run(OLD))
    with pytest.raises(SystemExit) as exited:
        main(["show", "ffff"])
    assert exited.value.code == 4
    assert "Traceback" not in capsys.readouterr().err

    def interrupted(self: Store, run_id: str) -> Run:
        raise KeyboardInterrupt

    monkeypatch.setattr(Store, "load", interrupted)
    with pytest.raises(SystemExit) as exited:
        main(["show"])
    assert exited.value.code == 130


def test_show_markdown_prints_the_comments_blind_mid_run(env: dict) -> None:
    """show --markdown prints the PR comments of the stored run, with no author before the tally."""
    _store(env, _run(OLD), _run(NEW, status=RunStatus.JUDGING, tally=None))
    shown = invoke(["show", OLD, "--markdown"], env=env)
    assert shown.exit_code == 0
    stored = Store(Path(str(env["MAGI_HOME"]))).load(OLD)
    assert shown.stdout == report.render_markdown(stored)
    assert "<!-- magi:tally" in shown.stdout
    hidden = invoke(["show", NEW, "--markdown"], env=env).stdout
    assert "<!-- magi:transcripts" in hidden
    assert "opus-agent" not in hidden
    both = invoke(["show", "--json", "--markdown"], env=env)
    assert both.exit_code == UsageError.exit_code


def test_list_shows_an_interrupted_run(env: dict) -> None:
    """A run stopped by a signal is listed as interrupted, not as the node it was in."""
    _store(env, _run(OLD), _run(NEW, status=RunStatus.INTERRUPTED, tally=None))
    out = invoke(["list"], env=env).stdout
    assert NEW in out
    assert "interrupted" in out
    data = json.loads(invoke(["list", "--json"], env=env).stdout)
    assert data[0]["status"] == "interrupted"
