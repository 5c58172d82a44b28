"""`/magi stop` on a runner parks the run at its next node boundary: the App under uvicorn,
compete as its own process (the agents job: no credential) asking that App over HTTP, the
seat that was out finishing its turn, publish saying so, and `/magi retry` carrying it on
with no implementer asked again."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import uvicorn

from action_helpers import ISSUE, REPO, World, make_world
from app_e2e_helpers import _payload
from github_helpers import PEM, SECRET, issue_comment, sign
from graph_helpers import calls, wait_for
from magi.app import Settings, create_app
from magi.core.person.park import HEADER, read_channel
from magi.github.models import Repo
from magi.github.port import GitHubPort
from magi.model.run import RunStatus
from magi.state.store import Store


@dataclass
class Served:
    """The App, served by uvicorn on a loopback port its settings name as its public URL."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread
    deliveries: int = 0

    def deliver(self, event: str, payload: dict[str, Any]) -> None:
        self.deliveries += 1
        body = json.dumps(payload).encode()
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": f"park-{self.deliveries}",
            "X-Hub-Signature-256": sign(body, SECRET),
            "Content-Type": "application/json",
        }
        answer = httpx.post(f"{self.url}/webhook", content=body, headers=headers)
        assert answer.status_code == 200, answer.text


@pytest.fixture
def served(tmp_path) -> Iterator[tuple[World, Served]]:
    world = make_world(tmp_path, implementers=("right", "wait-for-unlock:partial"))
    fake = world.github
    fake.world(REPO).permissions["maintainer"] = "write"

    async def ports(_installation: int | None, _repo: Repo) -> GitHubPort:
        return fake

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    settings = Settings(
        app_id="1", private_key=PEM, webhook_secret=SECRET, app_slug="magi-app", public_url=url
    )
    app = create_app(
        settings,
        ports=ports,
        clock=lambda: datetime.now(UTC),  # a "no" the App keeps in memory expires
        rand=random.Random(5),
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_for(lambda: server.started or not thread.is_alive(), "uvicorn to serve")
    assert server.started, "uvicorn stopped before it served"
    yield world, Served(url, server, thread)
    server.should_exit = True
    thread.join(timeout=30)
    sock.close()


def _compete(world: World, inputs: dict[str, str]) -> subprocess.Popen[str]:
    """The compete job's step, as the workflow gives it the dispatch's inputs."""
    env = {"PATH": os.environ["PATH"], "HOME": str(world.tmp), **world.env("compete")}
    env["MAGI_PARK"] = inputs.get("park", "")
    argv = [sys.executable, "-m", "magi", "action", "compete", "--issue", str(ISSUE)]
    argv += ["--issue-file", str(world.issue_file()), "--artifact-dir", str(world.artifact)]
    argv += ["--run-id", inputs["run_id"]]
    return subprocess.Popen(
        argv, cwd=world.repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _comment(body: str) -> dict[str, Any]:
    """A writer's comment on the world's issue, as GitHub delivers it."""
    p = issue_comment(body, login="maintainer", number=ISSUE)
    p["repository"].update(full_name=REPO.full_name, name=REPO.name)
    p["repository"]["owner"]["login"] = REPO.owner
    return p


def _parking(served: Served, inputs: dict[str, str]) -> bool:
    channel = read_channel(inputs["park"], REPO.full_name, inputs["run_id"])
    answer = httpx.get(channel.url, headers={HEADER: channel.key})
    assert answer.status_code == 200, answer.text
    return bool(answer.json()["park"])


def test_a_writers_stop_parks_the_run_at_its_boundary_and_a_retry_carries_it_on(
    served, monkeypatch
) -> None:
    world, app = served
    fake = world.github
    app.deliver("issues", _payload())
    wait_for(lambda: len(fake.world(REPO).dispatches) == 1, "the App's dispatch")
    inputs = fake.world(REPO).dispatches[0]["inputs"]
    run_id = inputs["run_id"]
    assert inputs["park"], "the App hands the run where to ask"

    job = _compete(world, inputs)
    try:
        wait_for(lambda: bool(list(world.scripted.glob("waiting-*"))), "a seat still out")
        app.deliver("issue_comment", _comment("/magi stop"))
        wait_for(lambda: _parking(app, inputs), "the App to record the park")
        (world.scripted / "unlock").write_text("")  # the seat that was out finishes its turn
        out, _ = job.communicate(timeout=300)
    finally:
        job.kill()
    assert job.returncode == 0, out
    run = Store(world.home).load_run(run_id)
    assert run.status is RunStatus.PARKED, run.reason
    assert "parked before verify (/magi stop on the issue)" in (run.reason or "")
    assert all(c.status == "ok" for c in run.candidates), "the seat that was out is kept"
    replies = [c for c in fake.comments_on(REPO, ISSUE) if "Parking magi run" in c]
    assert len(replies) == 1
    assert "next node boundary" in replies[0]
    assert not fake.named("cancel_workflow_run"), "nothing was cancelled"

    published = world.publish(monkeypatch, run_id)
    assert published.exit_code == 0, published.output
    tracking = [c for c in fake.comments_on(REPO, ISSUE) if "**parked**" in c]
    assert tracking, fake.comments_on(REPO, ISSUE)
    assert "No attempt was spent" in tracking[-1]
    assert "Parked: parked before verify (/magi stop on the issue). No attempt" in tracking[-1]
    assert "magi run --resume" not in tracking[-1], "the runner's instruction, not a laptop's"
    assert f"magi/park/{run_id}" not in fake.world(REPO).refs, "publish withdrew it"

    w = fake.world(REPO)
    for wid, r in w.runs.items():  # the workflow run ended, as GitHub would say
        w.runs[wid] = r.model_copy(update={"status": "completed", "conclusion": "success"})
    paid = Counter((c["seat"], c["node"]) for c in calls(world.scripted))
    app.deliver("issue_comment", _comment("/magi retry"))
    wait_for(lambda: len(w.dispatches) == 2, "the retry's dispatch")
    again = w.dispatches[-1]["inputs"]
    assert again["run_id"] == run_id
    resumed = _compete(world, again)
    out, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, out
    run = Store(world.home).load_run(run_id)
    assert run.status is RunStatus.READY, run.reason
    now = Counter((c["seat"], c["node"]) for c in calls(world.scripted))
    for c in run.candidates:
        assert now[(c.seat, "implement")] == paid[(c.seat, "implement")] == 1, "asked once"
