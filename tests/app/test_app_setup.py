"""`magi app setup`: the manifest flow, the form posted intact, the code exchanged once, the
credentials written for their owner only, and what to do next."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import sys
from pathlib import Path

import httpx
import pytest
import uvicorn

from magi.cli.app_setup import Setup, manifest, read_manifest
from magi.testing.cli import invoke
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP, asgi
from page_helpers import Form, press_the_button, read_form

ROOT = Path(__file__).parents[2]
MADE = {
    "id": 4242,
    "slug": "magi-acme",
    "client_id": "Iv23liAbCdEf",
    "client_secret": "shh-client",
    "webhook_secret": "shh-hook",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n",
    "html_url": "https://github.com/apps/magi-acme",
}


def test_the_manifest_is_app_yml_and_says_what_the_receiver_gets() -> None:
    """Every event and permission of app.yml; the description's apostrophe kept."""
    data = manifest("https://magi.acme.test/", "http://127.0.0.1:1/done")
    shipped = read_manifest((ROOT / "app.yml").read_text(encoding="utf-8"))
    assert data["default_events"] == shipped["default_events"]
    assert data["default_permissions"] == shipped["default_permissions"]
    assert "writer's" in data["description"]
    assert data["hook_attributes"] == {"url": "https://magi.acme.test/webhook", "active": True}
    assert data["redirect_url"] == "http://127.0.0.1:1/done"
    assert manifest(None, "x")["hook_attributes"]["active"] is False


async def _flow(
    job: Setup, code: str, state: str | None = None, host: str = "127.0.0.1:1"
) -> tuple[Form, httpx.Response]:
    app = job.app("http://127.0.0.1:1/done")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as client:
        form = read_form((await client.get("/")).text)
        back = await client.get("/done", params={"code": code, "state": state or job.state})
    return form, back


def test_the_form_posts_the_whole_manifest_and_the_code_becomes_a_private_file(tmp_path):
    """Posted as a browser would parse it, the JSON reads back whole (the old `value='…'`
    form cut it at "writer's"); the exchange writes the env file and the key, mode 0600."""
    double = GitHubHTTP(FakeGitHub())
    double.manifest_codes["c0de"] = MADE
    out = tmp_path / "magi-app.env"
    job = Setup(out, "https://api.github.test", org="acme", transport=httpx.MockTransport(double))
    form, back = asyncio.run(_flow(job, "c0de"))
    assert (
        form.action == f"https://github.com/organizations/acme/settings/apps/new?state={job.state}"
    )
    posted = json.loads(form.fields["manifest"])
    assert posted == manifest(None, "http://127.0.0.1:1/done", "magi-acme")
    assert posted["name"] == "magi-acme"  # the org's: `magi` is taken on GitHub
    # On to the App's installation page: installing it is GitHub's one click.
    assert back.status_code == 303
    assert back.headers["location"] == "https://github.com/apps/magi-acme/installations/new"
    text = out.read_text()
    assert "GITHUB_APP_ID=4242" in text
    assert "GITHUB_APP_SLUG=magi-acme" in text
    assert "GITHUB_WEBHOOK_SECRET=shh-hook" in text
    assert "MAGI_APP_CLIENT_ID=Iv23liAbCdEf" in text
    key = out.with_suffix(".pem")
    assert key.read_text() == MADE["pem"]
    for path in (out, key):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "https://github.com/apps/magi-acme/installations/new" in job.said
    assert "MAGI_APP_PRIVATE_KEY" in job.said
    assert "shh" not in job.said  # the page says where the secrets are, not what they are


def test_an_app_page_on_another_host_is_shown_not_followed(tmp_path) -> None:
    """The redirect goes only to the GitHub setup was pointed at (--github-url)."""
    double = GitHubHTTP(FakeGitHub())
    double.manifest_codes["c0de"] = {**MADE, "html_url": "https://elsewhere.test/apps/x"}
    job = Setup(
        tmp_path / "a.env", "https://api.github.test", transport=httpx.MockTransport(double)
    )
    _, back = asyncio.run(_flow(job, "c0de"))
    assert back.status_code == 200
    assert "Created the GitHub App" in back.text


@pytest.mark.parametrize(
    ("code", "state", "status"), [("c0de", "forged", 400), ("used", None, 502)]
)
def test_a_wrong_state_or_a_spent_code_writes_nothing(tmp_path, code, state, status) -> None:
    """Another page's redirect is refused; a code GitHub no longer knows is said plainly."""
    double = GitHubHTTP(FakeGitHub())
    double.manifest_codes["c0de"] = MADE
    out = tmp_path / "magi-app.env"
    job = Setup(out, "https://api.github.test", transport=httpx.MockTransport(double))
    _, back = asyncio.run(_flow(job, code, state))
    assert back.status_code == status
    assert not out.exists()
    assert not job.done.is_set()


