"""magi doctor says which jail a run would have, why, and what to change."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from magi.model.config import Sandbox
from magi.sandbox.bwrap import decide
from magi.testing.cli import invoke

AGENT = """\
[[agents]]
id = "sh1"
kind = "command"
command = ["sh", "-c", "echo ok"]

[sandbox]
mode = "{mode}"
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    ident = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "HOME": str(tmp_path),
    }
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *argv], cwd=root, env={**os.environ, **ident}, check=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MAGI_CONFIG_DIR", str(tmp_path / "machine"))
    return root


def _doctor(repo: Path, mode: str, *args: str) -> tuple[int, str]:
    (repo / "magi.toml").write_text(AGENT.format(mode=mode))
    result = invoke(["doctor", *args])
    return result.exit_code, result.stdout


def test_doctor_shows_the_jail_in_force(repo: Path) -> None:
    """The jail section names the mode in force, the one asked for and the reason."""
    _, out = _doctor(repo, "auto")
    expected = decide(Sandbox())
    assert "jail" in out
    assert f"in force  {expected.mode}" in out
    assert expected.reason in out
    if not expected.jailed:
        assert "agents will run unjailed" in out


def test_doctor_json_carries_the_jail(repo: Path) -> None:
    """--json holds mode, configured, reason and fix."""
    _, out = _doctor(repo, "off", "--json")
    jail = json.loads(out)["jail"]
    assert jail["mode"] == "off"
    assert jail["configured"] == "off"
    assert "unjailed" in jail["reason"]


def test_doctor_refuses_mode_bwrap_that_cannot_be_had(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mode = bwrap with no bwrap on PATH is an error naming the package to install."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "git"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    code, out = _doctor(repo, "bwrap")
    assert code != 0
    assert 'mode = "bwrap" but bwrap is not on PATH' in out
    assert "bubblewrap" in out


needs_bwrap = pytest.mark.skipif(
    not decide(Sandbox()).jailed, reason=f"bubblewrap is not usable: {decide(Sandbox()).reason}"
)


def _standin_claude(where: Path) -> Path:
    where.mkdir(parents=True)
    cli = where / "claude"
    cli.write_text('#!/bin/sh\necho "2.1.0 (Claude Code)"\n')
    cli.chmod(0o755)
    return where


@needs_bwrap
@pytest.mark.parametrize("hidden", [True, False], ids=["under-magi-home", "under-tmp"])
def test_doctor_probes_each_cli_inside_the_jail(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hidden: bool
) -> None:
    """A CLI the jail hides is named with where it is and what to do; one under /tmp (the
    jail's private /tmp) is bound read-only for its turns and starts, so nothing is said."""
    place = tmp_path / "home" / "bin" if hidden else tmp_path / "npm" / "bin"
    monkeypatch.setenv("PATH", f"{_standin_claude(place)}:{os.environ['PATH']}")
    script = (tmp_path / "home" if hidden else tmp_path / "agents") / "impl.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("echo ok\n")
    (repo / "magi.toml").write_text(
        '[[agents]]\nid = "c1"\nkind = "claude"\n\n'
        f'[[agents]]\nid = "sh1"\nkind = "command"\ncommand = ["sh", "{script}"]\n'
    )
    # Wide: a path must not be cut where the tmp path (longer under xdist) would cut it.
    out = invoke(["doctor", "--no-auth-check"], env={"COLUMNS": "400"}).stdout
    named = f"claude: found at {place / 'claude'}, which the jail hides" in " ".join(out.split())
    assert named is hidden, out
    assert (f"{script} is hidden inside the jail" in " ".join(out.split())) is hidden, out


@pytest.mark.skipif(not decide(Sandbox()).jailed, reason="the map is of a jail in force")
def test_doctor_maps_what_a_seat_of_each_roster_cli_sees(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For a claude in the roster: its own copy of ~/.claude (with the login it is laid)
    writable, the rest of the home hidden, the tree writable, the system visible; the
    user's SSH folder and other CLIs' state are not shown anywhere in the map."""
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".codex").mkdir()
    monkeypatch.setenv("HOME", str(user))
    (repo / "magi.toml").write_text(
        '[[agents]]\nid = "c"\nkind = "claude"\ncommand = ["true"]\n[sandbox]\nmode = "bwrap"\n'
    )
    out = json.loads(invoke(["doctor", "--no-auth-check", "--json"]).stdout)
    rows = {(r["access"], r["path"]): r["why"] for r in out["jail_maps"]["claude"]}
    assert "login (.credentials.json)" in rows["writable", str(user / ".claude")]
    assert ("hidden", str(user)) in rows
    assert ("writable", str(repo)) in rows
    assert ("visible", "/usr") in rows
    shown = [p for (access, p) in rows if access != "hidden"]
    assert not any(".ssh" in p or ".codex" in p for p in shown)
    text = invoke(["doctor", "--no-auth-check"]).stdout
    assert "jail map: claude" in text


@needs_bwrap
@pytest.mark.parametrize("listening", [True, False], ids=["provider-up", "provider-down"])
def test_doctor_names_an_agent_whose_provider_the_proxy_cannot_reach(
    repo: Path, listening: bool
) -> None:
    """Before anything is spent: an agent whose base URL answers nobody through the egress
    proxy is named with where it may connect; one that answers is not. The checks' own
    egress is said beside it."""
    with socket.socket() as provider:
        provider.bind(("127.0.0.1", 0))
        if listening:
            provider.listen(1)
        port = provider.getsockname()[1]
        (repo / "magi.toml").write_text(
            '[[agents]]\nid = "sh1"\nkind = "command"\ncommand = ["true"]\n'
            f'env = {{ OPENAI_BASE_URL = "http://127.0.0.1:{port}/v1" }}\n\n'
            '[sandbox]\nmode = "bwrap"\n\n[verify]\negress = ["pypi.org"]\n'
        )
        result = invoke(["doctor", "--json", "--no-auth-check"])
    found = json.loads(result.stdout)
    said = [p["message"] for p in found["problems"] if "egress proxy" in p["message"]]
    assert found["jail"]["egress"] == {"checks": "pypi.org", "sh1": f"127.0.0.1:{port}"}
    if listening:
        assert said == []
    else:
        assert len(said) == 1
        assert f"agent 'sh1': its provider 127.0.0.1:{port} is unreachable" in said[0]
        assert "Connection refused" in said[0]
