"""Set-up for the Action's tests: a repo whose origin is a bare repo, the runner's environment,
spying scripted agents, and compete/publish invoked as the workflow's steps invoke them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from github_helpers import PEM
from graph_helpers import scratch_repo
from magi.action.context import ActionContext
from magi.github.models import Repo
from magi.testing.cli import Result, invoke
from magi.testing.github import FakeGitHub

REPO = Repo(owner="octo", name="widgets")
ISSUE = 7
TITLE = "textstats: count words on any whitespace"
TOKEN = "ghs_" + "PublishJobOnlyToken0123456789abcdef"
IMPLEMENTERS = ("alphaimpl", "bravoimpl")
JUDGES = ("jurorone", "jurortwo", "jurorthree")

SPY = """\
import json, os, pathlib, sys
d = pathlib.Path(os.environ["MAGI_SCRIPTED_DIR"])
seen = {}
for p in pathlib.Path("/proc").iterdir():
    if p.name.isdigit():
        try:
            seen[p.name] = (p / "environ").read_bytes().decode("utf-8", "replace")
        except OSError:
            pass
(d / f"spy-{os.getpid()}.json").write_text(json.dumps({"own": dict(os.environ), "proc": seen}))
os.execv(sys.executable, [sys.executable, "-m", "magi.demo.scripted", *sys.argv[1:]])
"""

CONFIG = """\
{agents}
[roles]
implementers = {implementers}
judges = {judges}

[graph]
candidates = 2
timeout_implement = 60
timeout_judge = 60
timeout_verify = 60
{graph}

[verify]
e2e = ["python3 -m unittest -q"]

[merge]
mode = "local"  # a laptop's setting: on a runner the PR is the merge whatever this says

