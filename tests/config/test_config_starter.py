"""The starter config `magi init` writes: commented, and loadable exactly as written."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from config_helpers import load, write
from magi.config.starter import starter_config, toml_value
from magi.model.config import Config


@pytest.mark.parametrize("found", [["claude", "codex", "antigravity"], ["opencode"], []])
def test_starter_round_trips_through_load_config(tmp_path: Path, found: list[str]) -> None:
    """The starter, written as .magi/config.toml, loads and validates with the found roster."""
    write(tmp_path / ".magi" / "config.toml", starter_config(found))
    config = load(tmp_path, tmp_path / "home").config
    assert [(a.id, a.kind) for a in config.agents] == [(k, k) for k in found]
    # Everything else is commented out, so the starter changes no default.
    assert config.model_dump(exclude={"agents"}) == Config().model_dump(exclude={"agents"})


def test_starter_is_commented() -> None:
    """The starter explains itself: layers, the array rule, templating, every default."""
    text = starter_config(["claude"])
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert len(comments) > 60
    assert "# candidates = 3" in text
    assert '# on_leak = "warn"' in text
    assert "warn | redact | fail" in text
    assert "one layer" in text
    assert "{{ env.MAGI_CACHE | default('/tmp') }}" in text


def test_starter_without_found_clis_declares_no_roster() -> None:
    """With nothing on PATH the starter only shows how to declare agents."""
    data = tomllib.loads(starter_config([]))
    assert "agents" not in data
    assert "# [[agents]]" in starter_config([])


def test_toml_value_writes_valid_literals() -> None:
    """Defaults are written as TOML that reads back to the same value."""
    value = ['a"b', "c\\d"]
    text = f"x = {toml_value(value)}\ny = {toml_value(True)}\nz = {toml_value(1.5)}"
    assert tomllib.loads(text) == {"x": value, "y": True, "z": 1.5}
    with pytest.raises(TypeError):
        toml_value({"no": "tables"})
