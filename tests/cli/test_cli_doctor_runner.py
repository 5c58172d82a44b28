"""`magi doctor --runner`: what a self-hosted runner needs, said before a job needs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from magi.testing.cli import invoke

AGENT = """\
[[agents]]
id = "sh1"
kind = "command"
command = ["sh", "-c", "echo ok"]

[github]
runner_labels = ["self-hosted", "magi", "gpu"]
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    ident = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "HOME": str(tmp_path)}
    ident |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *argv], cwd=root, env={**os.environ, **ident}, check=True)
    (root / "magi.toml").write_text(AGENT)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MAGI_CONFIG_DIR", str(tmp_path / "machine"))
    return root


def _said(out: str) -> str:
    return " ".join(out.split())


def test_a_runner_no_agents_job_would_ever_run_on_is_an_error(repo, tmp_path, monkeypatch):
    """It lacks the first stage's labels and has no agent's: said, and doctor fails."""
    monkeypatch.setenv("MAGI_HOME", str(Path.home() / ".magi-test-home-not-created"))
    res = invoke(["doctor", "--runner", "--labels", "self-hosted,magi", "--no-auth-check"])
    assert res.exit_code != 0
    said = _said(res.stdout)
    assert "this runner lacks ['gpu'], and it has the labels of no agent" in said
    assert "no agents job would ever run here" in said
    ok = invoke(["doctor", "--runner", "--labels", "self-hosted, magi,gpu", "--no-auth-check"])
    assert "this runner lacks" not in _said(ok.stdout)


def test_the_labels_a_runner_declares_are_its_labels_and_checked(repo, monkeypatch):
    """MAGI_RUNNER_LABELS (the runner's .env) stands for --labels; one that leaves out a
    label the runner has is warned: a competition's job there would hand seats off."""
    monkeypatch.setenv("MAGI_HOME", str(Path.home() / ".magi-test-home-not-created"))
    monkeypatch.setenv("MAGI_RUNNER_LABELS", "self-hosted,magi,gpu")
    out = json.loads(invoke(["doctor", "--runner", "--no-auth-check", "--json"]).stdout)
    assert out["runner"]["labels"] == ["gpu", "magi", "self-hosted"]
    assert out["runner"]["serves"] == ["sh1"]
    monkeypatch.setenv("MAGI_RUNNER_LABELS", "self-hosted,magi")
    res = invoke(["doctor", "--runner", "--labels", "self-hosted,magi,gpu", "--no-auth-check"])
    assert "MAGI_RUNNER_LABELS names ['magi', 'self-hosted'], not all" in _said(res.stdout)
    monkeypatch.setenv("MAGI_RUNNER_LABELS", "gpu box")
    res = invoke(["doctor", "--runner", "--no-auth-check"])
    assert res.exit_code != 0
    assert "MAGI_RUNNER_LABELS: not runner labels: 'gpu box'" in _said(res.stdout)


def test_an_ephemeral_home_and_unknown_labels_are_warned(repo, tmp_path, monkeypatch):
    """MAGI_HOME under /tmp does not outlive the job; labels not given cannot be checked."""
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    res = invoke(["doctor", "--runner", "--no-auth-check", "--json"])
    out = json.loads(res.stdout)
    messages = " ".join(p["message"] for p in out["problems"])
    assert "does not outlive the job or the machine" in messages
    assert "pass --labels" in messages
    runner = out["runner"]
    assert runner["wanted"] == ["self-hosted", "magi", "gpu"]
    assert runner["git"]
    assert runner["python"]
    assert runner["free_bytes"] > 0


def test_plain_doctor_checks_no_runner(repo):
    """Without --runner nothing of it is said."""
    res = invoke(["doctor", "--no-auth-check", "--json"])
    assert "runner" not in json.loads(res.stdout)


