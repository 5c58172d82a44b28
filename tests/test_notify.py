"""[notify] command: told when a run ends or is held, an argv never a shell, failures ignored."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from graph_helpers import config, start
from magi.config.load import load_config_text
from magi.core.notify import argv
from magi.errors import ConfigError
from magi.notify import send

RECORDER = (
    "import json, os, sys; "
    "open(os.environ['NOTIFY_OUT'], 'a').write(json.dumps({'argv': sys.argv[1:], "
    "'env': sorted(k for k in os.environ if 'TOKEN' in k)}) + '\\n')"
)


def test_a_summary_is_one_argument_whatever_it_holds() -> None:
    """`; rm -rf ~`, quotes, braces and newlines stay inside the one word they replace."""
    summary = "done; rm -rf ~ && echo '{run}' \"$HOME\"\n\u202enext line"
    out = argv(
        ["ntfy", "publish", "magi", "{summary} — {url}", "{event}:{run}"],
        {
            "summary": summary,
            "run": "20261201-000000-abcd",
            "url": "http://127.0.0.1:8377",
            "event": "ended",
        },
    )
    assert len(out) == 5
    assert out[3] == "done; rm -rf ~ && echo '{run}' \"$HOME\" next line — http://127.0.0.1:8377"
    assert out[4] == "ended:20261201-000000-abcd"


def test_an_unknown_placeholder_is_a_config_error() -> None:
    """A typo like {sumary} would go out verbatim: refused, naming what magi fills."""
    with pytest.raises(ConfigError, match=r"unknown placeholder.*sumary.*\{summary\}"):
        load_config_text('[notify]\ncommand = ["ntfy", "{sumary}"]\n')
    assert load_config_text('[notify]\ncommand = ["ntfy", "{summary}"]\n').config.notify.command


def test_a_failing_or_missing_notifier_says_why_and_raises_nothing(tmp_path: Path) -> None:
    assert "exited 3: no webhook" in (
        send([sys.executable, "-c", "import sys; sys.stderr.write('no webhook'); sys.exit(3)"], {})
        or ""
    )
    assert "is not on PATH" in (send(["no-such-notifier-magi"], {}) or "")


def test_the_notifier_gets_no_token(tmp_path: Path) -> None:
    out = tmp_path / "n.jsonl"
    env = {**os.environ, "NOTIFY_OUT": str(out), "GITHUB_TOKEN": "x", "MAGI_GITHUB_TOKEN": "y"}
    assert send([sys.executable, "-c", RECORDER, "{run}"], {"run": "r"}, env) is None
    (seen,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert seen == {"argv": ["r"], "env": []}


def test_a_run_that_ends_tells_the_notifier_and_a_broken_one_is_recorded(env, tmp_path):
    """The run's end runs the argv with its id and event; a notifier that fails is a warning
    in the record and the run ends as it would have."""
    repo, home, sd = env
    out = tmp_path / "told.jsonl"
    cfg = config(sd, {"a1": "right"}, judges={})
    told = cfg.model_copy(
        update={
            "notify": cfg.notify.model_copy(
                update={
                    "command": [sys.executable, "-c", RECORDER, "{event}", "{run}", "{summary}"]
                }
            )
        }
    )
    os.environ["NOTIFY_OUT"] = str(out)
    try:
        run = start(repo, home, told)
    finally:
        del os.environ["NOTIFY_OUT"]
    (seen,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert seen["argv"][:2] == ["ended", run.id]
    assert seen["argv"][2].startswith(f"magi run {run.id} {run.status.value}")
    broken = cfg.model_copy(
        update={"notify": cfg.notify.model_copy(update={"command": ["no-such-notifier-magi"]})}
    )
    again = start(repo, home, broken)
    assert again.status is run.status
    assert any(e.node == "notify" and "not on PATH" in e.message for e in again.events)


def test_on_a_runner_publish_tells_the_repositorys_notifier_never_the_artifacts(tmp_path):
    """The agents job tells nobody (a config command beside agents); publish does, with the
    checkout's own command and the PR's address, never a command the artifact names."""
    from types import SimpleNamespace

    from magi.action.cli import _notify_published

    out = tmp_path / "n.jsonl"
    (tmp_path / "magi.toml").write_text(
        "[notify]\ncommand = "
        + json.dumps([sys.executable, "-c", RECORDER, "{event}", "{url}"])
        + "\n"
    )
    hostile = SimpleNamespace(
        id="20261201-000000-abcd", reason=None, status=SimpleNamespace(value="held")
    )
    env = SimpleNamespace(repo_url="https://github.com/o/r")
    os.environ["NOTIFY_OUT"] = str(out)
    try:
        _notify_published(tmp_path, env, hostile, 7, 3)  # type: ignore[arg-type]
    finally:
        del os.environ["NOTIFY_OUT"]
    (seen,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert seen["argv"] == ["held", "https://github.com/o/r/pull/7"]


def test_the_agents_job_tells_no_notifier(env, tmp_path):
    """GITHUB_ACTIONS=true (the agents job): no notifier runs there."""
    import random

    from graph_helpers import NOW
    from magi import engine
    from magi.git import Git
    from magi.state.store import Store

    repo, home, sd = env
    out = tmp_path / "n.jsonl"
    cfg = config(sd, {"a1": "right"}, judges={})
    command = [sys.executable, "-c", RECORDER]
    told = cfg.model_copy(update={"notify": cfg.notify.model_copy(update={"command": command})})
    done = engine.start(
        task="fix textstats",
        source="test",
        config=told,
        git=Git.discover(repo),
        store=Store(home),
        environ={**os.environ, "GITHUB_ACTIONS": "true", "NOTIFY_OUT": str(out)},
        now=NOW,
        rng=random.Random(1),
        pipeline=[],
    )
    assert done.run.id
    assert not out.exists()
    assert not [e for e in done.run.events if e.node == "notify"]
