"""When GitHub refuses magi's App token, the thread is told which cause it is.

Each cause is made in the GitHub double (which checks the App's JWT as GitHub does) and
asked about with the App's real key through githubkit, as the workflow's step asks.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest

from github_helpers import REPO, new_pem, pem, public_pem
from magi.action.context import ActionContext
from magi.action.publish_job.token_refused import (
    ASKED,
    Found,
    credentials_problem,
    diagnose,
)
from magi.github.auth import AppAuth
from magi.testing.cli import invoke
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ID = "Iv23liMAGI0000000000"
APP_ID = "4242"
# What app.yml asks for: GET /app answers this unless a test says otherwise.
APP_ASKS = {
    "contents": "write",
    "workflows": "write",
    "pull_requests": "write",
    "issues": "write",
    "checks": "write",
    "statuses": "read",
    "actions": "write",
    "metadata": "read",
}


def _ec_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def _double(**world: object) -> GitHubHTTP:
    fake = FakeGitHub()
    fake.add_issue(REPO, 7, "Spelling error in the README file")
    w = fake.world(REPO)
    w.granted = dict(APP_ASKS)
    for name, value in world.items():
        setattr(w, name, value)
    return GitHubHTTP(
        fake, app=(APP_ID, public_pem(pem())), client_id=CLIENT_ID, app_permissions=dict(APP_ASKS)
    )


async def _no_sleep(_: float) -> None:
    return None


def _ask(double: GitHubHTTP, key: str, job: str = "publish") -> Found:
    auth = AppAuth(
        CLIENT_ID,
        key,
        "https://api.github.test",
        async_transport=httpx.MockTransport(double),
        sleep=_no_sleep,
    )
    return asyncio.run(diagnose(auth, REPO, CLIENT_ID, job))


def test_the_app_not_installed_here_is_said_with_its_install_link():
    found = _ask(_double(installed=False), pem())
    assert f"`magi-app` (App 4242) is not installed on {REPO.full_name}" in found.why
    assert "https://github.com/apps/magi-app/installations/new" in found.fix


def test_a_key_of_another_app_is_told_from_an_app_not_installed():
    """GitHub refuses the JWT itself: the key and the client ID are named, not the install."""
    found = _ask(_double(), new_pem())
    assert "GitHub refused the App's credentials (401)" in found.why
    assert "MAGI_APP_CLIENT_ID (20 characters, shaped like a GitHub App client ID)" in found.why
    assert CLIENT_ID not in found.why + found.fix  # named by its secret's name, not its value
    assert "not installed" not in found.why
    assert "MAGI_APP_PRIVATE_KEY" in found.fix


def test_a_suspended_installation_is_said():
    found = _ask(_double(suspended=True), pem())
    assert "is suspended" in found.why
    assert "settings/installations" in found.fix  # the installation's own page


def test_permissions_the_installation_never_accepted_are_named():
    """The App asks for `workflows: write` (app.yml changed), the installation never
    accepted it: GitHub refuses a token that asks for it; the fix is to accept."""
    granted = {k: v for k, v in APP_ASKS.items() if k != "workflows"}
    found = _ask(_double(granted=granted), pem())
    assert "`workflows: write`" in found.why
    assert "has not accepted" in found.why
    assert found.fix.startswith("accept the App's updated permissions at https://")


def test_a_permission_the_app_itself_lacks_is_told_apart():
    double = _double(granted={"contents": "write", "issues": "write"})
    double.app_permissions = {"contents": "write", "issues": "write", "metadata": "read"}
    found = _ask(double, pem())
    assert "does not ask for" in found.why
    assert "`checks: write`" in found.why
    assert "`pull-requests: write`" in found.why
    assert "App's settings page" in found.fix


def test_a_read_grant_does_not_satisfy_a_write_ask():
    granted = {**APP_ASKS, "issues": "read"}
    found = _ask(_double(granted=granted), pem(), job="council-publish")
    assert "`issues: write`" in found.why


def test_when_all_looks_right_magi_says_it_cannot_see_and_where_to_look():
    found = _ask(_double(), pem())
    assert "cannot see" in found.why
    assert "create-github-app-token" in found.fix


def test_a_github_that_does_not_answer_is_said_as_such():
    double = _double()
    double.inject("GET", r"^/app$", status=502, times=10)
    found = _ask(double, pem())
    assert found.why.startswith("GitHub did not answer")


@pytest.mark.parametrize(
    ("client_id", "key", "named"),
    [
        ("", "k", "MAGI_APP_CLIENT_ID is empty"),
        (CLIENT_ID, "  ", "MAGI_APP_PRIVATE_KEY is empty"),
        (CLIENT_ID, "ghp_not_a_key", "MAGI_APP_PRIVATE_KEY is not a PEM private key"),
        (CLIENT_ID, _ec_pem(), "MAGI_APP_PRIVATE_KEY is not an RSA key"),
    ],
)
def test_the_secrets_themselves_are_checked_first(client_id, key, named):
    found = credentials_problem(client_id, key)
    assert found is not None
    assert named in found.why


def test_good_secrets_pass_the_first_check():
    assert credentials_problem(CLIENT_ID, pem()) is None


def _step(
    tmp_path: Path, double: GitHubHTTP, key: str, thread: str, client_id: str = CLIENT_ID
) -> tuple[int, str]:
    """``magi action token-refused`` as the workflow step runs it."""
    summary = tmp_path / "summary.md"
    env = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "GITHUB_API_URL": "https://api.github.test",
        "GITHUB_SERVER_URL": "https://github.test",
        "GITHUB_RUN_ID": "99",
        "GITHUB_JOB": "publish",
        "GITHUB_STEP_SUMMARY": str(summary),
        "MAGI_GITHUB_TOKEN": "ghs_the_jobs_own",
        "MAGI_MARKER_KEY": key,
        "MAGI_APP_CLIENT_ID": client_id,
    }
    transport = httpx.MockTransport(double)

    def ports(api_url: str, token: str):  # the job's own token: a plain token port
        from githubkit import GitHub, TokenAuthStrategy

        from magi.github.githubkit_port import GitHubKitPort

        gh = GitHub(
            TokenAuthStrategy(token),
            base_url=api_url + "/",
            async_transport=transport,
            auto_retry=False,
            http_cache=False,
        )
        return GitHubKitPort(gh)

    argv = ["action", "token-refused", "--thread", thread]
    res = invoke(argv, env=env, obj=ActionContext(ports=ports, app_transport=transport))
    return res.exit_code, res.output


def test_the_step_says_the_cause_on_the_thread_with_the_jobs_own_token(tmp_path):
    double = _double(installed=False)
    code, out = _step(tmp_path, double, pem(), "7")
    assert code == 0, out
    [comment] = double.fake.comments_on(REPO, 7)
    assert comment.startswith("magi could not act here")
    assert f"`publish` job (https://github.test/{REPO.full_name}/actions/runs/99)" in comment
    assert f"is not installed on {REPO.full_name}" in comment
    assert "/magi retry" in comment
    assert "PRIVATE KEY" not in comment + out  # the key never reaches a message
    assert "is not installed" in (tmp_path / "summary.md").read_text()
    assert "::error::" in out


def test_a_bad_key_is_said_without_asking_github(tmp_path):
    double = _double()
    code, out = _step(tmp_path, double, "paste went wrong", "7")
    assert code == 0, out
    [comment] = double.fake.comments_on(REPO, 7)
    assert "not a PEM private key" in comment
    assert ("GET", "/app") not in double.requests


def test_no_thread_posts_nothing_and_still_says_why_in_the_log(tmp_path):
    """A merge gate run from workflow_run has no thread: the log and summary say it."""
    double = _double(installed=False)
    code, out = _step(tmp_path, double, pem(), "")
    assert code == 0, out
    assert double.fake.comments_on(REPO, 7) == []
    assert "no thread to say it on" in out
    assert "is not installed" in out


def test_the_permissions_magi_checks_are_those_each_job_asks_for():
    """ASKED is each job's create-github-app-token permission-* inputs, as the workflow
    writes them: a job that asks for more than magi checks would be misdiagnosed."""
    text = (ROOT / "workflows" / "magi.yml").read_text()
    body = text.split("\njobs:\n", 1)[1]
    parts = re.split(r"^  ([a-z-]+):\n", body, flags=re.M)
    found = {}
    for job, block in zip(parts[1::2], parts[2::2], strict=True):
        if "create-github-app-token" not in block:
            continue
        step = block[block.index("create-github-app-token") :]
        step = step[: step.index("\n      - ")] if "\n      - " in step else step
        found[job] = {
            name: _outside_merge_group(value)
            for name, value in re.findall(r"permission-([a-z-]+): (\w+|\$\{\{.*?\}\})", step)
        }
    assert found == ASKED


def _outside_merge_group(value: str) -> str:
    """A permission input as it is when the token-refused step can run (an issue's thread,
    never merge_group): a plain level, or the one expression the workflow uses for it."""
    m = re.fullmatch(
        r"\$\{\{ github\.event_name == 'merge_group' && '(\w+)' \|\| '(\w+)' \}\}", value
    )
    return m[2] if m else value


def test_the_receive_job_writes_checks_only_for_a_merge_queues_group():
    """The receive token can write check runs only when a merge group asks for `magi`: on
    every other event a token that can write checks is more than the job needs."""
    text = (ROOT / "workflows" / "magi.yml").read_text()
    receive = text.split("\n  receive:\n", 1)[1].split("\n  compete:\n", 1)[0]
    (line,) = [x for x in receive.splitlines() if "permission-checks:" in x]
    value = line.split(":", 1)[1].split(" #", 1)[0].strip()
    assert value == "${{ github.event_name == 'merge_group' && 'write' || 'read' }}"


@pytest.mark.parametrize(
    ("pasted", "said"),
    [
        ("0123456789abcdef0123456789abcdef01234567", "40 hex digits: a client secret"),
        (new_pem(), "a private key (PEM)"),
        ("ghp_" + "Zq8vR2mN4kT7wY1xC5bH9jL3pD6fS0aE2gU4", "a GitHub token"),
    ],
)
def test_a_secret_pasted_as_the_client_id_is_named_by_shape_never_shown(tmp_path, pasted, said):
    """A client secret, a key or a token pasted into MAGI_APP_CLIENT_ID: GitHub refuses the
    JWT, and the public comment names the secret and its shape, never the value."""
    double = _double()
    code, out = _step(tmp_path, double, pem(), "7", client_id=pasted)
    assert code == 0, out
    [comment] = double.fake.comments_on(REPO, 7)
    assert "MAGI_APP_CLIENT_ID" in comment
    assert said in comment
    summary = (tmp_path / "summary.md").read_text()
    for line in pasted.strip().splitlines():
        if "-----" not in line:
            assert line.strip()[:12] not in comment + out + summary