def test_an_agents_own_labels_are_wanted_and_the_seats_here_said(repo, monkeypatch):
    """An agent logged in on the GPU box only (``runner_labels``): a runner of the pool
    starts the competition and hands that agent's seats on, so it is no error there; doctor
    says which agents a runner can seat, where the others go, and what a council needs."""
    monkeypatch.setenv("MAGI_HOME", str(Path.home() / ".magi-test-home-not-created"))
    (repo / "magi.toml").write_text(
        '[[agents]]\nid = "here"\nkind = "command"\ncommand = ["true"]\n\n'
        '[[agents]]\nid = "boxed"\nkind = "command"\ncommand = ["true"]\n'
        'runner_labels = ["self-hosted", "gpu"]\n'
    )
    res = invoke(["doctor", "--runner", "--labels", "self-hosted,magi", "--no-auth-check"])
    said = _said(res.stdout)
    assert "no agents job would ever run here" not in said
    assert "boxed's seats are handed to a runner labelled self-hosted, gpu" in said
    assert "councils, reviews and landings run where every agent can" in said
    assert "seats here here" in said
    assert "not boxed lacks gpu" in said
    gpu_box = invoke(["doctor", "--runner", "--labels", "self-hosted,gpu", "--no-auth-check"])
    assert "no agents job would ever run here" not in _said(gpu_box.stdout), "it seats boxed"
    out = json.loads(
        invoke(
            ["doctor", "--runner", "--labels", "self-hosted,magi,gpu", "--no-auth-check", "--json"]
        ).stdout
    )
    assert out["runner"]["wanted"] == ["self-hosted", "magi", "gpu"]
    assert out["runner"]["serves"] == ["here", "boxed"]
    assert out["runner"]["lacking"] == {}


def test_a_bad_runner_label_of_an_agent_names_the_agent_and_file(repo):
    """A label GitHub could never match is refused where it is written."""
    (repo / "magi.toml").write_text(
        '[[agents]]\nid = "x"\nkind = "command"\ncommand = ["true"]\nrunner_labels = ["gpu box"]\n'
    )
    res = invoke(["doctor", "--no-auth-check", "--json"])
    assert res.exit_code != 0
    said = " ".join(p["message"] for p in json.loads(res.stdout)["problems"])
    assert "magi.toml" in said
    assert "runner_labels" in said
    assert "gpu box" in said


def test_the_runner_key_made_shown_and_checked(repo, tmp_path, monkeypatch):
    """`magi runner-key --new` makes the pool's key once; doctor shows which key this runner
    holds, warns when it holds none and fails when the file is not the owner's alone."""
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    none = invoke(["doctor", "--runner", "--no-auth-check", "--json"])
    said = " ".join(p["message"] for p in json.loads(none.stdout)["problems"])
    assert "no runner key" in said
    assert "magi runner-key --new" in said
    assert "no runner key at" in invoke(["runner-key"]).stdout
    made = invoke(["runner-key", "--new"])
    assert made.exit_code == 0, made.output
    fingerprint = re.findall(r"\bkey ([0-9a-f]{16})\b", _said(made.stdout))[0]
    assert "Copy it to MAGI_HOME of every other runner" in _said(made.stdout)
    assert fingerprint in invoke(["runner-key"]).stdout
    again = invoke(["runner-key", "--new"])
    assert again.exit_code != 0
    assert "exists" in again.stderr
    out = json.loads(invoke(["doctor", "--runner", "--no-auth-check", "--json"]).stdout)
    assert out["runner"]["runner_key"] == fingerprint
    (tmp_path / "home" / "runner.key").chmod(0o640)
    bad = invoke(["doctor", "--runner", "--no-auth-check"])
    assert bad.exit_code != 0
    assert "readable by others (mode 640); fix: chmod 600" in _said(bad.stdout)


def test_a_runner_key_beside_unjailed_agents_is_warned(repo, tmp_path, monkeypatch):
    """Unjailed, an agent reads $MAGI_HOME, and with the key every sealed run of the pool."""
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    (repo / "magi.toml").write_text(AGENT + '\n[sandbox]\nmode = "off"\n')
    quiet = json.loads(invoke(["doctor", "--runner", "--no-auth-check", "--json"]).stdout)
    assert "can read the runner key" not in json.dumps(quiet)
    assert invoke(["runner-key", "--new"]).exit_code == 0
    out = json.loads(invoke(["doctor", "--runner", "--no-auth-check", "--json"]).stdout)
    said = " ".join(p["message"] for p in out["problems"])
    assert "agents would run unjailed here, where they can read the runner key" in said


