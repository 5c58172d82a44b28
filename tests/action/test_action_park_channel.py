"""The compete job's park question and publish's hand-on of the channel to the next stage."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from github_helpers import SEAL
from magi.action.agents_job.park import AppPark, from_environ
from magi.action.env import ActionEnv
from magi.action.publish_job.publish import _park_input
from magi.core.person.park import HEADER, WHY, Channel, channel
from magi.core.threads.markers import Seal
from magi.github.models import Repo

REPO = Repo(owner="octo", name="widgets")
RUN = "20261204-223000-4f2a"


def test_publish_forwards_only_this_runs_channel_under_the_apps_key() -> None:
    good = channel("https://magi.example.com", SEAL, REPO.full_name, RUN)
    env = ActionEnv(repo=REPO, marker_seal=SEAL, park=good.to_input())
    assert _park_input(env, RUN) == {"park": good.to_input()}
    assert _park_input(env, "20261204-223000-4f2b") == {}, "another run's is not forwarded"
    forged = channel("https://magi.example.com", Seal(b"x" * 32), REPO.full_name, RUN)
    assert _park_input(ActionEnv(repo=REPO, marker_seal=SEAL, park=forged.to_input()), RUN) == {}
    assert _park_input(ActionEnv(repo=REPO, marker_seal=SEAL, park="{"), RUN) == {}
    assert _park_input(ActionEnv(repo=REPO, marker_seal=SEAL), RUN) == {}


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
    assert "cancel this run instead" in said[0]
    assert json.loads(good)["key"] not in said[0], "the key is not logged"
