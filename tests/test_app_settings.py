"""The App's settings: one error listing everything missing; secrets never printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from github_helpers import PEM
from magi.app import SettingsError, create_app, settings_from_env
from magi.config import load_config_text
from magi.errors import ConfigError


def test_everything_missing_is_listed_in_one_error() -> None:
    """An empty environment names every required setting at once."""
    with pytest.raises(SettingsError) as info:
        settings_from_env({})
    text = str(info.value)
    for name in ("GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET"):
        assert name in text
    assert len(info.value.problems) == 3


def test_create_app_validates_at_start() -> None:
    """The factory refuses to build an App from a bad environment."""
    with pytest.raises(SettingsError, match="GITHUB_WEBHOOK_SECRET"):
        create_app(environ={"GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY": PEM})


def test_wrong_values_are_named() -> None:
    """A non-PEM key, a non-URL API, an unreadable key file, both key forms."""
    with pytest.raises(SettingsError) as info:
        settings_from_env(
            {
                "GITHUB_APP_ID": "1",
                "GITHUB_APP_PRIVATE_KEY": "hunter2",
                "GITHUB_WEBHOOK_SECRET": "s",
                "GITHUB_API_URL": "ftp:/x",
            }
        )
    text = str(info.value)
    assert "not a PEM" in text
    assert "GITHUB_API_URL" in text
    assert "hunter2" not in text
    with pytest.raises(SettingsError, match="cannot read"):
        settings_from_env(
            {
                "GITHUB_APP_ID": "1",
                "GITHUB_APP_PRIVATE_KEY_PATH": "/nonexistent/k",
                "GITHUB_WEBHOOK_SECRET": "s",
            }
        )
    with pytest.raises(SettingsError, match="both set"):
        settings_from_env(
            {
                "GITHUB_APP_ID": "1",
                "GITHUB_APP_PRIVATE_KEY": PEM,
                "GITHUB_APP_PRIVATE_KEY_PATH": "/k",
                "GITHUB_WEBHOOK_SECRET": "s",
            }
        )


def test_a_key_file_and_defaults(tmp_path: Path) -> None:
    """The key may come from a file; the API defaults to api.github.com; repr hides secrets."""
    key = tmp_path / "app.pem"
    key.write_text(PEM)
    s = settings_from_env(
        {
            "GITHUB_APP_ID": "42",
            "GITHUB_APP_PRIVATE_KEY_PATH": str(key),
            "GITHUB_WEBHOOK_SECRET": "topsecret",
        }
    )
    assert s.api_url == "https://api.github.com"
    assert s.private_key == PEM
    assert "topsecret" not in repr(s)
    assert "PRIVATE KEY" not in repr(s)


def test_an_escaped_inline_key_is_unescaped() -> None:
    """A PEM with literal \\n (as env files carry it) is read as lines."""
    s = settings_from_env(
        {
            "GITHUB_APP_ID": "1",
            "GITHUB_APP_PRIVATE_KEY": PEM.replace("\n", "\\n"),
            "GITHUB_WEBHOOK_SECRET": "s",
            "GITHUB_API_URL": "http://127.0.0.1:9/",
        }
    )
    assert s.private_key == PEM
    assert s.api_url == "http://127.0.0.1:9"


def test_config_text_is_one_repo_layer_without_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A repository config cannot read the App's environment, nor include files."""
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "topsecret")
    config = load_config_text('[github]\nrequired_checks = ["ci"]\n').config
    assert config.github.required_checks == ["ci"]
    with pytest.raises(ConfigError, match="no attribute 'GITHUB_WEBHOOK_SECRET'"):
        load_config_text('[github]\nlabel = "{{ env.GITHUB_WEBHOOK_SECRET }}"\n')
    with pytest.raises(ConfigError, match="include"):
        load_config_text('include = ["other.toml"]\n')
    with pytest.raises(ConfigError, match=r"\.magi/config\.toml:1"):
        load_config_text("x = = 1\n")
