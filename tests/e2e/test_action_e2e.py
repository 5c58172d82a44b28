"""The whole road on a runner: compete (agents, no credential) then publish (the App token)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from action_helpers import (
    IMPLEMENTERS,
    ISSUE,
    JUDGES,
    REPO,
    TITLE,
    TOKEN,
    World,
    competed_world,
    make_world,
)
from github_helpers import SEAL
from magi.core.threads.posting import LIMIT
from magi.model.config import Sandbox
from magi.sandbox.bwrap import decide
from magi.state.store import Store
from magi.testing.action import WRITES

NAMES = (*IMPLEMENTERS, *JUDGES)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, str]:
    """One competition, competed once for the whole module (it is the slow part)."""
    return competed_world(tmp_path_factory.mktemp("action"))


@pytest.fixture
def published(ran: tuple[World, str], monkeypatch: pytest.MonkeyPatch) -> tuple[World, str]:
    world, run_id = ran
    if not world.github.named("create_pull"):
        res = world.publish(monkeypatch, run_id)
        assert res.exit_code == 0, res.output
    return world, run_id


def _posted(world: World) -> list[str]:
    """Every text magi sent to GitHub, in order."""
    texts: list[str] = []
    for call in world.github.calls:
        for key in ("body", "title"):
            value = call.args.get(key)
            if isinstance(value, str):
                texts.append(value)
    for pull in world.github.world(REPO).pulls.values():
        texts += [pull.title, pull.body or ""]
    return texts


def test_branches_are_pushed_with_label_names_only(published):
    """Origin gains magi/<run>/<label> branches and the record ref; no name says who wrote what."""
    world, run_id = published
    refs = world.remote_refs()
    branches = [r for r in refs if r.startswith("refs/heads/magi/")]
    assert branches
    assert all(re.fullmatch(rf"refs/heads/magi/{run_id}/[A-Z]", r) for r in branches)
    assert f"refs/magi/runs/{run_id}" in refs
    log = subprocess.run(
        ["git", "log", "--format=%an %ae %cn %ce %B", *branches],
        cwd=world.remote,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert not [n for n in NAMES if n in log]


def test_the_pr_is_opened_from_the_winner_with_its_three_comments(published):
    """One PR from the winner's branch, titled from the issue, closing it; three comments."""
    world, run_id = published
    pulls = list(world.github.world(REPO).pulls.values())
    assert len(pulls) == 1
    pr = pulls[0]
    assert pr.title == TITLE
    assert re.fullmatch(rf"magi/{run_id}/[A-Z]", pr.head.ref)
    assert f"Closes #{ISSUE}" in (pr.body or "")
    run = Store(world.home).load_run(run_id)
    assert run.review is not None
    assert run.review.outcome == "clean"
    assert run.gate is not None
    assert run.gate.passed
    assert not pr.draft  # reviewed clean and gated green: ready for review
    bodies = world.github.comments_on(REPO, pr.number)
    parts = {m["part"] for b in bodies for m in SEAL.find([b], "comment", run=run_id)}
    assert parts == {"tally", "transcripts", "review"}
    assert all(len(b) <= LIMIT for b in bodies)
    tally = next(b for b in bodies if "part=tally" in b)
    assert "Unblinding" in tally  # the tally is stored: authors may now be named


def test_mentions_in_issue_text_ping_nobody(published):
    """The issue's '@octocat' reaches the PR body without notifying anyone."""
    world, _ = published
    assert not [t for t in _posted(world) if re.search(r"(?<![\w`])@octocat", t)]


def test_every_marker_magi_posted_is_sealed(published):
    """Every `<!-- magi:` in everything publish sent (comments, PR, check run, issues) is a
    marker sealed by magi's key: the App reads no other."""
    world, _ = published
    texts = _posted(world)
    assert sum(len(SEAL.read(t)) for t in texts) >= 4  # the PR's and its comments' at least
    for text in texts:
        assert len(re.findall(r"(?i)<!--\s*magi:", text)) == len(SEAL.read(text)), text


