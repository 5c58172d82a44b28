"""The App's settings: one error listing everything missing; secrets never printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from github_helpers import pem
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
    """From an environment, a bad one gives an App that only says what is wrong (503, see
    tests/app/test_app_startup.py); given settings that do not read, the factory raises."""
    import asyncio

    import httpx

    async def health() -> httpx.Response:
        app = create_app(environ={"GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY": pem()})
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            return await client.get("/healthz")

    answer = asyncio.run(health())
    assert answer.status_code == 503
    assert any("GITHUB_WEBHOOK_SECRET" in p for p in answer.json()["problems"])


def test_wrong_values_are_named() -> None:
    """A non-pem() key, a non-URL API, an unreadable key file, both key forms."""
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
                "GITHUB_APP_PRIVATE_KEY": pem(),
                "GITHUB_APP_PRIVATE_KEY_PATH": "/k",
                "GITHUB_WEBHOOK_SECRET": "s",
            }
        )


def test_a_key_file_and_defaults(tmp_path: Path) -> None:
    """The key may come from a file; the API defaults to api.github.com; repr hides secrets."""
    key = tmp_path / "app.pem"
    key.write_text(pem())
    s = settings_from_env(
        {
            "GITHUB_APP_ID": "42",
            "GITHUB_APP_PRIVATE_KEY_PATH": str(key),
            "GITHUB_WEBHOOK_SECRET": "topsecret",
        }
    )
    assert s.api_url == "https://api.github.com"
    assert s.private_key == pem().strip()
    assert "topsecret" not in repr(s)
    assert "PRIVATE KEY" not in repr(s)


def test_an_escaped_inline_key_is_unescaped() -> None:
    """A pem() with literal \\n (as env files carry it) is read as lines."""
    s = settings_from_env(
        {
            "GITHUB_APP_ID": "1",
            "GITHUB_APP_PRIVATE_KEY": pem().strip().replace("\n", "\\n"),
            "GITHUB_WEBHOOK_SECRET": "s",
            "GITHUB_API_URL": "http://127.0.0.1:9/",
        }
    )
    assert s.private_key == pem().strip()
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


def test_the_public_address_runners_ask_is_https_or_loopback() -> None:
    """MAGI_PUBLIC_URL: where a run asks whether a `/magi stop` parks it (optional)."""
    base = {"GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY": pem(), "GITHUB_WEBHOOK_SECRET": "s"}
    assert settings_from_env(base).public_url is None
    got = settings_from_env({**base, "MAGI_PUBLIC_URL": " https://magi.acme.test/ "})
    assert got.public_url == "https://magi.acme.test"
    for bad, why in (
        ("http://magi.acme.test", "plain http"),
        ("magi.acme.test", "not an http"),
        ("https://magi.acme.test/?k=1", "query"),
    ):
        with pytest.raises(SettingsError, match=why) as info:
            settings_from_env({**base, "MAGI_PUBLIC_URL": bad})
        assert "MAGI_PUBLIC_URL" in str(info.value)


@pytest.mark.parametrize("value", ["0", "10", "-1", "soon", "nan"])
def test_the_answer_wait_is_more_than_nothing_and_under_githubs_ten_seconds(value: str) -> None:
    """``MAGI_ANSWER_WITHIN`` past GitHub's 10 s would have every slow delivery recorded as
    failed; 0 or words are a mistake: each is named, never taken."""
    env = {"GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY": pem(), "GITHUB_WEBHOOK_SECRET": "s"}
    with pytest.raises(SettingsError, match="MAGI_ANSWER_WITHIN"):
        settings_from_env({**env, "MAGI_ANSWER_WITHIN": value})
    assert settings_from_env({**env, "MAGI_ANSWER_WITHIN": "2.5"}).answer_within == 2.5
    assert settings_from_env(env).answer_within == 8.0


def test_redelivery_at_start_up_is_on_unless_a_replica_says_0() -> None:
    """``MAGI_REDELIVER``: 1 (the default) or 0; anything else is named, never guessed."""
    env = {"GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY": pem(), "GITHUB_WEBHOOK_SECRET": "s"}
    assert settings_from_env(env).redeliver is True
    assert settings_from_env({**env, "MAGI_REDELIVER": "1"}).redeliver is True
    assert settings_from_env({**env, "MAGI_REDELIVER": "0"}).redeliver is False
    for bad in ("no", "false", "2"):
        with pytest.raises(SettingsError, match="MAGI_REDELIVER"):
            settings_from_env({**env, "MAGI_REDELIVER": bad})
