"""Publish trusts nothing the agents job wrote but results: its policy is the default
branch's at publish time, its workflow guard compares trees with that branch's head, and
no candidate that would publish a secret is pushed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from action_helpers import ISSUE, ISSUE_BODY, REPO, TITLE, World, make_world
from magi.testing.github import FakeGitHub

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def _competed(world: World) -> None:
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr


def _magi_branches(world: World) -> list[str]:
    return sorted(r for r in world.remote_refs() if r.startswith("refs/heads/magi/"))


def _tracking(world: World) -> str:
    (body,) = [b for b in world.github.comments_on(REPO, ISSUE) if "magi:tracking" in b]
    return body


def _publish_calls(world: World, monkeypatch) -> tuple[list[tuple[str, str]], list[str]]:
    """Publish once on a fresh GitHub and origin; (its calls, the branches pushed)."""
    out = world.publish(monkeypatch)
    assert out.exit_code == 0, out.output
    calls = [(c.name, json.dumps(c.args, sort_keys=True, default=str)) for c in world.github.calls]
    return calls, _magi_branches(world)


def _flip_every_key(artifact: Path) -> None:
    """The artifact's config as a hostile agents job would write it: every setting publish
    could decide by turned the other way."""
    path = artifact / "run.json"
    record = json.loads(path.read_text())
    gh = record["config"]["github"]
    gh.update(workflow_changes=True, attempts=1, workflow="steal.yml", label="other")
    record["config"]["merge"]["mode"] = (
        "pr" if record["config"]["merge"]["mode"] != "pr" else "local"
    )
    record["config"]["agents"] = []  # no name to hide
    record["config"]["budget"]["prices"] = {}
    path.write_text(json.dumps(record, indent=2))


def test_an_artifact_whose_config_flips_every_key_makes_the_calls_a_clean_one_makes(
    tmp_path, monkeypatch
):
    """The winner adds a workflow. Published from a clean artifact and from one whose
    config says `workflow_changes = true`, one attempt, another workflow, no roster: the
    same calls, the same branches (the workflow's not among them)."""
    world = make_world(tmp_path, implementers=("workflow", "wrong"))
    _competed(world)
    shutil.copytree(world.remote, tmp_path / "origin-before")
    shutil.copytree(world.artifact, tmp_path / "artifact-clean")
    clean, clean_branches = _publish_calls(world, monkeypatch)
    assert len(clean_branches) == 1  # the workflow's candidate is held back

    monkeypatch.chdir(tmp_path)
    shutil.rmtree(world.remote)
    shutil.copytree(tmp_path / "origin-before", world.remote)
    shutil.rmtree(world.publish_checkout())
    shutil.rmtree(world.artifact)
    shutil.copytree(tmp_path / "artifact-clean", world.artifact)
    _flip_every_key(world.artifact)
    world.github = FakeGitHub()
    world.github.add_issue(REPO, ISSUE, TITLE, ISSUE_BODY)
    flipped, flipped_branches = _publish_calls(world, monkeypatch)
    assert flipped_branches == clean_branches
    assert flipped == clean


def test_an_artifact_on_an_old_base_cannot_bring_back_a_deleted_workflow(tmp_path, monkeypatch):
    """The run started when main had `.github/workflows/old.yml`; main deleted it before
    publish. Both candidates still carry it (they did not touch it: a three-dot diff from
    their base sees nothing), so neither is pushed, and the tracking comment names it."""
    world = make_world(tmp_path)
    flow = world.repo / ".github" / "workflows" / "old.yml"
    flow.parent.mkdir(parents=True)
    flow.write_text("on: push\njobs: {x: {runs-on: ubuntu-latest, steps: []}}\n")
    subprocess.run([*GIT, "add", "-A"], cwd=world.repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", "a workflow"], cwd=world.repo, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=world.repo, check=True)
    _competed(world)
    later = tmp_path / "later"
    subprocess.run(["git", "clone", "-q", str(world.remote), str(later)], check=True)
    subprocess.run([*GIT, "rm", "-q", ".github/workflows/old.yml"], cwd=later, check=True)
    subprocess.run([*GIT, "commit", "-qm", "retire old.yml"], cwd=later, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=later, check=True)

    out = world.publish(monkeypatch)
    assert out.exit_code == 0, out.output
    assert _magi_branches(world) == []
    assert world.github.named("create_pull") == []
    assert "`.github/workflows/old.yml`: not pushed" in _tracking(world)


def test_a_candidate_whose_history_holds_a_secret_is_not_pushed(tmp_path, monkeypatch):
    """Candidate A committed a token, then deleted it: its history would publish it. A is
    not pushed, the other is; the issue says the kind and the file, never the value."""
    world = make_world(tmp_path, implementers=("secret", "wrong"))
    _competed(world)
    out = world.publish(monkeypatch)
    assert out.exit_code == 0, out.output
    pushed = _magi_branches(world)
    assert len(pushed) == 1
    for ref in pushed:
        shown = subprocess.run(
            ["git", "-C", str(world.remote), "log", "-p", ref],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert "deploy.env" not in shown
    tracking = _tracking(world)
    assert "github_token in `deploy.env`" in tracking
    assert "not pushed" in tracking
    everything = "\n".join(world.github.comments_on(REPO, ISSUE))
    assert "Zq8vR2mN4kT7" not in everything


def test_an_artifact_that_drops_a_name_from_its_roster_still_has_it_hidden():
    """The gate's roster before the tally is the default branch's, never fewer: an artifact
    may add a name (a runner's discovered CLI), not take one away."""
    from magi.action.publish_job.trusted import hidden_roster
    from magi.model.config import AgentConfig, Config
    from magi.model.run import Run

    fixture = Path(__file__).parents[1] / "fixtures" / "report" / "run.json"
    run = Run.model_validate_json(fixture.read_text(encoding="utf-8"))
    trusted = Config(agents=[AgentConfig(id="alphaimpl", kind="command", command=["x"])])
    dropped = run.model_copy(update={"config": run.config.model_copy(update={"agents": []})})
    assert [a.id for a in hidden_roster(trusted, dropped)] == ["alphaimpl"]
    found = AgentConfig(id="claude", kind="claude")
    added = run.model_copy(update={"config": run.config.model_copy(update={"agents": [found]})})
    assert [a.id for a in hidden_roster(trusted, added)] == ["alphaimpl", "claude"]


def test_the_scan_reads_every_added_line_whatever_the_files_name_and_every_message(tmp_path):
    """A name git quotes (a tab in it) is no way past the scan, nor is a commit message."""
    from magi.action.publish_job.secret_guard import MESSAGES, secret_leaks
    from magi.git.repo import Git

    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", "base"], cwd=repo, check=True)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    token = "ghp_" + "Zq8vR2mN4kT7wY1xC5bH9jL3pD6fS0aE2gU4"
    (repo / "odd\tname.env").write_text(f"TOKEN={token}\n")
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", f"settings\n\nuse {token}"], cwd=repo, check=True)
    found = secret_leaks(Git(repo), base, "HEAD")
    assert ("github_token", MESSAGES) in found
    assert any(kind == "github_token" and "name.env" in name for kind, name in found)
