"""An agent's own program under a path the jail hides (its private /tmp) still starts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from magi.agents.programs import program_paths
from magi.core.seats.jail import bwrap_argv, policy
from magi.model.config import Sandbox
from magi.sandbox.bwrap import decide, system_view

FOUND = decide(Sandbox())
needs_bwrap = pytest.mark.skipif(
    not FOUND.jailed, reason=f"bubblewrap is not usable here: {FOUND.reason}"
)


def _npm_cli(root: Path) -> Path:
    """`npm install --prefix root` of a CLI: a .bin link to a script that loads a sibling."""
    pkg = root / "node_modules" / "@acme" / "cli"
    (pkg / "bin").mkdir(parents=True)
    (pkg / "vendor").mkdir()
    (pkg / "package.json").write_text('{"name": "@acme/cli"}')
    (pkg / "vendor" / "version.txt").write_text("acme-cli 1.2.3\n")
    script = pkg / "bin" / "acme.sh"
    script.write_text('#!/bin/sh\ncat "$(dirname "$(readlink -f "$0")")/../vendor/version.txt"\n')
    script.chmod(0o755)
    (root / "node_modules" / ".bin").mkdir()
    link = root / "node_modules" / ".bin" / "acme"
    link.symlink_to(os.path.relpath(script, link.parent))
    return root / "node_modules" / ".bin"


def _spec(cwd: Path, hide: list[str] | None = None):  # type: ignore[no-untyped-def]
    dirs, links = system_view()
    return policy(
        cwd=str(cwd),
        writable=True,
        hide=hide or [],
        bwrap=FOUND.bwrap or "bwrap",
        system=dirs,
        links=links,
    )


def test_the_path_entry_and_the_npm_package_are_what_is_bound(tmp_path: Path) -> None:
    """The .bin directory bwrap searches, and the package its script loads from."""
    bin_dir = _npm_cli(tmp_path / "x")
    work = tmp_path / "work"
    work.mkdir()
    paths = program_paths(_spec(work), ["acme", "--version"], str(bin_dir))
    assert paths == [str(bin_dir), str(tmp_path / "x" / "node_modules" / "@acme" / "cli")]


def test_a_script_argument_of_an_interpreter_is_bound(tmp_path: Path) -> None:
    """`sh /tmp/.../impl.sh`: the script's directory (sh itself is on the read-only root)."""
    scripts = tmp_path / "agents"
    scripts.mkdir()
    (scripts / "impl.sh").write_text("echo hi\n")
    work = tmp_path / "work"
    work.mkdir()
    paths = program_paths(_spec(work), ["sh", str(scripts / "impl.sh")], "/usr/bin:/bin")
    assert paths == [str(scripts)]
    assert program_paths(_spec(scripts), ["sh", str(scripts / "impl.sh")], None) == []


def test_what_the_jail_hides_on_purpose_stays_hidden(tmp_path: Path) -> None:
    """A program kept inside magi's home (or any hidden path) is not unhidden for it."""
    home = tmp_path / "magi-home"
    bin_dir = _npm_cli(home)
    assert program_paths(_spec(tmp_path, [str(home)]), ["acme"], str(bin_dir)) == []


@needs_bwrap
def test_a_cli_and_a_script_under_tmp_run_in_the_jail(tmp_path: Path) -> None:
    """Before the binds, bwrap said `execvp acme: No such file or directory` and sh could
    not open the script; with them both run, and nothing else of the host's /tmp shows."""
    bin_dir = _npm_cli(tmp_path / "x")
    (tmp_path / "secret.txt").write_text("host tmp")
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "agent" / "impl.sh"
    script.parent.mkdir()
    script.write_text(f"cat {tmp_path / 'secret.txt'} 2>/dev/null || echo hidden\n")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    spec = _spec(work)
    for argv, want in ((["acme"], "acme-cli 1.2.3"), (["sh", str(script)], "hidden")):
        bare = subprocess.run(
            bwrap_argv(spec, argv), env=env, capture_output=True, text=True, check=False
        )
        assert bare.returncode != 0  # what every turn did
        seen = spec.reading(*program_paths(spec, argv, env["PATH"]))
        ran = subprocess.run(
            bwrap_argv(seen, argv), env=env, capture_output=True, text=True, check=False
        )
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.strip() == want


