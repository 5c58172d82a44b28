"""Jailed competitions of the real CLIs to a named winner: `magi run` from prep to ready
(implement, judge, deliberate, vote, tally, a review with a blocking finding, the fix, a
clean round), every turn of it a real CLI's against the scripted model. One with claude
and codex; one with all four (claude, codex, gemini, opencode), each a seat."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest
from real_helpers import BIN, KEYS, needs_clis, pointed

from graph_helpers import scratch_repo
from magi.model.run import Run, RunStatus
from magi.state.store import Store
from magi.testing.cli import invoke
from magi.testing.model_scripts import MARK, competition
from magi.testing.model_server import ScriptedModel

pytestmark = needs_clis
CLIS = {"cl": "claude", "cx": "codex", "gm": "gemini", "oc": "opencode"}
VERSIONS = {"claude": "2.1.197", "codex": "0.171.0", "gemini": "0.61.0", "opencode": "1.18.33"}
# What the CLIs try beside the model, refused by magi's egress proxy and recorded: codex's
# update check and telemetry, gemini's telemetry (Clearcut), opencode's model list and
# its release check.
ELSEWHERE = {
    "github.com:443",
    "api.github.com:443",
    "ab.chatgpt.com:443",
    "play.googleapis.com:443",
    "models.opencode.ai:443",
    "registry.npmjs.org:443",
}


def config(model: ScriptedModel, home: Path, ids: list[str]) -> str:
    lines = []
    for a in (pointed(CLIS[i], model.url, home) for i in ids):
        lines += ["[[agents]]", f'id = "{a.id}"', f'kind = "{a.kind}"']
        if a.model:
            lines.append(f'model = "{a.model}"')
        lines.append(f"args = {json.dumps(a.args)}")
        # HOME is magi's own (below): the jail gives each CLI its state under it.
        given = {k: v for k, v in a.env.items() if k != "HOME"}
        env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in given.items())
        lines += [f"env = {{ {env} }}", ""]
    seats = json.dumps(ids)
    lines += [
        "[roles]",
        f"implementers = {seats}",
        f"judges = {seats}",
        'reviewers = ["cl"]',
        "[graph]",
        f"candidates = {len(ids)}",
        f"judges = {len(ids)}",
        "deliberate_rounds = 1",
        "reviewers = 1",
        "review_rounds = 2",
    ]
    return "\n".join(lines) + "\n"


def compete(tmp_path: Path, place: Path, monkeypatch: pytest.MonkeyPatch, ids: list[str]) -> Run:
    repo = scratch_repo(tmp_path)
    home = place / "home"
    home.mkdir()
    with ScriptedModel(competition, KEYS) as model:
        (repo / "magi.toml").write_text(config(model, home, ids))
        monkeypatch.chdir(repo)
        env = {
            "MAGI_HOME": str(tmp_path / "magi-home"),
            "MAGI_CONFIG_DIR": str(tmp_path / "no-user-config"),
            "PATH": f"{BIN}:{os.environ['PATH']}",
            "HOME": str(home),  # outside /tmp: codex runs no command with its home there
        }
        res = invoke(["run", "--seed", "3", "note who wrote textstats"], env=env)
        # What each CLI sent, kept beside the run for a failure's post-mortem.
        sent = [dataclasses.asdict(r) for r in model.logged()]
        (tmp_path / "model-requests.json").write_text(json.dumps(sent, indent=1, default=str))
        assert res.exit_code == 0, res.output
        store = Store(tmp_path / "magi-home")
        return store.load_run(store.latest() or "")


def show(repo: Path, at: str) -> str:
    shown = subprocess.run(["git", "-C", str(repo), "show", at], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def turns(run: Run) -> list[str]:
    """Each turn in a line, for a failure's message (the requests are in model-requests.json)."""
    return [
        f"{t.node} {t.seat} {t.agent} {t.status} {t.duration_s}s reask={t.reask} "
        f"refused={t.refused} {(t.error or '')[:200]}"
        for t in run.turns
    ]


def check_won_and_reviewed(run: Run, repo: Path, ids: list[str]) -> None:
    assert run.status is RunStatus.READY, (run.reason, turns(run))
    assert run.tally is not None
    winner = run.candidate(run.tally.winner or "")
    author = run.agent_of(winner.seat)
    assert author in ids
    wrote = MARK[CLIS[author]]
    assert f"# scripted by {wrote}" in show(repo, f"{winner.head}:textstats.py")
    versions = {c.seat: run.seats[c.seat].cli_version for c in run.candidates}
    assert set(versions.values()) == {VERSIONS[CLIS[i]] for i in ids}, versions
    assert not any(c.rescued for c in run.candidates), "every CLI committed its own work"
    assert run.leaks == [], "nothing in the candidates names its author"
    # Each CLI's answers were read the first time, and every judge voted: a judge whose
    # answer is lost (opencode's read-only turns once were) leaves the panel short.
    assert [t.seat for t in run.turns if t.reask] == [], turns(run)
    judges = {t.seat for t in run.turns if t.node == "judge"}
    assert {t.seat for t in run.turns if t.node == "vote"} == judges, turns(run)
    assert {t.seat for t in run.turns if t.node == "deliberate"} == judges, turns(run)  # a split
    assert len(judges) == len(ids)
    # Every turn had a network of its own: the model on the host's loopback was reached
    # through magi's egress proxy and its bridge, and never refused; what the CLIs tried
    # beside it was, and was recorded.
    assert run.jail is not None
    assert run.jail.mode == "bwrap"
    refused = {host for t in run.turns for host in t.refused}
    assert not any(h.startswith(("127.0.0.1:", "[::1]:", "localhost:")) for h in refused)
    assert refused <= ELSEWHERE, refused
    # The review: a blocking finding in round 1, the fixer's commit, a clean round 2.
    assert run.review is not None
    rounds = run.review.rounds
    assert [len(r.findings) for r in rounds] == [1, 0], turns(run)
    fix = rounds[0].fix
    assert fix is not None, turns(run)
    assert fix.adopted == [rounds[0].findings[0].id], turns(run)
    assert "# (a full stop.)" in show(repo, f"{rounds[-1].head}:textstats.py")


def test_claude_and_codex_compete_jailed_to_a_named_winner(
    tmp_path: Path, place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = ["cl", "cx"]
    run = compete(tmp_path, place, monkeypatch, ids)
    check_won_and_reviewed(run, tmp_path / "repo", ids)


def test_all_four_clis_compete_jailed_to_a_named_winner(
    tmp_path: Path, place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = ["cl", "cx", "gm", "oc"]
    run = compete(tmp_path, place, monkeypatch, ids)
    check_won_and_reviewed(run, tmp_path / "repo", ids)
