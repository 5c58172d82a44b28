"""Bounds in the config schema: an absurd timeout is a config error, not an OverflowError."""

from __future__ import annotations

from pathlib import Path

import pytest

from config_helpers import load, write
from magi.errors import ConfigError
from magi.model.config import MAX_TIMEOUT_S, Config


def test_an_absurd_timeout_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    """timeout_implement = 99999999999999 is refused where it is written."""
    write(tmp_path / "repo" / "magi.toml", "[graph]\ntimeout_implement = 99999999999999\n")
    with pytest.raises(ConfigError) as err:
        load(tmp_path / "repo", tmp_path / "user")
    assert "timeout_implement" in err.value.message


def test_an_absurd_per_agent_timeout_is_refused_too() -> None:
    """The per-agent overrides carry the same bound."""
    with pytest.raises(ValueError, match="less than or equal"):
        Config.model_validate(
            {"agents": [{"id": "a", "kind": "claude", "timeouts": {"judge": MAX_TIMEOUT_S + 1}}]}
        )


def test_the_relay_and_task_caps_have_sane_defaults() -> None:
    """8000 characters per relayed text, 64 KB of task."""
    g = Config().graph
    assert g.text_max_chars == 8000
    assert g.task_max_bytes == 65_536
