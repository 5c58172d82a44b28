"""The jail's decision: probed once per process, however many seats reach it at once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from budget_helpers import seat_context
from magi.model.config import Config
from magi.sandbox.bwrap import Decision
from magi.seats import jailing


def test_seats_reaching_the_jail_at_once_share_one_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wave's seats all ask for the jail as the wave starts: one probes, the others wait
    for its answer instead of each starting a bwrap of its own."""
    cfg = Config.model_validate({"agents": [{"id": "a", "kind": "command", "command": ["true"]}]})
    sctx = seat_context(tmp_path, cfg, {})
    probes: list[str] = []
    second: list[threading.Thread] = []
    got: list[Decision] = []

    def decide(_cfg: object) -> Decision:
        probes.append(threading.current_thread().name)
        if not second:  # a second seat arrives while this one is still probing
            t = threading.Thread(target=lambda: got.append(jailing.decision(sctx)), name="seat-2")
            second.append(t)
            t.start()
            t.join(0.5)  # with the lock it waits for this probe; without, it probes itself
        return Decision("off", "auto", "probed")

    monkeypatch.setattr(jailing, "decide", decide)
    first = jailing.decision(sctx)
    second[0].join()
    assert probes == ["MainThread"]
    assert got == [first]
    assert sctx.record.jail is not None
    assert sctx.record.jail.reason == "probed"


def test_an_agents_allowlist_holds_its_kinds_hosts_and_the_base_urls_it_is_given() -> None:
    """A base URL counts when the agent is given it (``env``, or ``pass_env`` from magi's
    environment); one in magi's environment that the agent never sees allows nothing."""
    cfg = Config.model_validate(
        {
            "agents": [
                {"id": "c", "kind": "claude", "pass_env": ["ANTHROPIC_BASE_URL"]},
                {"id": "x", "kind": "command", "command": ["true"]},
            ],
            "sandbox": {"egress": ["pypi.org:8443"]},
            "verify": {"egress": ["files.example"]},
        }
    )
    environ = {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:8080",
        "OPENAI_BASE_URL": "https://gw.example/v1",
    }
    claude = sorted(map(str, jailing.agent_allowlist(cfg, "c", environ)))
    assert claude == [
        "127.0.0.1:8080",
        "api.anthropic.com",
        "claude.ai",
        "console.anthropic.com",
        "platform.claude.com",
        "pypi.org:8443",
    ]
    assert sorted(map(str, jailing.agent_allowlist(cfg, "x", environ))) == ["pypi.org:8443"]
    assert sorted(map(str, jailing.agent_allowlist(cfg, "", environ))) == ["files.example"]
