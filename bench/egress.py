"""``make bench``: what the jail's egress proxy adds to a turn.

One jailed turn, as a seat's goes through ``CliAgent``: a command agent (magi's interpreter
running a script) makes one HTTP request to a model stub on the host's loopback, named by
its base URL, and prints the answer. The same turn twice: with the host's network kept (the
jail before the proxy), and with a network of its own, whose way out is a proxy opened and
closed for the turn and the bridge started inside the jail ahead of the agent. Reported: the
median wall time of each, the ratio, and the milliseconds added (goal: at most +50 ms).
"""

from __future__ import annotations

import http.server
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from magi.agents.base import TurnRequest, TurnStatus
from magi.agents.registry import build_agent
from magi.core.seats.egress import allowlist
from magi.model.config import AgentConfig, Sandbox
from magi.sandbox import egress
from magi.sandbox.bwrap import decide, seat_spec

REPS = 15
GOAL_MS = 50.0
AGENT = """
import os, urllib.request
print(urllib.request.urlopen(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages").read().decode())
"""


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def _turn(agent_cfg: AgentConfig, tree: Path, proxied: bool, base: str) -> float:
    decision = decide(Sandbox(mode="bwrap"))
    jail = seat_spec(decision, cwd=tree, writable=True, hide=[], environ={})
    assert jail is not None  # decide() raised otherwise
    started = time.perf_counter()
    if proxied:  # what seat_jail and ask do around a turn: open, run, close
        jail = replace(jail, net=egress.open_net(allowlist(environ={"ANTHROPIC_BASE_URL": base})))
    request = TurnRequest(
        seat="impl-A", prompt="go", cwd=tree, allow_write=True, timeout=60, jail=jail
    )
    result = build_agent(agent_cfg).run_turn(request)
    if jail.net is not None:
        egress.close(jail.net.socket)
    took = time.perf_counter() - started
    assert result.status is TurnStatus.OK, result
    assert result.text == "ok", result
    return took * 1000


def main() -> int:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory(prefix="magi-bench-egress-") as tmp:
        script = Path(tmp) / "agent" / "agent.py"
        script.parent.mkdir()
        script.write_text(AGENT)
        tree = Path(tmp) / "tree"
        tree.mkdir()
        cfg = AgentConfig.model_validate(
            {
                "id": "a",
                "kind": "command",
                "command": [sys.executable, str(script)],
                "env": {"ANTHROPIC_BASE_URL": base},
            }
        )
        _turn(cfg, tree, True, base)  # warm: imports, the page cache
        plain, proxied = [], []
        for _ in range(REPS):  # interleaved, so a busy moment costs both alike
            plain.append(_turn(cfg, tree, False, base))
            proxied.append(_turn(cfg, tree, True, base))
    server.shutdown()
    a, b = statistics.median(plain), statistics.median(proxied)
    print(
        f"magi egress bench, {datetime.now(UTC):%Y-%m-%d}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}, one jailed turn with one request, median of {REPS}"
    )
    print(f"  {'turn, host network':<32} {a:7.1f} ms")
    print(f"  {'turn, own network + proxy':<32} {b:7.1f} ms")
    verdict = "ok" if b - a <= GOAL_MS else "MISSED"
    print(
        f"  {'added by the proxy':<32} {b - a:+7.1f} ms  ({b / a:.2f}x)"
        f"{'':<6} goal <= +{GOAL_MS:.0f} ms  {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
