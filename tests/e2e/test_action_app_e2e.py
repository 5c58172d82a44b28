"""The whole road to an open PR: the App under uvicorn, a signed issues.labeled, the dispatch
inputs handed to compete and publish as the workflow would, one FakeGitHub behind both."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import UTC, datetime

import httpx
import uvicorn

from action_helpers import ISSUE, REPO, make_world
from app_e2e_helpers import _payload
from github_helpers import SEAL, SECRET, fixture, sign
from magi.app import Settings, create_app
from magi.core.threads import markers
from magi.core.threads.progress import RunTitle, title
from magi.github.models import Comment, Repo, WorkflowJob
from magi.github.port import GitHubPort
from magi.testing.github import APP_LOGIN, FakeGitHub

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----"


async def _deliver_under_uvicorn(
    app: object, body: bytes, event: str = "issues", delivery: str = "e2e-1"
) -> httpx.Response:
    """Serve the App with uvicorn on a free port, POST one delivery, shut down gracefully
    (which waits for the delivery's background work: the dispatch)."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")  # type: ignore[arg-type]
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:  # yields to the server's start-up; no clock involved
        if serving.done():  # it failed to start: say why instead of spinning forever
            serving.result()
            raise AssertionError("uvicorn stopped before it started serving")
        await asyncio.sleep(0)
    port = server.servers[0].sockets[0].getsockname()[1]
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(body, SECRET),
        "Content-Type": "application/json",
    }
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        response = await client.post("/webhook", content=body, headers=headers)
    server.should_exit = True
    await serving
    return response


def test_a_label_ends_in_an_open_pr(tmp_path, monkeypatch):
    """labeled -> App claims and dispatches -> compete with the inputs -> publish opens the PR."""
    world = make_world(tmp_path)
    fake = world.github
    fake.world(REPO).permissions["maintainer"] = "write"

    async def ports(_installation: int | None, _repo: Repo) -> GitHubPort:
        return fake

    settings = Settings(app_id="1", private_key=PEM, webhook_secret=SECRET, app_slug="magi-app")
    app = create_app(
        settings,
        ports=ports,
        clock=lambda: datetime(2026, 12, 1, 9, 0, tzinfo=UTC),
        rand=random.Random(3),
    )
    response = asyncio.run(_deliver_under_uvicorn(app, json.dumps(_payload()).encode()))
    assert response.status_code == 200, response.text
    dispatches = fake.world(REPO).dispatches
    assert len(dispatches) == 1, fake.calls
    inputs = dispatches[0]["inputs"]
    assert inputs["issue"] == str(ISSUE)
    assert inputs["command"] == "compete"

    # GitHub starts the dispatched run, named by the workflow's run-name; its first job
    # queues: the App shows it on the issue's tracking comment.
    [wid] = fake.world(REPO).runs
    fake.add_run(REPO, wid, title(RunTitle("compete", ISSUE, run=inputs["run_id"])))
    fake.set_job(REPO, wid, WorkflowJob(id=1, name="Read the issue", status="queued"))
    job = _job_event(wid)
    response = asyncio.run(_deliver_under_uvicorn(app, job, "workflow_job", "e2e-2"))
    assert response.status_code == 200, response.text
    [tracked] = _tracking(fake)
    assert "Read the issue: queued" in tracked.body

    res = world.compete("--run-id", inputs["run_id"])
    assert res.returncode == 0, res.stdout + res.stderr
    out = world.publish(monkeypatch, inputs["run_id"])
    assert out.exit_code == 0, out.output

    pulls = list(fake.world(REPO).pulls.values())
    assert len(pulls) == 1
    assert pulls[0].head.ref.startswith(f"magi/{inputs['run_id']}/")
    assert SEAL.find([pulls[0].body or ""], markers.PR, issue=str(ISSUE), run=inputs["run_id"])
    bodies = fake.comments_on(REPO, ISSUE)
    assert SEAL.find(bodies, markers.RUN, run=inputs["run_id"])  # the App's acknowledgement
    assert SEAL.find(bodies, "tracking", run=inputs["run_id"])  # publish's progress
    # One tracking comment throughout: publish wrote its checklist into the App's comment
    # and kept the jobs part; the publish job's own end is then shown in place.
    [published] = _tracking(fake)
    assert published.id == tracked.id
    assert f"Run `{inputs['run_id']}`" in published.body
    assert "Read the issue: queued" in published.body
    fake.set_job(
        REPO, wid, WorkflowJob(id=3, name="Publish", status="completed", conclusion="success")
    )
    asyncio.run(_deliver_under_uvicorn(app, _job_event(wid), "workflow_job", "e2e-3"))
    [final] = _tracking(fake)
    assert final.id == tracked.id
    assert f"Run `{inputs['run_id']}`" in final.body
    assert "- [x] Publish: success" in final.body


def _job_event(run_id: int) -> bytes:
    p = fixture("workflow_job.queued")
    p["repository"].update(full_name=REPO.full_name, name=REPO.name, default_branch="main")
    p["workflow_job"].update(run_id=run_id, workflow_name="magi")
    p["sender"].update(login=APP_LOGIN, type="Bot")
    return json.dumps(p).encode()


def _tracking(fake: FakeGitHub) -> list[Comment]:
    thread = fake.world(REPO).comments.get(ISSUE, [])
    return [c for c in thread if SEAL.find([c.body], "tracking", issue=str(ISSUE))]
