"""Kinds as pluggy plugins, doctor's key check, CLI discovery, and the public exports."""

from __future__ import annotations

import ast
import importlib.metadata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import magi.agents
from magi.agents import (
    Agent,
    FoundCli,
    KindSpec,
    TurnRequest,
    TurnResult,
    TurnStatus,
    build_agent,
    find_clis,
    hookimpl,
    kinds,
    plugin_manager,
    unpassed_keys,
)
from magi.agents import builtin as builtin_module
from magi.agents.discover import parse_version
from magi.errors import AgentError
from magi.model.config import BUILTIN_KINDS, AgentConfig
from magi.testing import inprocess


class EchoAgent:
    def __init__(self, cfg: AgentConfig, output_max_bytes: int) -> None:
        self.id, self.kind, self.cap = cfg.id, cfg.kind, output_max_bytes

    def run_turn(self, request: TurnRequest) -> TurnResult:
        return TurnResult(TurnStatus.OK, text=request.prompt)


class EchoPlugin:
    @hookimpl
    def magi_register_agent_kinds(self, register: Callable[[KindSpec], None]) -> None:
        register(KindSpec("echo", EchoAgent, executable="echo", key_env_vars=("ECHO_KEY",)))


@pytest.fixture
def echo_plugin() -> Iterator[EchoPlugin]:
    plugin = EchoPlugin()
    plugin_manager().register(plugin)
    yield plugin
    plugin_manager().unregister(plugin)


def test_builtin_kinds_come_through_the_hook_and_the_entry_point() -> None:
    # Beside them only the test kit's in-process personas, which the suite's conftest adds.
    assert set(kinds()) - {inprocess.KIND} == set(BUILTIN_KINDS)
    assert plugin_manager().get_plugin("builtin") is builtin_module
    points = importlib.metadata.entry_points(group="magi.agents")
    assert [ep.value for ep in points if ep.name == "builtin"] == ["magi.agents.builtin"]


def test_a_plugin_kind_registered_through_pluggy_builds_agents(echo_plugin: EchoPlugin) -> None:
    assert "echo" in kinds()
    agent = build_agent(AgentConfig(id="e1", kind="echo"), output_max_bytes=123)
    assert isinstance(agent, Agent)
    assert isinstance(agent, EchoAgent)
    assert agent.cap == 123
    req = TurnRequest(seat="judge-1", prompt="hello", cwd=Path("."), allow_write=False, timeout=1)
    assert agent.run_turn(req).text == "hello"


def test_two_plugins_claiming_one_kind_is_an_error(echo_plugin: EchoPlugin) -> None:
    second = EchoPlugin()
    plugin_manager().register(second)
    try:
        with pytest.raises(AgentError, match="echo"):
            kinds()
    finally:
        plugin_manager().unregister(second)


def test_an_unknown_kind_names_itself_and_the_known_kinds() -> None:
    with pytest.raises(AgentError) as info:
        build_agent(AgentConfig(id="x", kind="clod"))
    assert "'clod'" in str(info.value)
    assert "claude, codex" in str(info.value)


def test_unpassed_keys_lists_credentials_the_agent_will_not_see() -> None:
    environ = {"OPENAI_API_KEY": "sk", "CODEX_API_KEY": "ck", "ANTHROPIC_API_KEY": "ak"}
    codex = AgentConfig(id="cx", kind="codex", pass_env=["CODEX_API_KEY"])
    assert unpassed_keys(codex, environ) == ["OPENAI_API_KEY"]
    claude = AgentConfig(id="cl", kind="claude", env={"ANTHROPIC_API_KEY": "other"})
    assert unpassed_keys(claude, environ) == []
    assert unpassed_keys(AgentConfig(id="g", kind="gemini"), environ) == []


def write_cli(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_find_clis_reports_path_and_version_and_never_raises(tmp_path: Path) -> None:
    write_cli(tmp_path, "claude", 'echo "2.1.197 (Claude Code)"')
    write_cli(tmp_path, "codex", 'echo "codex-cli 0.171.0"')
    write_cli(tmp_path, "opencode", "echo broken >&2; exit 3")
    write_cli(tmp_path, "agy", 'while read -r line; do :; done; echo "agy 1.0"')  # stdin closed
    (tmp_path / "gemini").write_text("not executable")
    found = find_clis(str(tmp_path), timeout=5)
    assert found == [
        FoundCli("antigravity", str(tmp_path / "agy"), "1.0"),
        FoundCli("claude", str(tmp_path / "claude"), "2.1.197"),
        FoundCli("codex", str(tmp_path / "codex"), "0.171.0"),
        FoundCli("opencode", str(tmp_path / "opencode"), None),
    ]


def test_find_clis_on_an_empty_path_finds_nothing(tmp_path: Path) -> None:
    assert find_clis(str(tmp_path)) == []


@pytest.mark.parametrize(
    ("output", "version"),
    [
        ("codex-cli 0.171.0\n", "0.171.0"),
        ("1.18.33", "1.18.33"),
        ("nightly\n", "nightly"),
        ("", None),
    ],
)
def test_parse_version(output: str, version: str | None) -> None:
    assert parse_version(output) == version


def test_every_public_name_is_exported() -> None:
    for name in magi.agents.__all__:
        assert getattr(magi.agents, name) is not None
    with pytest.raises(AttributeError):
        _ = magi.agents.no_such_name


def _imports_of(path: Path) -> set[str]:
    """The magi.agents modules ``path`` imports anywhere, type-checking blocks excepted."""
    tree = ast.parse(path.read_text())
    skipped = {
        id(node)
        for top in ast.walk(tree)
        if isinstance(top, ast.If) and ast.unparse(top.test) == "TYPE_CHECKING"
        for stmt in top.body
        for node in ast.walk(stmt)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "magi.agents":
                found |= {f"magi.agents.{a.name}" for a in node.names}
            elif node.module.startswith("magi.agents."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("magi.agents.")}
    return found


def test_the_agents_package_has_no_import_cycle() -> None:
    """builtin, registry and hookspecs (and every other agents module) import in one direction."""
    package = Path(magi.agents.__file__).parent
    modules = [p for p in package.glob("*.py") if p.stem != "__init__"]
    graph = {f"magi.agents.{p.stem}": _imports_of(p) for p in modules}

    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(
            nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt}))
            for nxt in graph.get(start, set())
        )

    assert [m for m in graph if reaches(m, m)] == []