def test_the_check_run_and_tracking_comment(published):
    """A `magi` check run on the winner's head; one tracking comment with the links."""
    world, run_id = published
    pr = next(iter(world.github.world(REPO).pulls.values()))
    head = world.remote_refs()[f"refs/heads/{pr.head.ref}"]
    checks = world.github.world(REPO).checks[head]
    assert [c.name for c in checks] == ["magi"]
    tracking = [b for b in world.github.comments_on(REPO, ISSUE) if "magi:tracking" in b]
    assert len(tracking) == 1
    assert f"pull/{pr.number}" in tracking[0]
    assert "actions/runs/4242" in tracking[0]
    summary = (world.tmp / "runner-temp-publish" / "summary.md").read_text()
    assert run_id in summary
    compete_summary = (world.tmp / "runner-temp-compete" / "summary.md").read_text()
    assert "- [x] implement" in compete_summary


def test_publishing_twice_changes_nothing(published, monkeypatch):
    """A second publish of the same artifact makes no write and moves no ref."""
    world, run_id = published
    refs = world.remote_refs()
    before = len(world.github.calls)
    res = world.publish(monkeypatch, run_id)
    assert res.exit_code == 0, res.output
    again = world.github.calls[before:]
    assert again  # it did look
    assert [c.name for c in again if c.name in WRITES] == []
    assert world.remote_refs() == refs


def test_no_agent_could_read_a_token(ran):
    """Agents saw no token: not in their own environment, not in any /proc/*/environ."""
    world, _ = ran
    spied = world.spied()
    assert spied
    seen_magi = any("MAGI_HOME=" in env for s in spied for env in s["proc"].values())
    if decide(Sandbox()).jailed:
        # Its own pid namespace: not even magi's process is visible from inside the jail.
        assert not seen_magi
    else:
        # The spy really reads other processes: magi's own environment is among them.
        assert seen_magi
    for s in spied:
        texts = [json.dumps(s["own"]), *s["proc"].values()]
        for text in texts:
            assert TOKEN not in text
            assert not re.search(r"(?:^|\x00)(GITHUB_TOKEN|GH_TOKEN|MAGI_GITHUB_TOKEN)=", text)
            assert not re.search(r"gh[pousr]_[A-Za-z0-9]{20,}", text)


def test_compete_refuses_a_token_in_its_environment(tmp_path):
    """A token set on the agents job's step stops compete before any agent starts."""
    world = make_world(tmp_path)
    res = world.compete(env={"GITHUB_TOKEN": "ghs_" + "x" * 36})
    assert res.returncode == 21, res.stdout + res.stderr
    assert "GITHUB_TOKEN" in res.stderr
    assert not world.spied()


def test_compete_refuses_a_checkout_with_persisted_credentials(tmp_path, monkeypatch):
    """An extraheader left by actions/checkout is refused, with the fix, said on the issue."""
    world = make_world(tmp_path)
    subprocess.run(
        ["git", "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic eA=="],
        cwd=world.repo,
        check=True,
    )
    res = world.compete()
    assert res.returncode == 21, res.stdout + res.stderr
    assert "persist-credentials: false" in res.stderr
    assert "eA==" not in res.stderr
    assert not world.spied()
    out = world.publish(monkeypatch)
    assert out.exit_code == 20
    told = world.github.comments_on(REPO, ISSUE)[-1]
    assert "persist-credentials: false" in told
    assert "eA==" not in told


