"""The egress allowlist: which host:port a jailed seat may reach (pure)."""

from __future__ import annotations

import json

import pytest

from magi.core.seats.egress import allowlist, allows, base_url_targets, loopback_ports
from magi.model.config import Config
from magi.model.egress import Target, parse_entry


def test_a_kinds_hosts_allow_the_web_ports_only() -> None:
    allowed = allowlist(defaults=["api.anthropic.com"])
    assert allows(allowed, "api.anthropic.com", 443)
    assert allows(allowed, "API.Anthropic.com.", 80)
    assert not allows(allowed, "api.anthropic.com", 22)
    assert not allows(allowed, "evil.anthropic.com", 443)
    assert not allows(allowed, "api.anthropic.com.evil.example", 443)


def test_a_wildcard_allows_the_names_under_it_not_the_domain() -> None:
    allowed = allowlist(defaults=["*.aiplatform.googleapis.com"])
    assert allows(allowed, "us-central1-aiplatform.googleapis.com", 443) is False
    assert allows(allowed, "us-central1.aiplatform.googleapis.com", 443)
    assert not allows(allowed, "aiplatform.googleapis.com", 443)
    assert not allows(allowed, "xaiplatform.googleapis.com", 443)


def test_base_urls_in_the_environment_and_argv_are_allowed_with_their_port() -> None:
    env = {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:8080",
        "GOOGLE_GEMINI_BASE_URL": "https://gw.corp.example/gemini",
        "OPENCODE_CONFIG_CONTENT": json.dumps(
            {"provider": {"x": {"options": {"baseURL": "http://localhost:9000/v1"}}}}
        ),
        "HOME": "http://not-a-base-url.example",
    }
    argv = ["codex", "-c", 'openai_base_url="http://127.0.0.1:7000/v1"', "http://argv.example"]
    assert base_url_targets(env, argv) == [
        Target("127.0.0.1", 8080),
        Target("gw.corp.example", 443),
        Target("localhost", 9000),
        Target("127.0.0.1", 7000),
    ]
    allowed = allowlist(environ=env, argv=argv)
    assert allows(allowed, "127.0.0.1", 8080)
    assert allows(allowed, "localhost", 8080)  # loopback is one host, by any of its names
    assert not allows(allowed, "127.0.0.1", 8081)
    assert not allows(allowed, "not-a-base-url.example", 443)
    assert not allows(allowed, "argv.example", 443)
    assert loopback_ports(allowed) == [7000, 8080, 9000]


def test_extra_entries_take_a_port_or_the_web_ports() -> None:
    allowed = allowlist(extra=["pypi.org", "files.example:8443", "[::1]:5000"])
    assert allows(allowed, "pypi.org", 443)
    assert allows(allowed, "files.example", 8443)
    assert not allows(allowed, "files.example", 443)
    assert allows(allowed, "::1", 5000)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("https://pypi.org", "is a URL"),
        ("pypi.org:99999", "no valid port"),
        ("pypi.org:", "no valid port"),
        ("py pi.org", "not a host name"),
        ("[zz]:1", "not an IPv6 address"),
    ],
)
def test_a_bad_entry_is_named_with_where_it_is(entry: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as caught:
        parse_entry(entry, "[sandbox] egress")
    assert "[sandbox] egress" in str(caught.value)


@pytest.mark.parametrize("table", ["sandbox", "verify"])
def test_a_bad_egress_key_is_a_config_error_naming_it(table: str) -> None:
    with pytest.raises(ValueError, match=rf"\[{table}\] egress: 'http://x' is a URL"):
        Config.model_validate({table: {"egress": ["http://x"]}})
