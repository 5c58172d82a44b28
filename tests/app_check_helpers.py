"""A magi App setup where a label starts a run, on GitHub's HTTP double: the app check's
and the receiver's tests break one thing of it."""

from __future__ import annotations

from importlib.resources import files

from github_helpers import pem, public_pem
from magi.cli.app_setup import read_manifest
from magi.config.source import Source
from magi.config.workflow import render_workflow
from magi.github.models import Repo
from magi.testing.github import FakeGitHub
from magi.testing.github_app_routes import delivery
from magi.testing.github_http import GitHubHTTP

REPO = Repo(owner="octo", name="widgets")
SHA = "1234567890abcdef1234567890abcdef12345678"
PUBLIC = "https://magi.example.test"
MANIFEST = read_manifest(files("magi").joinpath("templates/app.yml").read_text(encoding="utf-8"))
KEY = pem()


def healthy() -> GitHubHTTP:
    """A setup where a label starts a run: the test breaks one thing of it."""
    fake = FakeGitHub()
    w = fake.world(REPO)
    w.granted = dict(MANIFEST["default_permissions"])
    flow = render_workflow(Source("acme/magi", SHA), receiver=True)  # a receiver's
    w.files[("main", ".github/workflows/magi.yml")] = flow
    double = GitHubHTTP(fake, app=("1", public_pem(KEY)))
    double.app_permissions = dict(MANIFEST["default_permissions"])
    double.app_side.events = list(MANIFEST["default_events"])
    double.app_side.url = f"{PUBLIC}/webhook"
    double.app_side.deliveries = [delivery(REPO.full_name, 202)]
    return double
