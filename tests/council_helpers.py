"""Building councils for tests: a config of N seats, a record, and a scripted engine around it."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from magi.council.modes import run_council
from magi.council.rounds import Council
from magi.council.setup import new_council
from magi.demo.council_scripted import ScriptedAsker
from magi.model.config import Config
from magi.state.council import CouncilRun

NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
AGENT_IDS = ["opus", "codex", "gemini", "oc", "grok", "kimi", "qwen", "llama", "mistral"]


def config(
    seats: int = 3,
    *,
    weights: Sequence[int] | None = None,
    threshold: float = 0.5,
    rounds: int = 2,
    veto: str | None = None,
    personalities: Mapping[int, str] | None = None,
    clerk: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> Config:
    ids = AGENT_IDS[:seats]
    agents = [{"id": a, "kind": "command", "command": ["true"]} for a in ids]
    if clerk:
        agents.append({"id": "clerk-agent", "kind": "command", "command": ["true"]})
    panel = [
        {
            "agent": a,
            "weight": (weights or [1] * seats)[i],
            "veto": a == veto,
            **({"personality": personalities[i]} if personalities and i in personalities else {}),
        }
        for i, a in enumerate(ids)
    ]
    council: dict[str, Any] = {
        "panels": {"default": {"threshold": threshold, "rounds": rounds, "seats": panel}},
        **(extra or {}),
    }
    if clerk:
        council["clerk"] = "clerk-agent"
    return Config.model_validate({"agents": agents, "council": council})


def record(
    cfg: Config,
    question: str = "Which config format: TOML, YAML or JSON?",
    *,
    mode: str = "decision",
    missing: Mapping[str, str] | None = None,
    evidence: Sequence[tuple[str, str, str]] = (),
    risk: str | None = None,
) -> tuple[CouncilRun, list[Any]]:
    return new_council(
        question=question,
        source="test",
        mode=mode,
        config=cfg,
        panel=None,
        missing=missing or {},
        evidence=evidence,
        now=NOW,
        rand=random.Random(0),
        risk=risk,
    )


def run(
    personas: Mapping[str, str], cfg: Config | None = None, **kw: Any
) -> tuple[CouncilRun, ScriptedAsker]:
    """Run a council of ``personas`` (by seat) to its verdict, in-process."""
    cfg = cfg or config(len([s for s in personas if s.startswith("sage")]))
    rec, bodies = record(cfg, **kw)
    asker = ScriptedAsker(personas)
    if rec.verdict is None:
        run_council(Council(rec, asker, evidence=bodies))
    return rec, asker


def shown(md: str) -> str:
    """What a reader sees of a comment: GitHub's renderer, tags dropped, entities read."""
    import html
    import re

    import cmarkgfm

    rendered = cmarkgfm.github_flavored_markdown_to_html(md)
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


def on_github(tmp_path, body: str, asker, *, head: str | None = None, seats: int = 3):
    """``/magi council`` as the Action runs it: the task job's files for comment 42 on #1
    (a pull request with ``head``, else an issue), then the council job. (inputs, artifact
    directory, record)."""
    import json

    from github_helpers import REPO
    from magi.action.agents_job.council import convene, read_inputs
    from magi.state.store import Store

    where = tmp_path / "in"
    where.mkdir()
    url = f"https://api.github.com/repos/{REPO.full_name}/issues/1"
    (where / "comment.json").write_text(json.dumps({"id": 42, "issue_url": url, "body": body}))
    (where / "issue.json").write_text(json.dumps({"number": 1, "title": "t"}))
    if head is not None:
        pull = {"number": 1, "title": "x", "head": {"ref": "x", "sha": head}}
        (where / "pull.json").write_text(json.dumps(pull))
    inputs = read_inputs(where, issue=1, comment=42, command="council")
    out = tmp_path / "out"
    rec = convene(
        cwd=tmp_path,
        inputs=inputs,
        store=Store(tmp_path / "home"),
        out=out,
        config=config(seats),
        environ={},
        asker=asker,
    )
    return inputs, out, rec


def publish_on(fake, inputs, out):
    """The publish-council job against the GitHub double; what it published."""
    import asyncio

    from github_helpers import REPO, SEAL
    from magi.action.env import ActionEnv
    from magi.action.publish_job.publish_council import publish_council, read_council
    from magi.testing.github import APP_LOGIN

    env = ActionEnv(repo=REPO, app_login=APP_LOGIN, run_id="9", marker_seal=SEAL)
    rec = read_council(out, inputs)
    return asyncio.run(publish_council(port=fake, env=env, inputs=inputs, rec=rec))