[sandbox]
state = [{state}]
"""


AGENT_JOBS = frozenset({"compete", "council", "review", "land"})


@dataclass
class World:
    """One test's runner: the repo compete runs in, the origin, the fake GitHub."""

    tmp: Path
    repo: Path
    remote: Path
    scripted: Path
    github: FakeGitHub
    title: str = TITLE  # the issue as the task job reads it when the run starts
    body: str = ""  # (empty: ISSUE_BODY)

    @property
    def home(self) -> Path:
        return self.tmp / "magi-home"

    def env(self, job: str) -> dict[str, str]:
        """The environment GitHub Actions gives a step of ``job`` (no token: see publish)."""
        temp = self.tmp / f"runner-temp-{job}"
        temp.mkdir(exist_ok=True)
        return {
            "GITHUB_ACTIONS": "true",
            "GITHUB_REPOSITORY": REPO.full_name,
            "GITHUB_API_URL": "https://api.github.example",
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_RUN_ID": "4242",
            "GITHUB_REF_NAME": "main",
            "GITHUB_STEP_SUMMARY": str(temp / "summary.md"),
            "GITHUB_OUTPUT": str(temp / "output"),
            "RUNNER_TEMP": str(temp),
            "MAGI_HOME": str(self.home),
            "MAGI_CONFIG_DIR": str(self.tmp / "no-user-config"),
            # The App's private key seals magi's markers; an agents job never holds it.
            **({} if job in AGENT_JOBS else {"MAGI_MARKER_KEY": PEM, "MAGI_APP_SLUG": "magi-app"}),
        }

    @property
    def artifact(self) -> Path:
        return self.tmp / "artifact"

    def issue_file(self) -> Path:
        path = self.tmp / "issue.json"
        issue = {"number": ISSUE, "title": self.title, "body": self.body or ISSUE_BODY}
        path.write_text(json.dumps(issue))
        return path

    def compete(
        self, *extra: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``magi action compete`` as its own process, with the agents job's environment."""
        full = {"PATH": os.environ["PATH"], "HOME": str(self.tmp), **self.env("compete")}
        full.update(env or {})
        argv = [sys.executable, "-m", "magi", "action", "compete", "--issue", str(ISSUE)]
        argv += ["--issue-file", str(self.issue_file()), "--artifact-dir", str(self.artifact)]
        return subprocess.run(
            [*argv, *extra],
            cwd=self.repo,
            env=full,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,  # a whole competition, bounded like every magi run in the suite
        )

    def publish_checkout(self) -> Path:
        """The publish job's own checkout: a fresh clone of origin."""
        where = self.tmp / "publish-checkout"
        if not where.exists():
            subprocess.run(["git", "clone", "-q", str(self.remote), str(where)], check=True)
        return where

    def publish(self, monkeypatch: pytest.MonkeyPatch, run_id: str = "") -> Result:
        """``magi action publish`` in-process, its GitHub port the fake."""
        monkeypatch.chdir(self.publish_checkout())
        env: dict[str, str | None] = {**self.env("publish"), "MAGI_GITHUB_TOKEN": TOKEN}
        args = ["action", "publish", "--issue", str(ISSUE), "--artifact-dir", str(self.artifact)]
        if run_id:
            args += ["--run", run_id]
        return invoke(
            args,
            env=env,
            catch_exceptions=False,
            obj=ActionContext(ports=lambda _u, _t: self.github),
        )

    def spied(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in sorted(self.scripted.glob("spy-*.json"))]

    def remote_refs(self) -> dict[str, str]:
        out = subprocess.run(
            ["git", "ls-remote", str(self.remote)], capture_output=True, text=True, check=True
        ).stdout
        return {ref: sha for sha, ref in (line.split("\t") for line in out.splitlines())}


ISSUE_BODY = (
    "`word_count` should count words separated by any whitespace, and "
    '`average_word_length("")` should return 0.0. Run `python3 -m unittest -q`.\n'
    "cc @octocat"
)


def make_world(
    tmp: Path,
    judges: str = "evidence",
    graph: str = "",
    implementers: tuple[str, str] = ("right", "wrong"),
) -> World:
    """A repo with magi.toml on main (the default branch's config), origin a bare repo."""
    repo = scratch_repo(tmp)
    subprocess.run(["git", "symbolic-ref", "HEAD", "refs/heads/main"], cwd=tmp / "remote.git")
    scripted = tmp / "scripted"
    scripted.mkdir()
    spy = scripted / "spy.py"  # inside the jail only the agents' own state dir is theirs
    spy.write_text(SPY)
    personas = dict(zip(IMPLEMENTERS, implementers, strict=True))
    personas.update(dict.fromkeys(JUDGES, judges))
    blocks = []
    for aid, persona in personas.items():
        command = [sys.executable, str(spy), persona]
        blocks.append(
            f'[[agents]]\nid = "{aid}"\nkind = "command"\ncommand = {json.dumps(command)}\n'
            f'env = {{ MAGI_SCRIPTED_DIR = "{scripted}" }}\n'
        )
    (repo / "magi.toml").write_text(
        CONFIG.format(
            agents="\n".join(blocks),
            implementers=json.dumps(list(IMPLEMENTERS)),
            judges=json.dumps(list(JUDGES)),
            graph=graph,
            state=json.dumps(str(scripted)),
        )
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "add", "magi.toml"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "magi config"], cwd=repo, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=repo, check=True)
    github = FakeGitHub()
    github.add_issue(REPO, ISSUE, TITLE, ISSUE_BODY)
    return World(tmp, repo, tmp / "remote.git", scripted, github)


def competed_world(tmp: Path) -> tuple[World, str]:
    """A world competed once (``magi action compete`` as its own process): it and the run id."""
    world = make_world(tmp)
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    out = (world.tmp / "runner-temp-compete" / "output").read_text()
    found = re.search(r"^run-id=(\S+)$", out, re.M)
    assert found, out
    return world, found.group(1)


def records_step(world: World, at: Path) -> Path:
    """The compete job's records step: ``refs/magi/runs/*`` fetched from origin into a
    bare repository of its own (``at``)."""
    if not at.exists():
        subprocess.run(["git", "init", "-q", "--bare", str(at)], check=True)
    subprocess.run(
        ["git", "-C", str(at), "fetch", "-q", str(world.remote),
         "+refs/magi/runs/*:refs/magi/runs/*"],
        check=True,
    )  # fmt: skip
    return at
