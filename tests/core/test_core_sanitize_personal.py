"""redact_secrets(personal=True): what a council also removes, and what it leaves alone."""

from __future__ import annotations

import pytest

from magi.core.text.sanitize import redact_secrets


@pytest.mark.parametrize(
    ("text", "kind", "gone"),
    [
        ("mail bob.smith+x@corp.example.co.uk today", "email", "bob.smith"),
        ("server 10.20.30.40 is down", "ip_address", "10.20.30.40"),
        ("ends with 172.16.0.9.", "ip_address", "172.16.0.9"),
        ("v6 2001:db8:85a3::8a2e:370:7334 here", "ip_address", "2001:db8"),
        ("use mongodb+srv://u:p4ss@cluster0.example.net/db", "connection_string", "cluster0"),
        ("redis://cache.internal:6379/0", "connection_string", "cache.internal"),
        ("Server=db1;Database=x;User Id=sa;Password=Secr3t;", "connection_string", "Secr3t"),
    ],
)
def test_personal_kinds_are_replaced(text, kind, gone):
    """Emails, IPv4/IPv6 addresses and whole connection strings become placeholders."""
    out, found = redact_secrets(text, "question", personal=True)
    assert gone not in out
    assert f"[REDACTED:{kind}]" in out
    assert kind in {r.kind for r in found}


@pytest.mark.parametrize(
    "text",
    [
        "listen on 127.0.0.1 and 0.0.0.0",
        "python 3.11.4 and v1.2.3",
        "std::vector and Foo::bar",
        "at 12:30:45 sharp",
        "a.b@c",
    ],
)
def test_harmless_lookalikes_stay(text):
    """Loopback, versions, C++ scopes and clock times are not personal data."""
    out, found = redact_secrets(text, "question", personal=True)
    assert out == text
    assert found == []


def test_competition_prompts_keep_addresses():
    """Without personal=True an email or IP stays: an address in code is often the point."""
    text = "connect to 10.0.0.1 as dev@example.com"
    assert redact_secrets(text, "prompt")[0] == text
