"""The Action's publish killed -9 between its irreversible steps, then run again.

A push and a pull request cannot be taken back, and publish writes the record ref (what it
did) last. So a publish killed after pushing the branches, or after opening the pull
request, leaves GitHub ahead of the record: the next publish of the same artifact must see
what is already there and go on from it (no second pull request, no comment twice, no
rejected push), ending where an unkilled publish ends.

publish runs as its own process here, as on a runner, talking HTTP to the GitHub double
served under uvicorn, and ``MAGI_FAILPOINT`` has it send itself SIGKILL at the instant.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

from action_helpers import ISSUE, REPO, TITLE, TOKEN, World, competed_world
from magi.github.port import GitHubError
from magi.testing.github import FakeGitHub
from magi.testing.github_http import GitHubHTTP, asgi


@contextmanager
def served(world: World) -> Iterator[str]:
    """The world's GitHub double over HTTP; the socket listens before the server starts, so a
    client's first request waits in its backlog rather than racing the start-up."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(
        uvicorn.Config(
            asgi(GitHubHTTP(world.github)), log_level="warning", access_log=False, lifespan="off"
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


def publish_process(world: World, run_id: str, api: str, point: str) -> int:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(world.tmp),
        **world.env("publish"),
        "GITHUB_API_URL": api,
        "MAGI_GITHUB_TOKEN": TOKEN,
        "MAGI_FAILPOINT": point,
    }
    argv = [sys.executable, "-m", "magi", "action", "publish", "--issue", str(ISSUE)]
    argv += ["--artifact-dir", str(world.artifact), "--run", run_id]
    done = subprocess.run(
        argv,
        cwd=world.publish_checkout(),
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    return done.returncode


@pytest.fixture(scope="module")
def competed(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, str]:
    return competed_world(tmp_path_factory.mktemp("publish-kill"))


@pytest.mark.parametrize("point", ["publish:pushed", "publish:pr"])
def test_a_publish_killed_between_its_steps_is_finished_by_the_next(
    competed: tuple[World, str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    point: str,
) -> None:
    base, run_id = competed
    # A world of its own per kill, sharing the competed artifact and a copy of the remote.
    tmp = tmp_path_factory.mktemp(point.replace(":", "-"))
    subprocess.run(["cp", "-a", f"{base.tmp}/.", str(tmp)], check=True)
    world = make_world_like(base, tmp)

    with served(world) as api:
        code = publish_process(world, run_id, api, point)
    assert code == -signal.SIGKILL, "publish was to be killed at the failpoint"
    refs = world.remote_refs()
    branches = {r: s for r, s in refs.items() if r.startswith(f"refs/heads/magi/{run_id}/")}
    assert branches, "the branches were pushed before the kill"
    assert f"refs/magi/runs/{run_id}" not in refs, "the record ref is written last"
    pulls = world.github.world(REPO).pulls
    assert len(pulls) == (1 if point == "publish:pr" else 0)

    res = world.publish(monkeypatch, run_id)
    assert res.exit_code == 0, res.output
    after = world.remote_refs()
    assert {r: s for r, s in after.items() if r in branches} == branches, "no push moved them"
    assert f"refs/magi/runs/{run_id}" in after
    (pr,) = world.github.world(REPO).pulls.values()
    assert pr.head.ref.startswith(f"magi/{run_id}/")
    posted = world.github.world(REPO).comments.get(pr.number, [])
    parts = [re.search(r'part="?(\w+)', c.body or "") for c in posted]
    named = sorted(m.group(1) for m in parts if m)
    assert named == sorted(set(named)), f"a comment was posted twice: {named}"
    assert set(named) >= {"tally", "transcripts", "review"}
    tracking = [c for c in world.github.world(REPO).comments.get(ISSUE, []) if "tracking" in c.body]
    assert len(tracking) == 1
    assert len(world.github.named("create_pull")) == 1


def make_world_like(base: World, root: Path) -> World:
    """``base`` moved to ``root`` (a copy of its folder), with a GitHub of its own."""
    github = FakeGitHub()
    github.add_issue(REPO, ISSUE, TITLE, "count words")

    def moved(p: Path) -> Path:
        return root / p.relative_to(base.tmp)

    return World(root, moved(base.repo), moved(base.remote), moved(base.scripted), github)


def test_a_pr_github_refuses_loses_nothing_else_and_a_re_run_opens_it(
    competed: tuple[World, str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """POST /pulls refused after the push: tracking and record are still written, the job
    fails naming GitHub's words, and the next publish opens the PR and succeeds."""
    base, run_id = competed
    tmp = tmp_path_factory.mktemp("refused")
    subprocess.run(["cp", "-a", f"{base.tmp}/.", str(tmp)], check=True)
    world = make_world_like(base, tmp)
    world.github.world(REPO).visibility = "private"  # GitHub Free: no drafts (none asked: green)
    world.github.fail("create_pull", GitHubError("Validation Failed: no commits", status=422))

    res = world.publish(monkeypatch, run_id)
    assert res.exit_code != 0
    assert "Validation Failed: no commits" in res.output
    refs = world.remote_refs()
    assert [r for r in refs if r.startswith(f"refs/heads/magi/{run_id}/")]
    assert f"refs/magi/runs/{run_id}" in refs, "the record ref is written all the same"
    assert not world.github.world(REPO).pulls
    (tracking,) = [b for b in world.github.comments_on(REPO, ISSUE) if "magi:tracking" in b]
    assert "GitHub refused to open the pull request (422: Validation Failed" in tracking

    again = world.publish(monkeypatch, run_id)
    assert again.exit_code == 0, again.output
    (pr,) = world.github.world(REPO).pulls.values()
    (tracking,) = [b for b in world.github.comments_on(REPO, ISSUE) if "magi:tracking" in b]
    assert f"pull/{pr.number}" in tracking
    assert "refused" not in tracking


def _refuse_pushes_of(world: World, ref: str) -> None:
    """A pre-receive hook on origin that refuses ``ref`` the way a GitHub ruleset does."""
    hook = world.remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "while read old new ref; do\n"
        f'  if [ "$ref" = "{ref}" ]; then\n'
        '    echo "GH013: Repository rule violations found for $ref." >&2\n'
        '    echo "- Push cannot contain secrets" >&2\n'
        "    exit 1\n"
        "  fi\n"
        "done\n"
    )
    hook.chmod(0o755)


@pytest.mark.parametrize("whose", ["loser", "winner"])
def test_a_refused_push_is_said_and_the_rest_goes_on(
    competed: tuple[World, str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    whose: str,
) -> None:
    """GitHub refuses one candidate's branch: a loser's is said and the PR opens; the
    winner's is said on the issue with GitHub's words and the fix, and the job fails."""
    from magi.state.store import Store

    base, run_id = competed
    tmp = tmp_path_factory.mktemp(f"refused-{whose}")
    subprocess.run(["cp", "-a", f"{base.tmp}/.", str(tmp)], check=True)
    world = make_world_like(base, tmp)
    tally = Store(world.home).load_run(run_id).tally
    assert tally is not None
    winner = tally.winner
    loser = next(lb for lb in ("A", "B") if lb != winner)
    label = winner if whose == "winner" else loser
    _refuse_pushes_of(world, f"refs/heads/magi/{run_id}/{label}")

    res = world.publish(monkeypatch, run_id)
    refs = world.remote_refs()
    assert f"refs/heads/magi/{run_id}/{label}" not in refs
    assert f"refs/magi/runs/{run_id}" in refs, "the record is written all the same"
    (tracking,) = [b for b in world.github.comments_on(REPO, ISSUE) if "magi:tracking" in b]
    assert "GH013: Repository rule violations found" in tracking
    if whose == "loser":
        assert res.exit_code == 0, res.output
        assert f"Candidate {loser} was not pushed" in tracking
        (pr,) = world.github.world(REPO).pulls.values()
        assert pr.head.ref == f"magi/{run_id}/{winner}"
    else:
        assert res.exit_code != 0
        assert "GH013" in res.output
        assert "The winner was not pushed" in tracking
        assert "Fix what GitHub names" in tracking
        assert f"refs/heads/magi/{run_id}/{loser}" in refs
        assert not world.github.world(REPO).pulls


PUBLISH_BUDGET = 17  # calls to GitHub of a first publish of a two-candidate run, as measured


def test_a_publish_stays_within_its_api_budget(
    competed: tuple[World, str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first publish (PR, three comments, check, tracking, record) spends at most its
    budget (the doubles count every call the job makes)."""
    base, run_id = competed
    tmp = tmp_path_factory.mktemp("budget")
    subprocess.run(["cp", "-a", f"{base.tmp}/.", str(tmp)], check=True)
    world = make_world_like(base, tmp)
    res = world.publish(monkeypatch, run_id)
    assert res.exit_code == 0, res.output
    spent = [c.name for c in world.github.calls]
    assert len(spent) <= PUBLISH_BUDGET, spent
