"""The park channel: a key per run that reads one bit, and a job that asks only its own run."""

from __future__ import annotations

import json

import pytest

from magi.core.person.park import (
    ANSWER_MAX,
    BadChannel,
    channel,
    key_ok,
    park_key,
    public_url_problem,
    read_answer,
    read_channel,
)
from magi.core.threads.markers import Seal

SEAL = Seal(b"k" * 32)
OTHER = Seal(b"o" * 32)
RUN = "20261204-223000-4f2a"
REPO = "octo/widgets"


def test_a_key_is_one_runs_of_one_repository_under_one_apps_key() -> None:
    key = park_key(SEAL, REPO, RUN)
    assert key == park_key(SEAL, "Octo/Widgets", RUN), "GitHub's names are case-insensitive"
    assert key != park_key(SEAL, REPO, "20261204-223000-4f2b")
    assert key != park_key(SEAL, "octo/gadgets", RUN)
    assert key != park_key(OTHER, REPO, RUN)
    assert key_ok(SEAL, REPO, RUN, key)
    assert not key_ok(SEAL, REPO, RUN, "")
    assert not key_ok(SEAL, REPO, RUN, None)
    assert not key_ok(SEAL, REPO, "20261204-223000-4f2b", key)


def test_a_park_key_is_never_a_markers_mac() -> None:
    """The key is derived apart: a job that learns it cannot seal a marker with it."""
    marker = SEAL.marker("park", repo=REPO.replace("/", "-"), run=RUN)
    assert park_key(SEAL, REPO, RUN) not in marker


def test_the_apps_channel_reads_back_for_its_run_only() -> None:
    made = channel("https://magi.example.com/", SEAL, REPO, RUN)
    assert made.url == f"https://magi.example.com/park/{REPO}/{RUN}"
    assert read_channel(made.to_input(), REPO, RUN) == made
    with pytest.raises(BadChannel, match="not for run 20261204-223000-4f2b"):
        read_channel(made.to_input(), REPO, "20261204-223000-4f2b")
    with pytest.raises(BadChannel, match="not for run"):
        read_channel(made.to_input(), "octo/gadgets", RUN)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "not JSON"),
        ("[]", "is not {"),
        (json.dumps({"url": "https://a.example/park/octo/widgets/" + RUN}), "is not {"),
        (json.dumps({"url": 1, "key": "0" * 32}), "url or key is not one"),
        (
            json.dumps({"url": "https://a.example/park/octo/widgets/" + RUN, "key": "Z" * 32}),
            "url or key",
        ),
        (
            json.dumps({"url": "http://a.example/park/octo/widgets/" + RUN, "key": "0" * 32}),
            "plain http",
        ),
        (
            json.dumps({"url": "https://u:p@a.example/park/octo/widgets/" + RUN, "key": "0" * 32}),
            "credentials",
        ),
        (
            json.dumps({"url": "file:///park/octo/widgets/" + RUN, "key": "0" * 32}),
            "not an http",
        ),
    ],
)
def test_a_park_input_that_is_not_a_channel_is_refused_saying_why(text: str, why: str) -> None:
    with pytest.raises(BadChannel, match=why):
        read_channel(text, REPO, RUN)


def test_plain_http_is_for_loopback_only() -> None:
    assert public_url_problem("http://127.0.0.1:8080") is None
    assert public_url_problem("http://localhost:8080") is None
    assert public_url_problem("http://[::1]:8080") is None
    assert "plain http" in (public_url_problem("http://10.0.0.1") or "")
    assert public_url_problem("https://magi.example.com") is None


def test_the_apps_answer_is_one_bit_and_bounded() -> None:
    assert read_answer(b'{"park": true}') is True
    assert read_answer(b'{"park": false}') is False
    for bad in (b'{"park": "yes"}', b"[]", b'{"stop": true}'):
        with pytest.raises(ValueError, match="park"):
            read_answer(bad)
    with pytest.raises(ValueError, match="bytes"):
        read_answer(b" " * (ANSWER_MAX + 1))
