"""The compete job's park question and publish's hand-on of the channel to the next stage."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from github_helpers import SEAL
from magi.action.agents_job.park import AppPark, from_environ
from magi.action.env import ActionEnv
from magi.action.publish_job.publish_fork import _dispatch_join
from magi.core.person.park import HEADER, WHY, Channel, channel
from magi.core.threads.markers import Seal
from magi.github.models import Repo
from magi.model.config import Config
from magi.testing.github import FakeGitHub
from record_helpers import run as fixture_run

REPO = Repo(owner="octo", name="widgets")
RUN = "20261204-223000-4f2a"


def test_publish_forwards_only_this_runs_channel_under_the_apps_key() -> None:
    good = channel("https://magi.example.com", SEAL, REPO.full_name, RUN)
    env = ActionEnv(repo=REPO, marker_seal=SEAL, park=good.to_input())
    assert env.park_input(RUN) == {"park": good.to_input()}
    assert env.park_input("20261204-223000-4f2b") == {}, "another run's is not forwarded"
    forged = channel("https://magi.example.com", Seal(b"x" * 32), REPO.full_name, RUN)
    forged_env = ActionEnv(repo=REPO, marker_seal=SEAL, park=forged.to_input())
    assert forged_env.park_input(RUN) == {}
    assert ActionEnv(repo=REPO, marker_seal=SEAL, park="{").park_input(RUN) == {}
    assert ActionEnv(repo=REPO, marker_seal=SEAL).park_input(RUN) == {}


class _App(BaseHTTPRequestHandler):
    """A stand-in receiver: answers what the test sets, records the key it was asked with."""

    answer: bytes = b'{"park": false}'
    status: int = 200
    location: str = ""
    keys: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        type(self).keys.append(self.headers.get(HEADER))
        self.send_response(self.status)
        if self.location:
            self.send_header("Location", self.location)
        self.end_headers()
        self.wfile.write(self.answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def app() -> Iterator[tuple[type[_App], str]]:
    handler = type("App", (_App,), {"keys": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _asker(base: str, notes: list[tuple[str, str]]) -> AppPark:
    ch = channel(base, SEAL, REPO.full_name, RUN)
    return AppPark(ch, RUN, lambda m, level: notes.append((m, level)))


def test_the_job_asks_with_the_key_and_parks_on_a_yes(app) -> None:
    handler, base = app
    notes: list[tuple[str, str]] = []
    ask = _asker(base, notes)
    assert ask(RUN) is None
    handler.answer = b'{"park": true}'
    assert ask(RUN) == WHY
    assert ask("20261204-223000-4f2b") is None, "the channel is this run's alone"
    assert handler.keys == [ask.channel.key] * 2
    assert notes == []


@pytest.mark.parametrize(
    ("status", "answer", "location", "said"),
    [
        (500, b"oops", "", "500"),
        (200, b'{"park": "yes"}', "", "park"),
        (200, b"x" * 5000, "", "bytes"),
        (302, b"", "http://127.0.0.1:9/elsewhere", "302"),
    ],
)
def test_an_app_that_does_not_answer_is_said_once_and_the_run_goes_on(
    app, status, answer, location, said
) -> None:
    handler, base = app
    handler.status, handler.answer, handler.location = status, answer, location
    notes: list[tuple[str, str]] = []
    ask = _asker(base, notes)
    assert ask(RUN) is None
    assert ask(RUN) is None
    assert len(notes) == 1, "said once, not at every boundary"
    assert said in notes[0][0]
    assert notes[0][1] == "warn"
    assert len(handler.keys) == 2, "a redirect is not followed with the key"


def test_the_channel_comes_from_the_dispatch_and_only_for_this_run() -> None:
    notes: list[tuple[str, str]] = []
    good = channel("https://magi.example.com", SEAL, REPO.full_name, RUN).to_input()

    def note(m: str, level: str) -> None:
        notes.append((m, level))

    got = from_environ({"MAGI_PARK": good}, REPO.full_name, RUN, note)
    assert got is not None
    assert isinstance(got.channel, Channel)
    assert from_environ({}, REPO.full_name, RUN, note) is None
    assert from_environ({"MAGI_PARK": good}, REPO.full_name, None, note) is None
    assert notes == []
    assert from_environ({"MAGI_PARK": good}, REPO.full_name, "20261204-223000-4f2b", note) is None
    (said,) = notes
    assert "not for run" in said[0]
    assert "`/magi stop now` cancels it" in said[0]
    assert json.loads(good)["key"] not in said[0], "the key is not logged"


def test_a_forked_waves_join_is_dispatched_with_the_channel_too() -> None:
    """The join (and every stage after it) must hear a `/magi stop` as the fork's seat jobs'
    predecessor did; a seat job does not ask, so without it a stop would be lost."""
    fake = FakeGitHub()
    good = channel("https://magi.example.com", SEAL, REPO.full_name, RUN).to_input()
    env = ActionEnv(repo=REPO, marker_seal=SEAL, park=good, ref_name="main")
    run = fixture_run(RUN)
    asyncio.run(_dispatch_join(fake, env, run, 7, Config()))
    (sent,) = fake.world(REPO).dispatches
    assert sent["inputs"]["park"] == good


class _Garbled(_App):
    """An answer that is no HTTP at all."""

    def do_GET(self) -> None:
        self.wfile.write(b"NOT HTTP\r\n\r\n")


def test_an_answer_that_is_not_http_or_is_too_deep_is_said_and_the_run_goes_on(app) -> None:
    handler, base = app
    handler.answer = b"[" * 3000  # under the size bound; json's recursion gives up on it
    notes: list[tuple[str, str]] = []
    assert _asker(base, notes)(RUN) is None
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Garbled)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert _asker(f"http://127.0.0.1:{server.server_address[1]}", notes)(RUN) is None
    finally:
        server.shutdown()
        server.server_close()
    assert [level for _, level in notes] == ["warn", "warn"]


def test_an_answer_that_never_completes_is_given_up_on_in_all(monkeypatch) -> None:
    """The deadline is for the whole question, not per read (an App dripping its answer)."""
    import magi.action.agents_job.park as park

    release = threading.Event()

    def stuck(_channel: Channel) -> bool:
        release.wait()  # never set before the deadline: the question is still out
        return True

    monkeypatch.setattr(park, "_ask", stuck)
    monkeypatch.setattr(park, "TIMEOUT", 0.05)
    notes: list[tuple[str, str]] = []
    try:
        assert _asker("https://magi.example.com", notes)(RUN) is None
    finally:
        release.set()
    (said,) = notes
    assert "no whole answer within" in said[0]