def test_a_judges_runner_gets_the_panel_key_and_doctor_says_what_it_can_do(
    repo, tmp_path, monkeypatch
):
    """`magi runner-key --panel <file>` on a pool runner writes the panel key for a runner
    that only seats judges; there, doctor shows it and does not ask for a runner key."""
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "pool"))
    refused = invoke(["runner-key", "--panel", str(tmp_path / "panel.key")])
    assert refused.exit_code != 0
    assert "run this on a runner of the pool" in refused.stderr
    assert invoke(["runner-key", "--new"]).exit_code == 0
    (tmp_path / "judges").mkdir()
    made = invoke(["runner-key", "--panel", str(tmp_path / "judges" / "panel.key")])
    assert made.exit_code == 0, made.output
    fingerprint = re.findall(r"\bpanel key ([0-9a-f]{16})\b", _said(made.stdout))[0]
    assert "give that runner no runner key" in _said(made.stdout)
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "judges"))
    out = json.loads(invoke(["doctor", "--runner", "--no-auth-check", "--json"]).stdout)
    assert (out["runner"]["runner_key"], out["runner"]["panel_key"]) == ("", fingerprint)
    assert "no runner key" not in " ".join(p["message"] for p in out["problems"])
    shown = invoke(["doctor", "--runner", "--no-auth-check"]).stdout
    assert "seats judges from their panels" in _said(shown)


def test_a_pool_runner_with_another_pools_panel_key_is_told(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "other"))
    assert invoke(["runner-key", "--new"]).exit_code == 0
    stray = tmp_path / "stray.key"
    assert invoke(["runner-key", "--panel", str(stray)]).exit_code == 0
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "pool"))
    assert invoke(["runner-key", "--new"]).exit_code == 0
    stray.rename(tmp_path / "pool" / "panel.key")
    out = json.loads(invoke(["doctor", "--runner", "--no-auth-check", "--json"]).stdout)
    said = " ".join(p["message"] for p in out["problems"] if p["severity"] == "error")
    assert "is not the panel key of this runner's runner key" in said


def test_doctor_runner_fails_where_agents_would_run_unjailed_by_chance(repo, tmp_path, monkeypatch):
    """A bwrap that cannot run makes `magi doctor --runner` fail (the Action would refuse
    to seat agents there); `[sandbox] mode = "off"`, said on purpose, is a warning only."""
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    blocked = tmp_path / "blocked-bin"
    blocked.mkdir()
    (blocked / "bwrap").write_text("#!/bin/sh\nexit 1\n")
    (blocked / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{blocked}:{os.environ['PATH']}")
    (repo / "magi.toml").write_text(AGENT)
    out = invoke(["doctor", "--runner", "--no-auth-check", "--json"])
    errors = [p["message"] for p in json.loads(out.stdout)["problems"] if p["severity"] == "error"]
    assert out.exit_code != 0
    assert any("agents would run unjailed on this runner" in m for m in errors), errors
    (repo / "magi.toml").write_text(AGENT + '\n[sandbox]\nmode = "off"\n')
    off = invoke(["doctor", "--runner", "--no-auth-check", "--json"])
    problems = json.loads(off.stdout)["problems"]
    assert not any("would run unjailed on this runner" in p["message"] for p in problems)
    assert any('mode = "off": agents run unjailed' in p["message"] for p in problems)


def test_doctor_runner_prefers_a_key_to_a_login_that_renews_itself(repo, tmp_path, monkeypatch):
    """A claude logged in with ~/.claude/.credentials.json and no key: warned on a runner,
    with the variables to use instead; with ANTHROPIC_API_KEY set, nothing is said."""
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    (user / ".claude" / ".credentials.json").write_text("{}")
    monkeypatch.setenv("HOME", str(user))
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    (repo / "magi.toml").write_text('[[agents]]\nid = "c"\nkind = "claude"\ncommand = ["true"]\n')
    out = json.loads(invoke(["doctor", "--runner", "--no-auth-check", "--json"]).stdout)
    said = " ".join(p["message"] for p in out["problems"])
    assert "a login it renews itself" in said
    assert "ANTHROPIC_API_KEY" in said
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    out = json.loads(invoke(["doctor", "--runner", "--no-auth-check", "--json"]).stdout)
    assert "renews itself" not in json.dumps(out["problems"])
