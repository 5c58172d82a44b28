"""[notify] command: told when a run ends or is held, an argv never a shell, failures ignored."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from graph_helpers import config, start
from magi.config.load import load_config_text
from magi.core.person.notify import argv
from magi.errors import ConfigError
from magi.sandbox.notify import send

# A notifier that records its argv (after the file it writes to) and which secret-looking
# names its environment holds. It is given the file as an argument: the environment a
# notifier gets is an allowlist.
RECORDER = (
    "import json, os, sys; "
    "open(sys.argv[1], 'a').write(json.dumps({'argv': sys.argv[2:], "
    "'env': sorted(k for k in os.environ if 'TOKEN' in k or 'KEY' in k)}) + '\\n')"
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
    env = {**os.environ, "GITHUB_TOKEN": "x", "MAGI_GITHUB_TOKEN": "y"}
    assert send([sys.executable, "-c", RECORDER, str(out), "{run}"], {"run": "r"}, env) is None
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
                    "command": [
                        sys.executable,
                        "-c",
                        RECORDER,
                        str(out),
                        "{event}",
                        "{run}",
                        "{summary}",
                    ]
                }
            )
        }
    )
    run = start(repo, home, told)
    (seen,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert seen["argv"][:2] == ["ended", run.id]
    assert seen["argv"][2].startswith(f"magi run {run.id} {run.status.value}")
    broken = cfg.model_copy(
        update={"notify": cfg.notify.model_copy(update={"command": ["no-such-notifier-magi"]})}
    )
    again = start(repo, home, broken)
    assert again.status is run.status
    assert any(e.node == "notify" and "not on PATH" in e.message for e in again.events)


def test_on_a_runner_the_notify_step_tells_the_repositorys_notifier_never_the_artifacts(
    env, tmp_path, monkeypatch
):
    """The agents job tells nobody; `magi action notify`, a step of its own after publish
    holding no token and no key, runs the checkout's own command with the PR's address,
    never a command the artifact names."""
    from graph_helpers import PIPELINE
    from magi.action.artifact import write_artifact
    from magi.state.store import Store
    from magi.testing.cli import invoke

    repo, home, sd = env
    out = tmp_path / "told.jsonl"
    planted = tmp_path / "planted.jsonl"
    cfg = config(sd, {"a1": "right"}, judges={})
    run = start(repo, home, cfg, pipeline=PIPELINE[:1])
    # What the agents job's record says: a command planted where agents ran.
    bad = [sys.executable, "-c", RECORDER, str(planted), "{run}"]
    planted_cfg = run.config.model_copy(
        update={"notify": run.config.notify.model_copy(update={"command": bad})}
    )
    run = run.model_copy(update={"config": planted_cfg})
    artifact = tmp_path / "artifact"
    write_artifact(run, Store(home), artifact, {}, 3)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    good = [sys.executable, "-c", RECORDER, str(out), "{event}", "{url}"]
    (checkout / "magi.toml").write_text("[notify]\ncommand = " + json.dumps(good) + "\n")
    monkeypatch.chdir(checkout)
    env_ = {
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_SERVER_URL": "https://github.com",
        "MAGI_GITHUB_TOKEN": None,
    }
    done = invoke(
        ["action", "notify", "--issue", "3", "--artifact-dir", str(artifact), "--pr", "7"],
        env=env_,
    )
    assert done.exit_code == 0, done.output
    (seen,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert seen["argv"] == ["ended", "https://github.com/o/r/pull/7"]
    assert not planted.exists()


def test_the_notify_step_refuses_a_token_or_a_key():
    """run.sh: the step that runs the repository's notifier is given nothing secret."""
    script = (Path(__file__).parents[2] / "action" / "run.sh").read_text()
    block = script[script.index("  notify)") : script.index("  publish)")]
    assert "MAGI_GITHUB_TOKEN" in block
    assert "MAGI_MARKER_KEY" in block
    assert "exit 2" in block


def test_a_notifier_gets_no_providers_key(tmp_path: Path) -> None:
    """An allowlist, not a denylist: a provider's key magi holds never reaches it."""
    out = tmp_path / "n.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "y", "GH_TOKEN": "z"}
    assert send([sys.executable, "-c", RECORDER, str(out)], {}, env) is None
    assert json.loads(out.read_text())["env"] == []


def test_a_nul_in_the_command_is_a_reason_not_a_crash() -> None:
    assert "could not start" in (send(["a\x00b"], {}) or "")


def test_the_agents_job_tells_no_notifier(env, tmp_path):
    """GITHUB_ACTIONS=true (the agents job): no notifier runs there."""
    import random

    from graph_helpers import NOW
    from magi import engine
    from magi.git.repo import Git
    from magi.state.store import Store

    repo, home, sd = env
    out = tmp_path / "n.jsonl"
    cfg = config(sd, {"a1": "right"}, judges={})
    command = [sys.executable, "-c", RECORDER, str(out)]
    told = cfg.model_copy(update={"notify": cfg.notify.model_copy(update={"command": command})})
    done = engine.start(
        task="fix textstats",
        source="test",
        config=told,
        git=Git.discover(repo),
        store=Store(home),
        environ={**os.environ, "GITHUB_ACTIONS": "true"},
        now=NOW,
        rng=random.Random(1),
        pipeline=[],
    )
    assert done.run.id
    assert not out.exists()
    assert not [e for e in done.run.events if e.node == "notify"]


def test_a_nul_in_the_configured_command_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="NUL"):
        load_config_text('[notify]\ncommand = ["ntfy", "a\\u0000b"]\n')
