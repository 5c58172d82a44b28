"""The setup docs walked as a new user follows them, against the GitHub double.

app/README.md: `magi app setup` (its own process; the page driven as a browser posts it),
what it prints against what the README shows, then the receiver started the way the
printed next step says (`magi app serve --env-file magi-app.env`, its own process)
answering /healthz once it has learned its App from GitHub with the key setup wrote.
docs/runner.md: the runner key commands and `magi doctor --runner`, as shown. Only what
points at the double is added (`--api-url`, `GITHUB_API_URL`, `--port 0`), so a renamed
option, a changed message or a file the receiver cannot start from fails here."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import uvicorn

from github_helpers import new_pem, public_pem
from magi.testing.cli import invoke
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP, asgi
from page_helpers import press_the_button

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent
_FENCE = re.compile(r"^```console\n(.*?)^```", re.S | re.M)


def _blocks(doc: str) -> list[list[str]]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    return [block.splitlines() for block in _FENCE.findall(text)]


def _shown(doc: str, command: str) -> tuple[list[str], list[str]]:
    """The argv of the console line ``$ <command>...`` and the output lines shown after it."""
    for lines in _blocks(doc):
        for i, line in enumerate(lines):
            if line.startswith(f"$ {command}"):
                words = shlex.split(line[2:].split(" #", 1)[0].replace("[--org ORG]", ""))
                out = []
                for after in lines[i + 1 :]:
                    if after.startswith("$ "):
                        break
                    out.append(after)
                return words, [o for o in out if o.strip()]
    raise AssertionError(f"{doc} shows no `$ {command}`")


_VALUE = r"\S*(?:magi-yourname|/path|/srv|\.\.\.|https?://|\(id\b|[0-9a-f]{16})"


def _lead(line: str) -> str:
    """A shown output line's fixed start: its words before the first value (a name, a path,
    a URL, an id, a fingerprint, an elision), which differ from run to run."""
    return re.split(rf"(?:^|\s){_VALUE}", line.strip(), maxsplit=1)[0]


def test_app_readme_from_setup_to_a_healthy_receiver(tmp_path: Path) -> None:
    pem = new_pem()
    public = public_pem(pem)
    made = {
        "id": 4242,
        "slug": "magi-yourname",
        "client_id": "Iv23liAbCdEf",
        "client_secret": "shh-client",
        "webhook_secret": "shh-hook",
        "pem": pem,
        "html_url": "https://github.com/apps/magi-yourname",
    }
    double = GitHubHTTP(FakeGitHub(), app=("4242", public))
    double.manifest_codes["c0de"] = made
    double.app_side.url = "https://magi.example.com/webhook"  # as setup's --public-url set it
    github_sock = socket.socket()
    github_sock.bind(("127.0.0.1", 0))
    github_sock.listen(16)
    api = f"http://127.0.0.1:{github_sock.getsockname()[1]}"
    argv, shown = _shown("app/README.md", "magi app setup")
    work = tmp_path / "me"
    work.mkdir()

    async def main() -> tuple[int, str, int, str]:
        server = uvicorn.Server(
            uvicorn.Config(asgi(double), log_level="warning", access_log=False, lifespan="off")
        )
        serving = asyncio.create_task(server.serve(sockets=[github_sock]))
        env = {**os.environ, "COLUMNS": "200", "PATH": f"{BIN}:{os.environ['PATH']}"}
        proc = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "magi", *argv[1:], "--api-url", api),
            stdout=asyncio.subprocess.PIPE,
            cwd=work,
            env=env,
        )
        assert proc.stdout is not None
        first = await press_the_button(proc.stdout, "c0de")
        rest = (await proc.stdout.read()).decode()
        code = await proc.wait()
        # The next step as printed (`magi app serve --env-file ...`), run by a shell in the
        # folder it wrote to on a port of its choosing (--port 0; it prints where it
        # listens), GitHub being the double.
        step = re.search(r"start the receiver: (magi app serve --env-file \S+)", rest)
        assert step, rest
        app = await asyncio.create_subprocess_exec(
            "sh",
            "-c",
            step.group(1) + " --port 0",
            cwd=work,
            env={**env, "GITHUB_API_URL": api},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # the shell and the magi it starts: one group
        )
        assert app.stdout is not None
        served = ""
        try:
            while "GitHub must reach" not in served:
                line = (await asyncio.wait_for(app.stdout.readline(), 60)).decode()
                assert line, served
                served += line
            here = re.search(r"passed on to (http://127\.0\.0\.1:\d+)/webhook", served)
            assert here, served
            # It listens before it says so: the request waits for uvicorn to accept it.
            async with httpx.AsyncClient(timeout=60) as client:
                health = await client.get(here.group(1) + "/healthz")
        finally:
            os.killpg(app.pid, signal.SIGTERM)
            _, err = await app.communicate()
        server.should_exit = True
        await serving
        return code, first + rest, health.status_code, served + health.text + err.decode()

    code, said, health, why = asyncio.run(main())
    github_sock.close()
    assert code == 0, said
    for line in shown:
        shown_lead = " ".join(_lead(line).split())
        assert shown_lead in " ".join(said.split()), f"app/README.md shows {line!r}; said:\n{said}"
    assert (work / "magi-app.env").is_file()
    assert health == 200, why
    _, serve_shown = _shown("docs/receiver.md", "magi app serve")
    for line in serve_shown:
        assert " ".join(_lead(line).split()) in " ".join(why.split()), (line, why)


def test_runner_md_key_and_doctor_commands_run_as_shown(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "srv-magi"))
    monkeypatch.setenv("MAGI_CONFIG_DIR", str(tmp_path / "machine"))
    argv, shown = _shown("docs/runner.md", "magi runner-key --new")
    made = invoke(argv[1:])
    assert made.exit_code == 0, made.output
    for line in shown:
        assert _lead(line) in " ".join(made.stdout.split()), (line, made.stdout)
    (fingerprint,) = re.findall(r"\bkey ([0-9a-f]{16})\b", " ".join(made.stdout.split()))
    again = invoke(["runner-key"])
    assert f"key {fingerprint}" in " ".join(again.stdout.split()), "the same key, shown again"
    repo = tmp_path / "checkout"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    monkeypatch.chdir(repo)
    argv, _ = _shown("docs/runner.md", "cd ~/checkout-of-the-repository && magi doctor")
    doctor = invoke([*argv[argv.index("magi") + 1 :], "--no-auth-check"])
    assert "runner key" in doctor.stdout
    assert fingerprint in doctor.stdout


def test_runner_md_judges_runner_commands_run_as_shown(tmp_path, monkeypatch) -> None:
    """ "A runner that only seats judges": the panel key written on a pool runner, and
    doctor on the judges' runner showing it, as docs/runner.md shows them."""
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "pool"))
    monkeypatch.setenv("MAGI_CONFIG_DIR", str(tmp_path / "machine"))
    assert invoke(["runner-key", "--new"]).exit_code == 0
    argv, shown = _shown("docs/runner.md", "sudo -iu magi-runner env MAGI_HOME=/srv/magi magi")
    args = argv[len(argv) - argv[::-1].index("magi") :]
    assert args[:2] == ["runner-key", "--panel"], argv
    (tmp_path / "judges").mkdir()
    made = invoke([*args[:2], str(tmp_path / "judges" / "panel.key")])
    assert made.exit_code == 0, made.output
    for line in shown:
        assert _lead(line) in " ".join(made.stdout.split()), (line, made.stdout)
    argv, shown = _shown("docs/runner.md", "ssh judges-box")
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "judges"))
    repo = tmp_path / "checkout"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    monkeypatch.chdir(repo)
    doctor = invoke([*argv[len(argv) - argv[::-1].index("magi") :], "--no-auth-check"])
    said = " ".join(doctor.stdout.split())
    for line in shown:
        if line.strip() != "...":
            assert " ".join(_lead(line).split()) in said, (line, doctor.stdout)


