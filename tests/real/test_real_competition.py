"""One jailed competition with the real claude and codex to a named winner: `magi run` from
prep to ready (implement, judge, deliberate, vote, tally, a review with a blocking finding,
the fix, a clean round), every turn of it a real CLI's against the scripted model."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from real_helpers import BIN, KEYS, agent_config, needs_clis, shell

from graph_helpers import scratch_repo
from magi.model.run import RunStatus
from magi.state.store import Store
from magi.testing.cli import invoke
from magi.testing.model_server import ScriptedModel
from magi.testing.model_wire import Asked, Reply

pytestmark = needs_clis
LABEL = re.compile(r"^<<<MATERIAL \S+ ([A-Z])\b", re.M)
CHANGE = (
    "printf '\\n# scripted by {who}\\n' >> textstats.py && git add -A"
    " && git -c user.name=seat -c user.email=seat@localhost commit -qm 'the scripted change'"
    " && echo committed"
)


FIXED = (
    "printf '# (a full stop.)\n' >> textstats.py && git add -A"
    " && git -c user.name=seat -c user.email=seat@localhost commit -qm 'the fix' && echo fixed"
)


def _json(obj: object) -> Reply:
    return Reply(text=f"My answer.\n\n```json\n{json.dumps(obj)}\n```\n")


FOUND = re.compile(r"^### (\S+) \(blocking\)", re.M)
FINDING = {
    "severity": "blocking",
    "title": "Say which CLI wrote the note",
    "file": "textstats.py",
    "detail": "The note should end with a full stop.",
}


def _cli(asked: Asked) -> str:
    """Which CLI asks, by the shell tool it offers."""
    names = {"Bash": "claude", "bash": "opencode", "run_shell_command": "gemini"}
    return next((cli for tool, cli in names.items() if tool in asked.tools), "codex")


# What each CLI writes in its change: a mark that names no vendor (a vendor's name in a
# patch is an author-identifying term, which the judges' leak scan warns about).
MARK = {"claude": "one", "codex": "two", "gemini": "three", "opencode": "four"}


def competition(asked: Asked) -> Reply:
    """What each of magi's prompts wants, read from the newest prompt; labels from all.
    The first review round finds one blocking thing; the fixer commits a fix for it."""
    role, text = asked.last
    prompt = asked.last_user
    if "# Review findings to address" in prompt:
        if role == "tool":
            return _json({"adopted": FOUND.findall(prompt), "rejected": []})
        return shell(asked, FIXED)
    if role == "tool":
        return Reply(text=f"Changed textstats.py: {text.strip()[-40:]}")
    labels = sorted(set(LABEL.findall("\n".join(t for _, t in asked.turns))))
    if "# Your final vote" in prompt:
        return _json({"vote": labels[0], "rationale": "the first, as argued"})
    if "# Deliberation, round" in prompt:
        return _json({"ranking": labels, "argument": f"{labels[0]} reads best."})
    if "# Blind judging" in prompt:
        return _json({"ranking": labels, "rationale": "both pass; the first reads best"})
    if "# Code review, round 1 of" in prompt:
        return _json({"findings": [FINDING]})
    if "# Code review, round" in prompt:
        return _json({"findings": []})
    return shell(asked, CHANGE.format(who=MARK[_cli(asked)]))


def test_claude_and_codex_compete_jailed_to_a_named_winner(
    tmp_path: Path, place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = scratch_repo(tmp_path)
    home = place / "home"
    home.mkdir()
    with ScriptedModel(competition, KEYS) as model:
        agents = [agent_config(k, model, home) for k in ("claude", "codex")]
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
