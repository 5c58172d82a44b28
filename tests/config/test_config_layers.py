"""Layering: which files are read, in what order, how tables merge, and where values came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from config_helpers import FIXTURES, load, write
from magi.config.load import load_config, machine_config_dir
from magi.errors import ConfigError


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home" / "magi"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "work" / "proj"
    path.mkdir(parents=True)
    return path


def test_no_files_gives_defaults(repo: Path, home: Path) -> None:
    """With no config anywhere, every value is the schema default and no file is read."""
    resolved = load(repo, home)
    assert resolved.files == []
    assert resolved.config.graph.candidates == 3
    assert resolved.provenance("graph.candidates") == "default"


def test_layers_apply_in_increasing_precedence(repo: Path, home: Path) -> None:
    """user < .magi/config.toml < magi.toml, and each value names the layer that set it."""
    user = write(
        home / "config.toml", "[graph]\ncandidates = 2\njudges = 2\ndeliberate_rounds = 1\n"
    )
    dot = write(repo / ".magi" / "config.toml", "[graph]\njudges = 5\ndeliberate_rounds = 4\n")
    root = write(repo / "magi.toml", "[graph]\ndeliberate_rounds = 7\n")
    resolved = load(repo, home)
    graph = resolved.config.graph
    assert (graph.candidates, graph.judges, graph.deliberate_rounds) == (2, 5, 7)
    assert resolved.files == [user, dot, root]
    assert resolved.provenance("graph.candidates") == str(user)
    assert resolved.provenance("graph.judges") == str(dot)
    assert resolved.provenance("graph.deliberate_rounds") == str(root)
    assert resolved.provenance("graph.max_parallel") == "default"


def test_tables_merge_key_by_key(repo: Path, home: Path) -> None:
    """A higher layer's table adds to a lower one's keys instead of replacing the table."""
    write(home / "config.toml", "[blind]\non_leak = 'fail'\n[verify]\ncandidates = false\n")
    write(repo / "magi.toml", "[blind]\ncommit_msg_hook = false\n")
    config = load(repo, home).config
    assert config.blind.on_leak == "fail"
    assert config.blind.commit_msg_hook is False
    assert config.verify.candidates is False


def test_an_array_in_one_layer_is_kept_whole(repo: Path, home: Path) -> None:
    """The machine declares the roster and a repo overrides only scalars: no clash."""
    user = write(
        home / "config.toml",
        """
        [[agents]]
        id = "opus"
        kind = "claude"

        [roles]
        implementers = ["opus"]
        """,
    )
    write(repo / ".magi" / "config.toml", "[roles]\njudges = ['opus']\n[verify]\ne2e = ['make']\n")
    resolved = load(repo, home)
    assert [a.id for a in resolved.config.agents] == ["opus"]
    assert resolved.config.roles.judges == ["opus"]
    assert resolved.sources["agents"] == user
    assert resolved.provenance("agents[0].kind") == str(user)
    assert resolved.provenance("roles.implementers") == str(user)


@pytest.mark.parametrize(
    ("key", "lower", "higher"),
    [
        ("roles.implementers", "[roles]\nimplementers = []\n", "[roles]\nimplementers = []\n"),
        ("verify.e2e", "verify.e2e = ['a']\n", "[verify]\ne2e = ['b']\n"),
        (
            "agents",
            "[[agents]]\nid = 'a'\nkind = 'claude'\n",
            "[[agents]]\nid = 'b'\nkind = 'codex'\n",
        ),
    ],
)
def test_an_array_in_two_layers_names_both_files(
    repo: Path, home: Path, key: str, lower: str, higher: str
) -> None:
    """Declaring one array in two layers is an error naming the key and both files."""
    user = write(home / "config.toml", lower)
    dot = write(repo / ".magi" / "config.toml", higher)
    with pytest.raises(ConfigError) as info:
        load(repo, home)
    assert str(info.value) == (
        f"{key} is declared in {user} and {dot}; declare an array in one layer only"
    )
    assert info.value.exit_code == 3


def test_config_path_is_read_alone(repo: Path, home: Path, tmp_path: Path) -> None:
    """--config uses that one file; the user and repo layers are not read."""
    write(home / "config.toml", "[graph]\njudges = 1\n")
    write(repo / "magi.toml", "[graph]\ncandidates = 9\n")
    only = write(tmp_path / "elsewhere.toml", "[graph]\ndeliberate_rounds = 0\n")
    resolved = load(repo, home, config_path=only)
    assert resolved.files == [only]
    assert resolved.config.graph.deliberate_rounds == 0
    assert resolved.config.graph.judges == 3
    assert resolved.config.graph.candidates == 3


def test_missing_config_path_is_an_error(tmp_path: Path) -> None:
    """--config naming no file fails with that path instead of falling back to defaults."""
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as info:
        load(None, tmp_path, config_path=missing)
    assert info.value.path == missing


def test_magi_config_dir_moves_the_user_layer(repo: Path, tmp_path: Path) -> None:
    """$MAGI_CONFIG_DIR names the directory holding the machine's config.toml."""
    write(tmp_path / "cfg" / "config.toml", "[graph]\njudges = 1\n")
    environ = {"MAGI_CONFIG_DIR": str(tmp_path / "cfg")}
    assert machine_config_dir(environ) == tmp_path / "cfg"
    resolved = load_config(repo, environ=environ)
    assert resolved.config.graph.judges == 1


