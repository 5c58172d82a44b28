"""One jailed competition with the real claude and codex to a named winner: `magi run` from
prep to ready (implement, judge, deliberate, vote, tally, a review with a blocking finding,
the fix, a clean round), every turn of it a real CLI's against the scripted model."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from real_helpers import BIN, KEYS, needs_clis, pointed

from graph_helpers import scratch_repo
from magi.model.run import RunStatus
from magi.state.store import Store
from magi.testing.cli import invoke
from magi.testing.model_scripts import MARK, competition
from magi.testing.model_server import ScriptedModel

pytestmark = needs_clis


def test_claude_and_codex_compete_jailed_to_a_named_winner(
    tmp_path: Path, place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = scratch_repo(tmp_path)
    home = place / "home"
    home.mkdir()
    with ScriptedModel(competition, KEYS) as model:
        agents = [pointed(k, model.url, home) for k in ("claude", "codex")]
        lines = []
        for a in agents:
            lines += ["[[agents]]", f'id = "{a.id}"', f'kind = "{a.kind}"']
            lines.append(f"args = {json.dumps(a.args)}")
            # HOME is magi's own (below): the jail gives each CLI its state under it.
            given = {k: v for k, v in a.env.items() if k != "HOME"}
            env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in given.items())
            lines += [f"env = {{ {env} }}", ""]
        lines += [
            "[roles]",
            'implementers = ["cl", "cx"]',
            'judges = ["cl", "cx"]',
            'reviewers = ["cl"]',
            "[graph]",
            "candidates = 2",
            "judges = 2",
            "deliberate_rounds = 1",
            "reviewers = 1",
            "review_rounds = 2",
        ]
        (repo / "magi.toml").write_text("\n".join(lines) + "\n")
        monkeypatch.chdir(repo)
        env = {
            "MAGI_HOME": str(tmp_path / "magi-home"),
            "MAGI_CONFIG_DIR": str(tmp_path / "no-user-config"),
            "PATH": f"{BIN}:{os.environ['PATH']}",
            "HOME": str(home),  # outside /tmp: codex runs no command with its home there
        }
        res = invoke(["run", "--seed", "3", "note who wrote textstats"], env=env)
        assert res.exit_code == 0, res.output
        store = Store(tmp_path / "magi-home")
        run = store.load_run(store.latest() or "")
    assert run.status is RunStatus.READY, run.reason
    assert run.tally is not None
    winner = run.candidate(run.tally.winner or "")
    author = run.agent_of(winner.seat)
    clis = {"cl": "claude", "cx": "codex", "gm": "gemini", "oc": "opencode"}
    assert author in clis
    wrote = MARK[clis[author]]
    at = f"{winner.head}:textstats.py"
    shown = subprocess.run(["git", "-C", str(repo), "show", at], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert f"# scripted by {wrote}" in shown.stdout
    versions = {run.seats[c.seat].cli_version for c in run.candidates}
    assert versions == {"2.1.197", "0.171.0"}
    assert not any(c.rescued for c in run.candidates), "both CLIs committed their own work"
    assert run.leaks == [], "nothing in the candidates names its author"
    # Every turn had a network of its own: the model on the host's loopback was reached
    # through magi's egress proxy and its bridge, and never refused; what the CLIs tried
    # beside it (codex's update check and telemetry) was, and was recorded.
    assert run.jail is not None
    assert run.jail.mode == "bwrap"
    refused = {host for t in run.turns for host in t.refused}
    assert not any(h.startswith(("127.0.0.1:", "[::1]:", "localhost:")) for h in refused)
    assert refused <= {"github.com:443", "api.github.com:443", "ab.chatgpt.com:443"}, refused
    # The review: a blocking finding in round 1, the fixer's commit, a clean round 2.
    assert run.review is not None
    rounds = run.review.rounds
    assert [len(r.findings) for r in rounds] == [1, 0]
    fix = rounds[0].fix
    assert fix is not None
    assert fix.adopted == [rounds[0].findings[0].id]
    head = run.review.rounds[-1].head
    fixed = subprocess.run(
        ["git", "-C", str(repo), "show", f"{head}:textstats.py"], capture_output=True, text=True
    )
    assert "# (a full stop.)" in fixed.stdout
