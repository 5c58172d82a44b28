"""`magi app check`: each broken setup a label meets is named, with its fix, against the
HTTP double (real JWTs, githubkit over httpx, GitHub's example bodies)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from app_check_helpers import KEY, MANIFEST, PUBLIC, REPO, SHA, healthy
from github_helpers import new_pem
from magi.cli.app_check import check_repo, render
from magi.cli.app_env import AppKey
from magi.config.source import Source
from magi.core.person.app_check import Finding
from magi.github.port import API_VERSION
from magi.testing.cli import invoke
from magi.testing.github_app_routes import delivery
from magi.testing.github_http import GitHubHTTP


@pytest.fixture(autouse=True)
def _this_magi(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("magi.config.source.installed_source", lambda: Source("acme/magi", SHA))


def _check(double: GitHubHTTP, key: str = KEY, public: str | None = PUBLIC) -> list[Finding]:
    app_key = AppKey("1", key, "https://api.github.test", public)
    found = asyncio.run(check_repo(app_key, REPO, httpx.MockTransport(double)))
    double.assert_clean()
    return found


def _problems(found: list[Finding]) -> str:
    return " | ".join(f"{f.why} => {f.fix}" for f in found if not (f.fine or f.warn or f.note))


def test_a_healthy_setup_has_no_problem() -> None:
    found = _check(healthy())
    assert _problems(found) == ""
    assert "nothing stops a label here" in render(REPO.full_name, found)


def test_a_key_github_refuses_is_the_only_thing_said() -> None:
    [only] = _check(healthy(), key=new_pem())
    assert "GitHub did not take the App's key" in only.why
    assert "GITHUB_APP_ID" in only.fix


def test_an_app_not_installed_names_the_install_page() -> None:
    double = healthy()
    double.fake.world(REPO).installed = False
    said = _problems(_check(double))
    assert "the App is not installed on octo/widgets" in said
    assert "https://github.com/apps/magi-app/installations/new" in said


def test_an_installation_not_given_the_repository_says_so() -> None:
    double = healthy()
    double.fake.world(REPO).installed = False
    double.app_side.installations = {"octo": 7}
    said = _problems(_check(double))
    assert "installed on octo but not given octo/widgets" in said
    assert "Repository access" in said


def test_a_suspended_installation_and_permissions_not_accepted() -> None:
    double = healthy()
    w = double.fake.world(REPO)
    w.suspended = True
    w.granted = {**MANIFEST["default_permissions"], "workflows": "read"}
    said = _problems(_check(double))
    assert "is suspended" in said
    assert "has not granted workflows: write" in said
    assert "accept the App's updated permissions" in said


def test_an_inactive_webhook_from_setup_without_a_public_url() -> None:
    """Setup registers https://example.invalid/webhook, inactive: no delivery ever."""
    double = healthy()
    double.app_side.url = "https://example.invalid/webhook"
    double.app_side.deliveries = []
    said = _problems(_check(double))
    assert "the App's webhook has no address" in said
    assert f"set the Webhook URL to {PUBLIC}/webhook, tick Active" in said
    assert "no delivery of the App's webhook at all" in said


def test_a_webhook_pointing_elsewhere_is_named() -> None:
    double = healthy()
    double.app_side.url = "https://old.example.test/webhook"
    said = _problems(_check(double))
    assert f"points at https://old.example.test/webhook, not at {PUBLIC}/webhook" in said


@pytest.mark.parametrize(
    ("code", "status", "words"),
    [
        (401, "", "GITHUB_WEBHOOK_SECRET is not the App's webhook secret"),
        (503, "", "GET /healthz on the receiver names each problem"),
        (0, "failed to connect", "GitHub got no answer (failed to connect)"),
        (404, "", "must be the receiver's address followed by /webhook"),
    ],
)
def test_what_the_receiver_answered_the_label_is_explained(code, status, words) -> None:
    double = healthy()
    double.app_side.deliveries = [
        delivery(REPO.full_name, code, status=status, number=2),
        delivery(REPO.full_name, 202, event="push", action=None, number=1),
    ]
    assert words in _problems(_check(double))


def test_no_label_among_the_deliveries_is_said() -> None:
    double = healthy()
    double.app_side.deliveries = [delivery("someone/else", 202)]
    assert "none of GitHub's last 1 deliveries is a label on octo/widgets" in _problems(
        _check(double)
    )


def test_a_missing_or_older_workflow_on_the_default_branch() -> None:
    double = healthy()
    files_ = double.fake.world(REPO).files
    flow = files_.pop(("main", ".github/workflows/magi.yml"))
    said = _problems(_check(double))
    assert ".github/workflows/magi.yml is not on main" in said
    assert "magi init --github" in said
    start, end = flow.index("      park:"), flow.index("  # Without a receiver (docs/action.md")
    files_[("main", ".github/workflows/magi.yml")] = flow[:start] + flow[end:]
    said = _problems(_check(double))
    assert "lacks the inputs park" in said
    assert "magi init --github --force" in said