@needs_bwrap
def test_a_command_agents_turn_runs_its_script_under_tmp_in_the_jail(tmp_path: Path) -> None:
    """Through the agent runner, as every turn goes: the script under the host's /tmp is
    read, the turn is OK (before: `sh: 0: cannot open /tmp/.../impl.sh`)."""
    from magi.agents.base import TurnRequest, TurnStatus
    from magi.agents.registry import build_agent
    from magi.model.config import AgentConfig

    script = tmp_path / "agent" / "impl.sh"
    script.parent.mkdir()
    script.write_text("echo from-the-script\n")
    work = tmp_path / "work"
    work.mkdir()
    agent = build_agent(AgentConfig(id="sh1", kind="command", command=["sh", str(script)]))
    request = TurnRequest(
        seat="impl-A",
        prompt="do it",
        cwd=work,
        allow_write=True,
        timeout=60,
        environ={"PATH": "/usr/bin:/bin"},
        jail=_spec(work),
    )
    result = agent.run_turn(request)
    assert result.status is TurnStatus.OK, result.error
    assert result.text == "from-the-script"


def _npm_cli_with_platform_package(root: Path) -> Path:
    """An npm CLI laid out as ``@openai/codex`` 0.171 is: its bin script runs the binary
    of a platform package beside it, one of its ``optionalDependencies``."""
    bin_dir = _npm_cli(root)
    pkg = root / "node_modules" / "@acme" / "cli"
    (pkg / "package.json").write_text(
        '{"name": "@acme/cli", "optionalDependencies": {"@acme/cli-linux-x64": "1.2.3",'
        ' "@acme/cli-darwin-arm64": "1.2.3", "../../escape": "1"}}'
    )
    native = root / "node_modules" / "@acme" / "cli-linux-x64"
    (native / "vendor").mkdir(parents=True)
    (native / "package.json").write_text('{"name": "@acme/cli-linux-x64"}')
    (native / "vendor" / "version.txt").write_text("acme-cli native 1.2.3\n")
    (pkg / "bin" / "acme.sh").write_text(
        '#!/bin/sh\nhere="$(dirname "$(readlink -f "$0")")"\n'
        'cat "$here/../../cli-linux-x64/vendor/version.txt" 2>/dev/null'
        ' || { echo "Error: Missing optional dependency @acme/cli-linux-x64" >&2; exit 1; }\n'
    )
    return bin_dir


def test_an_npm_clis_platform_package_is_bound_beside_it(tmp_path: Path) -> None:
    """The installed optional dependency is bound (found where Node looks); one not
    installed for this platform, or a name that climbs out of node_modules, is not."""
    bin_dir = _npm_cli_with_platform_package(tmp_path / "x")
    work = tmp_path / "work"
    work.mkdir()
    modules = tmp_path / "x" / "node_modules"
    paths = program_paths(_spec(work), ["acme"], str(bin_dir))
    assert paths == [
        str(bin_dir),
        str(modules / "@acme" / "cli"),
        str(modules / "@acme" / "cli-linux-x64"),
    ]


@needs_bwrap
def test_an_npm_cli_whose_binary_is_in_its_platform_package_runs_in_the_jail(
    tmp_path: Path,
) -> None:
    """Through the agent runner: before, the platform package was hidden and the turn
    failed with "Missing optional dependency"; now the binary's words come back."""
    from magi.agents.base import TurnRequest, TurnStatus
    from magi.agents.registry import build_agent
    from magi.model.config import AgentConfig

    bin_dir = _npm_cli_with_platform_package(tmp_path / "x")
    work = tmp_path / "work"
    work.mkdir()
    agent = build_agent(AgentConfig(id="acme", kind="command", command=["acme"]))
    request = TurnRequest(
        seat="impl-A",
        prompt="do it",
        cwd=work,
        allow_write=True,
        timeout=60,
        environ={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        jail=_spec(work),
    )
    result = agent.run_turn(request)
    assert result.status is TurnStatus.OK, result.error
    assert result.text.strip() == "acme-cli native 1.2.3"
