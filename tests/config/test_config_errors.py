"""Config errors: each names its file and its line or key, and all are reported at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from config_helpers import load, write
from magi.errors import ConfigError


def error_of(repo: Path, home: Path, **kw: object) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(repo, home, **kw)
    return info.value


def test_malformed_toml_names_file_and_line(tmp_path: Path) -> None:
    """tomllib's position becomes file:line."""
    path = write(tmp_path / "magi.toml", "[graph]\ncandidates = 3\njudges = \n")
    err = error_of(tmp_path, tmp_path / "home")
    assert (err.path, err.line) == (path, 3)
    assert str(err) == f"{path}:3: invalid TOML: Invalid value"


def test_truncated_toml_points_at_the_last_line(tmp_path: Path) -> None:
    """An error 'at end of document' still gets a line number."""
    path = write(tmp_path / "magi.toml", "[graph]\nlanguage = 'en\n")
    err = error_of(tmp_path, tmp_path / "home")
    assert (err.path, err.line) == (path, 2)


def test_unknown_nested_key_names_file_and_dotted_key(tmp_path: Path) -> None:
    """A typo inside a table is reported against the layer that wrote it."""
    home = tmp_path / "home"
    write(home / "config.toml", "[graph]\njudges = 2\n")
    dot = write(tmp_path / ".magi" / "config.toml", "[graph]\njudgs = 3\n")
    err = error_of(tmp_path, home)
    assert (err.path, err.key) == (dot, "graph.judgs")
    assert str(err) == f"{dot}: graph.judgs: unknown key (did you mean 'judges'?)"


def test_unknown_key_inside_an_agent(tmp_path: Path) -> None:
    """A key inside [[agents]] is named with its index and reported against the roster's file."""
    path = write(tmp_path / "magi.toml", "[[agents]]\nid = 'a'\nkind = 'claude'\nmodle = 'x'\n")
    err = error_of(tmp_path, tmp_path / "home")
    assert (err.path, err.key) == (path, "agents[0].modle")


def test_unknown_table_is_reported_against_its_file(tmp_path: Path) -> None:
    """A whole misspelt table names the file whose keys sit under it."""
    path = write(tmp_path / "magi.toml", "[grpah]\njudges = 1\n")
    err = error_of(tmp_path, tmp_path / "home")
    assert (err.path, err.key) == (path, "grpah")


def test_wrong_value_names_file_key_and_value(tmp_path: Path) -> None:
    """A value of the right key but the wrong shape is mapped back to its layer too."""
    home = tmp_path / "home"
    user = write(home / "config.toml", "[blind]\non_leak = 'shout'\n")
    err = error_of(tmp_path, home)
    assert (err.path, err.key) == (user, "blind.on_leak")
    assert "'shout'" in str(err)


def test_unknown_agent_kind(tmp_path: Path) -> None:
    """A kind no adapter provides is an error, with the nearest known kind suggested."""
    path = write(tmp_path / "magi.toml", "[[agents]]\nid = 'c'\nkind = 'cluade'\n")
    err = error_of(tmp_path, tmp_path / "home")
    assert (err.path, err.key) == (path, "agents[0].kind")
    assert "unknown agent kind 'cluade' (did you mean 'claude'?)" in str(err)


def test_known_kinds_come_from_the_caller(tmp_path: Path) -> None:
    """A plugin kind passes when the registry lists it, and a built-in fails when it does not."""
    write(tmp_path / "magi.toml", "[[agents]]\nid = 'p'\nkind = 'plugged'\n")
    resolved = load(tmp_path, tmp_path / "home", known_kinds={"plugged"})
    assert resolved.config.agents[0].kind == "plugged"
    write(tmp_path / "magi.toml", "[[agents]]\nid = 'p'\nkind = 'claude'\n")
    err = error_of(tmp_path, tmp_path / "home", known_kinds={"plugged"})
    assert err.key == "agents[0].kind"


def test_several_problems_are_reported_at_once(tmp_path: Path) -> None:
    """Every problem in every layer is listed, one a line, in one error."""
    home = tmp_path / "home"
    user = write(home / "config.toml", "[roles]\njudges = []\n[graph]\njudgs = 1\n")
    dot = write(tmp_path / ".magi" / "config.toml", "[roles]\njudges = []\n[blind]\non_leak = 1\n")
    root = write(tmp_path / "magi.toml", "[graph\n")
    err = error_of(tmp_path, home)
    lines = str(err).splitlines()
    assert lines[0] == "4 problems in the config:"
    body = "\n".join(lines[1:])
    assert f"{root}:1: invalid TOML" in body
    assert f"roles.judges is declared in {user} and {dot}" in body
    assert f"{user}: graph.judgs: unknown key" in body
    assert f"{dot}: blind.on_leak:" in body
    assert err.exit_code == 3


def test_cross_reference_error_has_no_file(tmp_path: Path) -> None:
    """A role naming no agent is a whole-config problem, reported without a file."""
    write(
        tmp_path / "magi.toml", "[[agents]]\nid = 'a'\nkind = 'claude'\n[roles]\njudges = ['b']\n"
    )
    err = error_of(tmp_path, tmp_path / "home")
    assert err.path is None
    assert str(err) == "roles name agents not in [[agents]]: b"