def test_existing_credentials_are_never_overwritten(tmp_path) -> None:
    out = tmp_path / "magi-app.env"
    out.write_text("keep me\n")
    job = Setup(out, "https://api.github.test")
    with pytest.raises(RuntimeError, match="does not overwrite"):
        job.write(MADE)
    assert out.read_text() == "keep me\n"


def test_the_command_runs_the_flow_and_ends(tmp_path) -> None:
    """`magi app setup` as its own process: it says where its page is, the redirect comes
    back with the code, the file appears, the next steps are printed and it exits 0."""
    double = GitHubHTTP(FakeGitHub())
    double.manifest_codes["c0de"] = MADE
    github_sock = socket.socket()
    github_sock.bind(("127.0.0.1", 0))
    github_sock.listen(8)
    api = f"http://127.0.0.1:{github_sock.getsockname()[1]}"
    out = tmp_path / "creds" / "magi-app.env"

    async def main() -> tuple[int, str]:
        server = uvicorn.Server(
            uvicorn.Config(asgi(double), log_level="warning", access_log=False, lifespan="off")
        )
        serving = asyncio.create_task(server.serve(sockets=[github_sock]))
        proc = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "magi", "app", "setup", "--api-url", api),
            *("--out", str(out), "--public-url", "https://magi.acme.test"),
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert proc.stdout is not None
        await press_the_button(proc.stdout, "c0de")
        rest = (await proc.stdout.read()).decode()
        code = await proc.wait()
        server.should_exit = True
        await serving
        github_sock.close()
        return code, rest

    code, said = asyncio.run(main())
    assert code == 0
    assert "Created the GitHub App magi-acme (id 4242)" in said
    assert "GITHUB_APP_ID=4242" in out.read_text()


def test_the_receiver_starts_from_the_file_setup_wrote(tmp_path) -> None:
    """The file is sourced as app/README.md says (`set -a; . file; set +a`), and the App's
    settings come from that environment: the key read from the path beside it, even a path
    with a space in it, and a value that looks like a command is a value, never run."""
    import subprocess

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from magi.app.settings import settings_from_env

    pem = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        .decode()
    )
    where = tmp_path / "my creds"
    out = where / "magi-app.env"
    hostile = {**MADE, "pem": pem, "webhook_secret": "$(touch pwned)`touch pwned2`;x"}
    Setup(out, "https://api.github.test", public_url="https://magi.acme.test/").write(hostile)
    shell = subprocess.run(
        ["sh", "-c", 'set -a; . "$1"; set +a; env -0', "sh", str(out)],
        cwd=tmp_path,
        capture_output=True,
        check=True,
    )
    env = dict(item.split("=", 1) for item in shell.stdout.decode().split("\0") if "=" in item)
    assert not list(tmp_path.glob("pwned*")), "sourcing the file ran nothing"
    settings = settings_from_env(env)
    assert settings.app_id == "4242"
    assert settings.app_slug == "magi-acme"
    assert settings.webhook_secret == hostile["webhook_secret"]
    assert settings.private_key.strip() == pem.strip()
    assert env["MAGI_APP_CLIENT_ID"] == "Iv23liAbCdEf"
    assert settings.public_url == "https://magi.acme.test", "runners ask it about /magi stop"


def test_a_public_address_runners_could_not_ask_safely_is_refused_first(tmp_path) -> None:
    """Plain http off loopback would carry every run's park key in the clear: refused
    before any page is served or anything is written."""
    out = tmp_path / "magi-app.env"
    got = invoke(["app", "setup", "--public-url", "http://magi.acme.test", "--out", str(out)])
    assert got.exit_code == 2, got.output
    assert "plain http" in got.output
    assert not out.exists()


def test_the_api_url_is_written_for_the_receiver(tmp_path) -> None:
    """`--api-url` (GitHub Enterprise Server) reaches the receiver's environment, so the
    receiver does not ask api.github.com for an App it has never heard of."""
    out = tmp_path / "magi-app.env"
    Setup(out, "https://ghe.acme.test/api/v3/").write(MADE)
    assert "GITHUB_API_URL=https://ghe.acme.test/api/v3\n" in out.read_text()


