"""``make bench``: what each seat's own CLI state adds to a jailed turn.

A claude stand-in answers one jailed turn through ``magi.seats.ask`` (the path every seat
takes), on a home that holds a claude login and a settings file beside it. Alternated in
pairs (A B B A): the turn as it runs, laying the seat's copy with the login before and
taking it out after (``magi.sandbox.seat_state``), against the same turn with no copy at
all (the jail's scratch home alone). Reported as a ratio of the medians and in
milliseconds, no goal: it is what keeping one seat's instructions from the next costs.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

from budget_helpers import seat_context  # noqa: E402  (the tests' record and context)
from magi.agents.registry import build_agent  # noqa: E402
from magi.model.config import Config, Sandbox  # noqa: E402
from magi.sandbox import seat_state  # noqa: E402
from magi.sandbox.bwrap import decide  # noqa: E402
from magi.seats import (  # noqa: E402
    ask,
    ensure_seat,
    jailing,
)
from magi.testing.standins import write_standin  # noqa: E402

PAIRS = 15


def _world(base: Path):  # type: ignore[no-untyped-def]
    home = base / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text('{"token": "t"}')
    (home / ".claude" / "settings.json").write_text('{"hooks": {}}')
    (home / ".claude.json").write_text(json.dumps({"userID": "u", "projects": {}}))
    tree = base / "tree"
    tree.mkdir()
    s = write_standin(base / "bin", "claude", reply="done")
    cfg = Config.model_validate(
        {
            "agents": [s.agent_config("c").model_dump()],
            "sandbox": {"mode": "bwrap", "state": [str(s.path.parent)]},
        }
    )
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    sctx = seat_context(base / "magi", cfg, {"c": build_agent(s.agent_config("c"))}, environ=env)
    ensure_seat(sctx, "judge-1", "c")
    return sctx, tree


def _turn(sctx, tree: Path) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    result = ask(sctx, seat="judge-1", node="judge", prompt="go", cwd=tree, allow_write=False)
    took = time.perf_counter() - t0
    if not result.ok:
        raise SystemExit(f"bench: the turn failed: {result.error}")
    return took


def main() -> None:
    if not decide(Sandbox()).jailed:
        raise SystemExit("bench: bubblewrap is not usable here; the seat state is the jail's")
    real_lay = jailing.lay
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        sctx, tree = _world(Path(tmp))
        _turn(sctx, tree)  # warm: the copy made, the interpreter's caches
        on: list[float] = []
        off: list[float] = []
        for i in range(PAIRS):
            for with_state in (True, False) if i % 2 == 0 else (False, True):
                jailing.lay = real_lay if with_state else lambda *a, **k: seat_state.Laid()
                (on if with_state else off).append(_turn(sctx, tree))
        jailing.lay = real_lay
    a, b = statistics.median(on), statistics.median(off)
    added = (a - b) * 1000
    print(f"seat state: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {PAIRS} pairs, A B B A")
    print(
        f"  a jailed turn with its own CLI copy vs none: {a * 1000:.1f} ms vs {b * 1000:.1f} ms,"
        f" {a / b:.3f}x, {added:+.1f} ms a turn (reported)"
    )


if __name__ == "__main__":
    main()