def _tamper(world: World, how: str) -> None:
    """Rewrite the artifact's bundle the way an agent with the runner's user could."""
    manifest_path = world.artifact / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    run_id = manifest["run"]
    label = sorted(manifest["heads"])[0]
    git = ["git", "-c", "user.name=x", "-c", "user.email=x@example.invalid"]
    refs = [f"refs/heads/magi/{run_id}/{lb}" for lb in manifest["heads"]]
    if how == "extra-ref":
        subprocess.run([*git, "branch", "-f", "evil", "main"], cwd=world.repo, check=True)
        refs.append("refs/heads/evil")
    else:  # a commit that does not descend from the base
        tree = subprocess.run(
            ["git", "rev-parse", "main^{tree}"], cwd=world.repo, capture_output=True, text=True
        ).stdout.strip()
        orphan = subprocess.run(
            [*git, "commit-tree", tree, "-m", "unrelated"],
            cwd=world.repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        subprocess.run(
            ["git", "update-ref", f"refs/heads/magi/{run_id}/{label}", orphan], cwd=world.repo
        )
        manifest["heads"][label] = orphan
        manifest_path.write_text(json.dumps(manifest))
    subprocess.run(
        ["git", "bundle", "create", "-q", str(world.artifact / "candidates.bundle"), *refs],
        cwd=world.repo,
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize("how", ["extra-ref", "not-from-base"])
def test_a_tampered_bundle_is_refused(tmp_path, monkeypatch, how):
    """An extra ref, or a commit not descending from the base: nothing pushed, the issue told."""
    world = make_world(tmp_path)
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    _tamper(world, how)
    before = world.remote_refs()
    out = world.publish(monkeypatch)
    assert out.exit_code == 22, out.output
    assert world.remote_refs() == before
    assert not world.github.named("create_pull")
    told = world.github.comments_on(REPO, ISSUE)
    assert told
    assert "refused" in told[-1]


def test_a_stalled_run_names_no_agent_and_is_edited_in_place_when_it_resumes(tmp_path, monkeypatch):
    """Judges on quota: stalled, labelled, nobody named; resumed, the same comment is edited."""
    world = make_world(tmp_path, judges="quota-until-unlock:evidence", graph="failover = false")
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    out = world.publish(monkeypatch)
    assert out.exit_code == 0, out.output
    assert world.github.labels_on(REPO, ISSUE) == ["magi:stalled"]
    assert not [r for r in world.remote_refs() if r.startswith("refs/heads/magi/")]
    for text in _posted(world):
        assert not [n for n in NAMES if n in text], text
    first = [c for c in world.github.world(REPO).comments[ISSUE] if "magi:tracking" in c.body]
    assert len(first) == 1
    assert "spent=0" in first[0].body  # a quota stall spends no attempt

    (world.scripted / "unlock").write_text("")
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    assert "resuming run" in res.stdout
    out = world.publish(monkeypatch)
    assert out.exit_code == 0, out.output
    tracking = [c for c in world.github.world(REPO).comments[ISSUE] if "magi:tracking" in c.body]
    assert [c.id for c in tracking] == [first[0].id]
    assert tracking[0].body != first[0].body
    assert world.github.labels_on(REPO, ISSUE) == []
    assert world.github.named("create_pull")


def _paths(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_the_artifact_is_scrubbed(ran):
    """The uploaded record names no local path of the runner."""
    world, _ = ran
    for path in _paths(world.artifact):
        if path.suffix in (".json", ".md", ".txt"):
            assert str(world.tmp) not in path.read_text(errors="replace"), path


def test_on_a_runner_the_pull_request_is_the_merge(ran):
    """merge.mode = local in the repo's config: compete records pr and squashes nothing."""
    world, run_id = ran
    run = Store(world.home).load_run(run_id)
    assert run.merge is not None
    assert (run.config.merge.mode, run.merge.mode, run.merge.result) == ("pr", "pr", "printed")
    assert run.status.value == "ready"
    main = subprocess.run(
        ["git", "-C", str(world.repo), "log", "--format=%s", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert run.task.cleaned.splitlines()[0] not in main  # nothing squashed onto the base


def test_a_run_whose_pr_ended_is_not_published_again(published, monkeypatch):
    """The record says merged (the App wrote it): a late publish writes nothing at all."""
    world, run_id = published
    ref = f"refs/magi/runs/{run_id}"
    old = world.remote_refs()[ref]

    def git(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["git", "-C", str(world.remote), *args],
            input=stdin, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout.strip()

    record = json.loads(git("cat-file", "blob", f"{old}:run.json"))
    record["status"] = "merged"
    blob = git("hash-object", "-w", "--stdin", stdin=json.dumps(record))
    entries = git("ls-tree", old).replace(git("rev-parse", f"{old}:run.json"), blob)
    tree = git("mktree", stdin=entries + "\n")
    ended = git("commit-tree", tree, "-p", old, "-m", "merged", stdin="")
    git("update-ref", ref, ended, old)
    try:
        refs = world.remote_refs()
        before = len(world.github.calls)
        res = world.publish(monkeypatch, run_id)
        assert res.exit_code == 0, res.output
        assert [c.name for c in world.github.calls[before:] if c.name in WRITES] == []
        assert world.remote_refs() == refs
    finally:
        git("update-ref", ref, old, ended)