@pytest.mark.parametrize("org", [None, "acme"])
def test_without_a_public_url_the_steps_say_how_to_turn_the_webhook_on(tmp_path, org) -> None:
    """Registered inactive: which page, which URL, which box, and MAGI_PUBLIC_URL."""
    job = Setup(tmp_path / "magi-app.env", "https://api.github.test", org=org)
    said = job.write(MADE)
    page = "/organizations/acme" if org else ""
    assert f"open https://github.com{page}/settings/apps/magi-acme" in said
    assert "set the Webhook URL to https://YOUR-HOST/webhook, tick Active" in said
    assert "MAGI_PUBLIC_URL=https://YOUR-HOST" in said
    given = Setup(tmp_path / "b.env", "https://api.github.test", public_url="https://m.test")
    assert "INACTIVE" not in given.write(MADE)


def test_the_steps_warn_a_public_repository_and_name_the_commands(tmp_path) -> None:
    said = Setup(tmp_path / "magi-app.env", "https://api.github.test").write(MADE)
    assert "on a public repository, the `magi` label is a writer's approval" in said
    assert "magi app serve --env-file" in said
    assert "magi app check OWNER/REPO" in said


@pytest.mark.parametrize("host", ["rebound.attacker.test:1", "127.0.0.1:2", "localhost:1"])
def test_the_page_answers_only_its_own_address(tmp_path, host) -> None:
    """A page whose name was rebound to 127.0.0.1 asks with its own Host: no state to read,
    no code taken, nothing written."""
    double = GitHubHTTP(FakeGitHub())
    double.manifest_codes["c0de"] = MADE
    out = tmp_path / "magi-app.env"
    job = Setup(out, "https://api.github.test", transport=httpx.MockTransport(double))
    app = job.app("http://127.0.0.1:1/done")

    async def ask() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as client:
            first = await client.get("/")
            back = await client.get("/done", params={"code": "c0de", "state": job.state})
        return first, back

    first, back = asyncio.run(ask())
    assert first.status_code == back.status_code == 421
    assert job.state not in first.text
    assert not out.exists()
    assert not job.done.is_set()


def test_without_a_public_url_the_next_step_is_the_workflow_that_needs_no_receiver(tmp_path):
    """No address: the workflow hears the events itself, so `magi init --github --push`
    (its triggers on, committed, pushed, the label made) is the next step; with one,
    `--receiver` keeps them off."""
    said = Setup(tmp_path / "a.env", "https://api.github.test").write(MADE)
    first = said.split("then: `magi init --github", 1)[1]
    assert first.startswith(" --push` in the repository's checkout")
    assert '"Without a receiver"' in said
    served = Setup(tmp_path / "b.env", "https://api.github.test", public_url="https://m.test")
    assert "then: `magi init --github --receiver` in the repository" in served.write(MADE)


GH = """#!/bin/sh
# gh as `gh secret set NAME --repo R` is run: the argv, then the value read from stdin
{ printf '%s\\n' "$*"; cat; printf '\\n--\\n'; } >> "$GH_LOG"
[ -z "$GH_FAIL" ] || { echo "HTTP 404: Not Found (https://api.github.com/repos/$5)" >&2; exit 1; }
"""


def _gh(tmp_path, monkeypatch, fail: str = "") -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH)
    (bin_dir / "gh").chmod(0o755)
    log = tmp_path / "gh.log"
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("GH_LOG", str(log))
    monkeypatch.setenv("GH_FAIL", fail)
    return log


def test_repo_sets_the_workflows_two_secrets_with_gh_values_on_stdin(tmp_path, monkeypatch):
    """--repo: the secrets are set (one step fewer each), their values never an argument."""
    log = _gh(tmp_path, monkeypatch)
    job = Setup(tmp_path / "magi-app.env", "https://api.github.test", repo="octo/widgets")
    said = job.write(MADE)
    calls = log.read_text().split("\n--\n")
    assert calls[0].splitlines()[0] == "secret set MAGI_APP_CLIENT_ID --repo octo/widgets"
    assert calls[0].splitlines()[1] == str(MADE["client_id"])
    assert calls[1].splitlines()[0] == "secret set MAGI_APP_PRIVATE_KEY --repo octo/widgets"
    assert str(MADE["pem"]).strip() in calls[1]
    assert str(MADE["pem"]).strip().splitlines()[1] not in calls[1].splitlines()[0]
    assert "Set the secrets MAGI_APP_CLIENT_ID and MAGI_APP_PRIVATE_KEY on octo/widgets" in said
    assert "add the secrets" not in said


def test_a_gh_that_refuses_leaves_the_manual_step_with_its_reason(tmp_path, monkeypatch):
    _gh(tmp_path, monkeypatch, fail="1")
    job = Setup(tmp_path / "magi-app.env", "https://api.github.test", repo="octo/widgets")
    said = job.write(MADE)
    assert "add the secrets MAGI_APP_CLIENT_ID" in said
    assert "HTTP 404" in said