# docs/action.md, "Without a receiver": each step as the issue counts them.
_STEP = re.compile(r"^(\d+)\. \*\*(command|click|secret|file)\*\* (.*)$", re.M)


def _serverless_steps() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    head = "### From a machine with a registered runner to a labeled issue\n"
    section = text.split(head, 1)[1].split("\n### ", 1)[0]
    found = _STEP.findall(section)
    assert [int(n) for n, _, _ in found] == list(range(1, len(found) + 1)), found
    return [(kind, what) for _, kind, what in found]


def test_the_serverless_path_is_counted_and_walked(tmp_path, monkeypatch) -> None:
    """From a registered runner to a labeled issue: README states the count docs/action.md
    lists, at most the issue's six; the secrets set are the ones the written workflow reads;
    the commands run as shown (init with --push: the commit pushed to an origin, the label
    made with gh), and the label, handed to the workflow's receive step, is claimed and
    dispatched (`magi app setup` is walked above)."""
    from github_helpers import PEM, REPO, labeled, world
    from magi.action.context import ActionContext
    from magi.cli.app_setup import Setup
    from magi.config.source import Source

    steps = _serverless_steps()
    assert len(steps) <= 6, steps
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"\*\*(\d+) steps\*\* \(claude-code-action: three", readme)
    assert said, "README states the serverless path's steps beside claude-code-action's three"
    assert int(said.group(1)) == len(steps)
    commands = [re.search(r"`([^`]+)`", what) for kind, what in steps if kind == "command"]
    shown = [c.group(1) for c in commands if c]
    assert len(shown) == len([k for k, _ in steps if k == "command"])
    assert not [k for k, _ in steps if k == "file"], "no file is edited by hand"
    # gh, logged in as you: a stand-in records each call (`gh secret set NAME`, `gh label
    # create … -- NAME`) and reads what it is given on its standard input.
    gh_bin = tmp_path / "gh-bin"
    gh_bin.mkdir()
    (gh_bin / "gh").write_text(
        "#!/bin/sh\n"
        'if [ "$1" = label ]; then for a; do prev=$last; last=$a; done\n'
        '  echo "$1 $2 $prev $last" >> "$GH_LOG"\n'  # the name, after `--`
        'else echo "$1 $2 $3" >> "$GH_LOG"; fi\n'
        "cat > /dev/null\n"
    )
    (gh_bin / "gh").chmod(0o755)
    monkeypatch.setenv("GH_LOG", str(tmp_path / "gh.log"))
    # The checkout of your repository on github.com (its pushes go to a bare origin here).
    origin, repo = tmp_path / "origin.git", tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True, capture_output=True)
    for key, value in (("user.name", "me"), ("user.email", "me@example.com")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "first"], cwd=repo, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=repo, check=True)
    github = "https://github.com/me/repo.git"
    subprocess.run(["git", "remote", "set-url", "origin", github], cwd=repo, check=True)
    subprocess.run(
        ["git", "remote", "set-url", "--push", "origin", str(origin)], cwd=repo, check=True
    )
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", f"{gh_bin}:{BIN}:/usr/bin:/bin")
    monkeypatch.setattr(
        "magi.config.source.installed_source", lambda: Source("acme/magi", "1" * 40)
    )
    init = next(c for c in shown if c.startswith("magi init"))
    made = invoke(shlex.split(init)[1:])
    assert made.exit_code == 0, made.output
    flow = (repo / ".github" / "workflows" / "magi.yml").read_text(encoding="utf-8")
    assert re.search(r"^  issues:\n    types: \[labeled", flow, re.M), "its triggers are on"
    pushed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "main"], cwd=origin, capture_output=True, text=True
    )
    assert ".github/workflows/magi.yml" in pushed.stdout.split()
    assert ".magi/config.toml" in pushed.stdout.split()
    assert (tmp_path / "gh.log").read_text().split("\n")[0] == "label create -- magi"
    # The secrets: `magi app setup --repo` sets them with gh, and they are exactly those
    # the written workflow reads.
    setup = next(c for c in shown if c.startswith("magi app setup"))
    assert "--repo" in shlex.split(setup)
    made_app = {
        "id": 1,
        "slug": "magi-yours",
        "webhook_secret": "w",
        "client_id": "Iv1",
        "pem": "k",
    }
    (tmp_path / "gh.log").write_text("")
    Setup(tmp_path / "magi-app.env", "https://api.github.test", repo="me/repo").write(made_app)
    set_ = (tmp_path / "gh.log").read_text().splitlines()
    secrets = {line.removeprefix("secret set ") for line in set_}
    assert secrets == set(re.findall(r"\$\{\{ secrets\.([A-Z_]+) \}\}", flow))
    assert not [k for k, _ in steps if k == "secret"], "no secret is set by hand"
    # The last step, the label: GitHub starts the receive job with the event, whose step
    # runs `magi receive` (action/run.sh) with the App token it minted.
    assert steps[-1][0] == "click"
    assert "label" in steps[-1][1]
    fake = world(FakeGitHub())
    event = tmp_path / "event.json"
    event.write_text(json.dumps(labeled()))
    env = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "MAGI_GITHUB_TOKEN": "ghs_test",
        "MAGI_APP_SLUG": "magi-app",
        "MAGI_MARKER_KEY": PEM,
    }
    argv = ["receive", "--event-name", "issues", "--event-file", str(event)]
    got = invoke(argv, env=env, obj=ActionContext(ports=lambda url, token: fake))
    assert got.exit_code == 0, got.output
    (dispatch,) = fake.world(REPO).dispatches
    assert dispatch["inputs"]["command"] == "compete"
