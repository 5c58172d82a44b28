"""`magi app setup` as a person meets it: its page in a real browser (Debian's chromium through
Playwright), the button pressed, GitHub's new-App form (a stand-in) given the manifest, the
redirect followed back with the code, the credentials written, the next steps printed and the
browser sent on to the App's installation page."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import uvicorn

from magi.cli.app_setup import manifest, read_manifest
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP, asgi
from magi.testing.github_web import NewAppForm

ROOT = Path(__file__).parents[2]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's; Playwright downloads no browser of its own
# .ci/run fails the build when a skip reason starting so shows up: CI never skips this test.
NEEDS = "the browser test needs"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _listening() -> tuple[socket.socket, str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


@asynccontextmanager
async def _serving(app: Any, sock: socket.socket) -> AsyncIterator[None]:
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    )
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def _setup(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """`magi app setup` as its own process, and the page it says to open."""
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "magi", "app", "setup", *args),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        assert proc.stdout is not None
        first = (await proc.stdout.readline()).decode()  # printed once its socket listens
        here = re.search(r"open (http://127\.0\.0\.1:\d+)/ in a browser", first)
        assert here, first
        yield proc, here.group(1)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.parametrize("public", ["https://magi.acme.test", None], ids=["public-url", "none"])
def test_pressing_the_button_registers_the_app_and_the_page_says_what_next(
    tmp_path, public: str | None
) -> None:
    """The user opens the page; GitHub's form receives app.yml's manifest whole (the description's
    apostrophe and all), redirects back with the code and the state; the page exchanges
    the code, the env file and the key appear for their owner only, the browser goes on to
    the App's installation page, and the command says what to do next without showing a
    secret. Without a public URL the
    webhook is registered inactive, and the steps say how to turn it on."""
    if not CHROMIUM.exists():
        pytest.skip(f"{NEEDS} Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.async_api import async_playwright, expect
    except ImportError:  # pragma: no cover - the test extra installs it
        pytest.skip(f"{NEEDS} playwright (pip install -c constraints.txt -e '.[test]')")

    double = GitHubHTTP(FakeGitHub())
    form = NewAppForm(double)
    web_sock, web = _listening()
    api_sock, api = _listening()
    out = tmp_path / "creds" / "magi-app.env"

    async def main() -> tuple[str, str, int, str]:
        args = ("--github-url", web, "--api-url", api, "--out", str(out))
        args += ("--public-url", public) if public else ()
        async with (
            _serving(form.asgi(), web_sock),
            _serving(asgi(double), api_sock),
            _setup(*args) as (proc, here),
            async_playwright() as pw,
        ):
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
            try:
                page = await browser.new_page()
                # Opening the page is the user's step: it posts the manifest as it opens.
                async with page.expect_response(
                    lambda r: r.request.method == "POST" and "/settings/apps/new" in r.url
                ) as answered:
                    await page.goto(f"{here}/", wait_until="commit")
                posted = await answered.value
                if posted.status != 302:  # GitHub's form refused it: say why, now
                    pytest.fail(f"the new-App form answered {posted.status}: {form.refused}")
                # Back from GitHub with the code: the page sends the browser on to the
                # App's installation page, where installing it is one click.
                async with page.expect_request(lambda r: "/done?" in r.url) as back:
                    await page.wait_for_url(f"{web}/apps/magi/installations/new/permissions?*")
                landed = (await back.value).url
                await expect(page.locator("body")).to_contain_text("Install magi")
            finally:
                await browser.close()
            assert proc.stdout is not None
            printed = (await proc.stdout.read()).decode()
            return here, landed, await proc.wait(), printed

    here, landed, code, printed = asyncio.run(main())

    assert form.refused == []
    [got] = form.posted
    assert got.org is None
    assert got.manifest == manifest(public, f"{here}/done")
    shipped = read_manifest((ROOT / "app.yml").read_text(encoding="utf-8"))
    ours = {"url", "hook_attributes", "redirect_url"}  # the receiver's address, this page
    assert {k: v for k, v in got.manifest.items() if k not in ours} == {
        k: v for k, v in shipped.items() if k not in ours
    }
    assert "writer's" in got.manifest["description"]
    hook = {"url": f"{public}/webhook", "active": True} if public else {"active": False}
    assert {k: got.manifest["hook_attributes"][k] for k in hook} == hook
    back = parse_qs(urlsplit(landed).query)
    assert back == {"code": [got.code], "state": [got.state]}
    assert got.state, "the page's form carries a state for the redirect to bring back"
    assert double.manifest_codes == {}, "the code was exchanged, once"

    key = out.with_suffix(".pem")
    for path in (out, key):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert key.read_text() == form.pem()
    env = dict(
        line.split("=", 1) for line in out.read_text().splitlines() if not line.startswith("#")
    )
    assert env == {
        "GITHUB_APP_ID": "4242",
        "GITHUB_APP_SLUG": "magi",
        "GITHUB_WEBHOOK_SECRET": env["GITHUB_WEBHOOK_SECRET"],
        "GITHUB_APP_PRIVATE_KEY_PATH": str(key),
        "MAGI_APP_CLIENT_ID": env["MAGI_APP_CLIENT_ID"],
        # runners ask it whether a `/magi stop` parks their run
        **({"MAGI_PUBLIC_URL": public} if public else {}),
        "GITHUB_API_URL": api,
    }
    assert re.fullmatch(r"[0-9a-f]{40}", env["GITHUB_WEBHOOK_SECRET"])
    assert env["MAGI_APP_CLIENT_ID"].startswith("Iv23li")

    assert code == 0
    assert form.install_pages == [f"magi target {9000 + len(form.owner)}"]  # the owner's
    words = printed
    assert "Created the GitHub App magi (id 4242)" in words
    assert f"next: install it on your repository: {web}/apps/magi/installations/new" in words
    assert "MAGI_APP_PRIVATE_KEY" in words
    assert "magi init --github" in words
    assert env["GITHUB_WEBHOOK_SECRET"] not in words
    assert "PRIVATE KEY-----" not in words
    inactive = f"open {web}/settings/apps/magi, set the Webhook URL" in words
    assert inactive is (public is None), words


def _post(form: NewAppForm, path: str, body: dict[str, str]) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=form.asgi())
        async with httpx.AsyncClient(transport=transport, base_url="http://github.test") as c:
            return await c.post(path, data=body)

    return asyncio.run(go())


def test_the_form_stand_in_redirects_an_org_manifest_with_its_code_and_state() -> None:
    """As GitHub does: a 302 to redirect_url with code and state; the code is the double's."""
    double = GitHubHTTP(FakeGitHub())
    form = NewAppForm(double)
    data = manifest(None, "http://127.0.0.1:1/done")
    answer = _post(
        form, "/organizations/acme/settings/apps/new?state=s1", {"manifest": json.dumps(data)}
    )
    assert answer.status_code == 302
    [got] = form.posted
    assert answer.headers["location"] == f"http://127.0.0.1:1/done?code={got.code}&state=s1"
    assert (got.org, got.state, got.manifest) == ("acme", "s1", data)
    made = double.manifest_codes[got.code]
    assert made["owner"] == {"login": "acme", "id": 9004, "type": "Organization"}
    assert made["html_url"] == "http://github.test/apps/magi"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ('{"name": "magi", "description": "a writer', "not JSON"),
        ('["magi"]', "not an object"),
        ('{"name": "magi", "redirect_url": "http://x/done"}', "no `url`"),
        ('{"url": "https://x", "redirect_url": "http://x/done", "colour": "red"}', "colour"),
        ('{"url": "https://x"}', "no `redirect_url`"),
    ],
)
def test_the_form_stand_in_refuses_a_manifest_github_could_not_read(value, why) -> None:
    """A cut or foreign manifest gets a 422 naming what is wrong, and no code."""
    double = GitHubHTTP(FakeGitHub())
    form = NewAppForm(double)
    answer = _post(form, "/settings/apps/new?state=s1", {"manifest": value})
    assert answer.status_code == 422
    assert why in answer.text
    assert form.posted == []
    assert double.manifest_codes == {}