def test_a_public_repository_is_warned_not_failed() -> None:
    double = healthy()
    double.app_side.public.add(REPO.full_name)
    found = _check(double)
    assert _problems(found) == ""
    [warned] = [f for f in found if f.warn]
    assert "octo/widgets is public" in warned.why
    assert "an issue anyone may have written" in warned.why


def test_the_app_lacking_a_permission_or_an_event_names_its_page() -> None:
    double = healthy()
    double.app_permissions = {**MANIFEST["default_permissions"], "actions": "read"}
    double.app_side.events = [e for e in MANIFEST["default_events"] if e != "issues"]
    said = _problems(_check(double))
    assert "does not ask for actions: write" in said
    assert "not subscribed to issues" in said
    assert "https://github.com/settings/apps/magi-app/permissions" in said


def test_the_command_reads_the_env_file_and_exits_1_on_a_problem(tmp_path) -> None:
    double = healthy()
    double.fake.world(REPO).installed = False
    key = tmp_path / "magi-app.pem"
    key.write_text(KEY)
    env = tmp_path / "magi-app.env"
    env.write_text(
        f"GITHUB_APP_ID=1\nGITHUB_APP_PRIVATE_KEY_PATH='{key}'\n"
        f"GITHUB_API_URL=https://api.github.test\nMAGI_PUBLIC_URL={PUBLIC}\n"
    )
    args = ["app", "check", "octo/widgets", "--env-file", str(env)]
    got = invoke(args, obj=httpx.MockTransport(double))
    assert got.exit_code == 1, got.output
    assert "PROBLEM the App is not installed on octo/widgets" in got.output
    assert "fix: install it" in got.output
    double.fake.world(REPO).installed = True
    assert invoke(args, obj=httpx.MockTransport(double)).exit_code == 0


def test_the_double_keeps_what_github_keeps_of_the_apps_webhook() -> None:
    """The JWT only; the secret masked; at most 100 deliveries a page (docs URLs in
    magi.testing.github_app_routes)."""
    double = healthy()

    async def ask(path: str, token: str) -> httpx.Response:
        transport = httpx.MockTransport(double)
        async with httpx.AsyncClient(transport=transport, base_url="https://api.test") as c:
            headers = {"Authorization": f"Bearer {token}", "X-GitHub-Api-Version": API_VERSION}
            return await c.get(path, headers=headers)

    assert asyncio.run(ask("/app/hook/deliveries", "ghs_not_a_jwt")).status_code == 401
    assert asyncio.run(ask("/app/hook/config", "ghs_not_a_jwt")).status_code == 401
    double.app = None  # any JWT: the shapes
    config = asyncio.run(ask("/app/hook/config", "x")).json()
    assert config["secret"] == "********"
    assert "active" not in config  # not in GitHub's webhook-config schema
    assert asyncio.run(ask("/app/hook/deliveries?per_page=101", "x")).status_code == 422


def test_the_runners_are_said_not_checked_without_administration() -> None:
    [note] = [f for f in _check(healthy()) if f.note]
    assert "listing them needs administration: read" in note.why


def test_runners_granted_to_list_are_checked_for_the_labels() -> None:
    """Granted administration: read, the App sees whether a runner with [github]
    runner_labels is online, offline, or missing."""
    double = healthy()
    w = double.fake.world(REPO)
    w.granted = {**MANIFEST["default_permissions"], "administration": "read"}
    double.app_side.runners = [("box", "online", ["self-hosted", "magi"])]
    found = _check(double)
    assert _problems(found) == ""
    assert any("runner box is online with the labels self-hosted, magi" in f.why for f in found)
    double.app_side.runners = [("box", "offline", ["self-hosted", "magi"])]
    assert "(box) are offline" in _problems(_check(double))
    double.app_side.runners = [("other", "online", ["self-hosted", "gpu"])]
    said = _problems(_check(double))
    assert "no runner of the repository has the labels self-hosted, magi" in said
    assert "register a self-hosted runner" in said


def _serverless(double: GitHubHTTP) -> None:
    from magi.config.workflow import render_workflow

    flow = render_workflow(Source("acme/magi", SHA))  # `magi init --github`: its triggers on
    double.fake.world(REPO).files[("main", ".github/workflows/magi.yml")] = flow


def test_without_a_receiver_no_webhook_and_no_delivery_is_fine() -> None:
    """The workflow hears the events itself: the webhook setup left off, and no delivery
    ever made to it, are no problem."""
    double = healthy()
    _serverless(double)
    double.app_side.url = "https://example.invalid/webhook"
    double.app_side.deliveries = []
    found = _check(double)
    assert _problems(found) == ""
    assert any("the workflow hears the label and the comments itself" in f.why for f in found)


def test_a_webhook_that_delivers_beside_the_workflows_triggers_is_a_problem() -> None:
    """Both a receiver and the workflow's own triggers: each label would start twice."""
    double = healthy()
    _serverless(double)
    said = _problems(_check(double))
    assert "would be acted on twice" in said
    assert "magi init --github --receiver --force" in said