def test_include_is_relative_and_below_the_includer(repo: Path, home: Path) -> None:
    """Included files resolve next to their includer and lose to it, recursively."""
    base = write(
        repo / ".magi" / "shared" / "base.toml", "[graph]\njudges = 1\ndeliberate_rounds = 1\n"
    )
    mid = write(
        repo / ".magi" / "mid.toml",
        "include = ['shared/base.toml']\n[graph]\ndeliberate_rounds = 2\ncandidates = 2\n",
    )
    top = write(repo / ".magi" / "config.toml", "include = ['mid.toml']\n[graph]\ncandidates = 4\n")
    resolved = load(repo, home)
    graph = resolved.config.graph
    assert (graph.judges, graph.deliberate_rounds, graph.candidates) == (1, 2, 4)
    assert resolved.files == [base, mid, top]
    assert resolved.provenance("graph.judges") == str(base)
    assert "include" not in resolved.sources


def test_include_cycle_names_the_cycle(repo: Path, home: Path) -> None:
    """a includes b includes a: an error that spells the whole loop."""
    a = write(repo / "magi.toml", "include = ['b.toml']\n")
    b = write(repo / "b.toml", "include = ['magi.toml']\n")
    with pytest.raises(ConfigError) as info:
        load(repo, home)
    assert "include cycle" in str(info.value)
    assert f"{a.resolve()} -> {b.resolve()} -> {a.resolve()}" in str(info.value)


def test_missing_include_names_the_includer(repo: Path, home: Path) -> None:
    """An include that points nowhere is reported against the file that wrote it."""
    top = write(repo / "magi.toml", "include = ['gone.toml']\n")
    with pytest.raises(ConfigError) as info:
        load(repo, home)
    assert info.value.path == top
    assert info.value.key == "include"


def test_full_surface_fixture_validates(repo: Path, home: Path) -> None:
    """The README's full example loads, vars and all."""
    resolved = load(repo, home, config_path=FIXTURES / "full.toml")
    config = resolved.config
    assert [a.id for a in config.agents] == ["opus", "sonnet", "oc"]
    assert config.agent("oc").timeouts.judge == 600
    assert config.verify.e2e == ["CARGO_TARGET_DIR=/tmp/magi-target cargo test --locked"]
    assert resolved.provenance("vars.cache") == str(FIXTURES / "full.toml")
