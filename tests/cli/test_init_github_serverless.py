"""`magi init --github` without a receiver: what it takes from the repository so that nothing
is edited by hand (`[github] label`, the CI workflows `workflow_run` waits for, the merge
queue's trigger), and `--push`: magi's files committed and pushed, the label made."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from magi.testing.cli import invoke

SHA = "1234567890abcdef1234567890abcdef12345678"
INIT = ["init", "--github", "--source", f"acme/magi@{SHA}"]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no agent CLI, no gh
    return root


def _flow(repo: Path) -> str:
    return (repo / ".github" / "workflows" / "magi.yml").read_text()


def _on(repo: Path) -> dict[str, Any]:
    data = yaml.safe_load(_flow(repo))
    return data[True]  # YAML 1.1 reads `on` as true, as GitHub does not


def _receive_if(repo: Path) -> str:
    return str(yaml.safe_load(_flow(repo))["jobs"]["receive"]["if"])


def _workflow(repo: Path, name: str, text: str) -> None:
    folder = repo / ".github" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


@pytest.mark.parametrize(
    ("label", "written"),
    [("magi", "'magi'"), ("agents: go", "'agents: go'"), ("it's magi", "'it''s magi'")],
)
def test_the_receive_job_runs_on_the_configs_label(repo: Path, label: str, written: str) -> None:
    """`[github] label` is the label the receive job's `if:` lets through, as an
    expression's string (a quote doubled): no hand edit of the workflow."""
    (repo / "magi.toml").write_text(f'[github]\nlabel = "{label}"\n')
    res = invoke(INIT)
    assert res.exit_code == 0, res.output
    found = _receive_if(repo)
    assert f"github.event.label.name == {written}\n" in found
    assert found.count("github.event.label.name == ") == 1


def test_a_label_that_would_leave_its_line_is_refused(repo: Path) -> None:
    (repo / "magi.toml").write_text('[github]\nlabel = "magi\\n|| true"\n')
    res = invoke(INIT)
    assert res.exit_code != 0
    assert "github.label: not a label name" in res.output  # the config's check names the key
    assert not (repo / ".github" / "workflows" / "magi.yml").exists()


def test_the_ci_workflows_are_found_by_name(repo: Path) -> None:
    """Those that put checks on PRs (pull_request, push, merge_group), by `name:`; a
    release workflow is not CI; one without a name is said, not guessed."""
    _workflow(repo, "ci.yml", "name: CI\non:\n  pull_request:\n  push:\njobs: {}\n")
    _workflow(repo, "lint.yaml", 'name: "Lint & test"\non: [push]\njobs: {}\n')
    _workflow(repo, "release.yml", "name: Release\non:\n  release:\njobs: {}\n")
    _workflow(repo, "anon.yml", "on: pull_request\njobs: {}\n")
    _workflow(repo, "broken.yml", "name: [unclosed\n")
    res = invoke(INIT)
    assert res.exit_code == 0, res.output
    run = _on(repo)["workflow_run"]
    assert run == {"workflows": ["CI", "Lint & test"], "types": ["completed"]}
    assert "anon.yml: it has no name: (name it with --ci NAME)" in res.output
    assert "broken.yml: not read" in res.output
    assert "CI, Lint & test" in res.output


def test_ci_names_given_replace_the_ones_found(repo: Path) -> None:
    _workflow(repo, "ci.yml", "name: CI\non: pull_request\njobs: {}\n")
    res = invoke([*INIT, "--ci", "Build", "--ci", 'Tests "unit"'])
    assert res.exit_code == 0, res.output
    assert _on(repo)["workflow_run"]["workflows"] == ["Build", 'Tests "unit"']
    assert "# zizmor: ignore[dangerous-triggers]" in _flow(repo)  # its reason kept


def test_without_ci_the_workflow_run_trigger_stays_off(repo: Path) -> None:
    res = invoke(INIT)
    assert res.exit_code == 0, res.output
    assert "workflow_run" not in _on(repo)
    assert "# workflow_run:" in _flow(repo)
    assert "#~" not in _flow(repo)
    assert "no CI workflow found" in res.output


def test_with_a_receiver_it_hears_ci_itself(repo: Path) -> None:
    _workflow(repo, "ci.yml", "name: CI\non: pull_request\njobs: {}\n")
    res = invoke([*INIT, "--receiver"])
    assert res.exit_code == 0, res.output
    assert set(_on(repo)) == {"workflow_dispatch"}
    refused = invoke([*INIT, "--receiver", "--force", "--ci", "CI"])
    assert refused.exit_code != 0
    assert "--ci goes without --receiver" in refused.output


def test_a_merge_queues_group_starts_the_receive_job(repo: Path) -> None:
    """Without a receiver the workflow answers merge_group itself (the App's `magi` check
    on the group), its App token able to write that check for merge_group only."""
    assert invoke(INIT).exit_code == 0
    assert _on(repo)["merge_group"] == {"types": ["checks_requested"]}
    assert "github.event_name == 'merge_group'" in _receive_if(repo)
    steps = yaml.safe_load(_flow(repo))["jobs"]["receive"]["steps"]
    token = next(s for s in steps if s.get("id") == "app-token")
    asked = "${{ github.event_name == 'merge_group' && 'write' || 'read' }}"
    assert token["with"]["permission-checks"] == asked


def test_with_a_receiver_merge_group_stays_off(repo: Path) -> None:
    assert invoke([*INIT, "--receiver"]).exit_code == 0
    assert "merge_group" not in _on(repo)


# --push ---------------------------------------------------------------------------------

# A stand-in for the GitHub CLI's `gh label create`: it keeps the repository's labels in a
# file and refuses one that exists, in gh's words (cli/cli pkg/cmd/label/create.go).
# https://cli.github.com/manual/gh_label_create
GH = """#!/bin/sh
[ "$1 $2" = "label create" ] || { echo "stand-in: unsupported $*" >&2; exit 2; }
echo "$*" >> "$GH_LOG"
shift 2
name=""
while [ $# -gt 0 ]; do  # flags take a value; `--` ends them (pflag), the name follows
  case "$1" in
    --) name="$2"; break ;;
    --repo|--color|--description) shift 2 ;;
    -*) echo "unknown flag: $1" >&2; exit 1 ;;
    *) name="$1"; shift ;;
  esac
done
if grep -qxF -- "$name" "$GH_LABELS" 2>/dev/null; then
  printf 'label with name "%s" already exists; ' "$name" >&2
  echo 'use `--force` to update its color and description' >&2
  exit 1
fi
echo "$name" >> "$GH_LABELS"
"""


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout of OWNER/REPO whose origin is a bare repository, as GitHub keeps it."""
    origin, root = tmp_path / "origin.git", tmp_path / "clone"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(root)], check=True, capture_output=True)
    for key, value in (("user.name", "me"), ("user.email", "me@example.com")):
        subprocess.run(["git", "config", key, value], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "first"], cwd=root, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=root, check=True)
    # Pushes go to the bare repository; the name GitHub knows it by is origin's fetch URL's.
    subprocess.run(
        ["git", "remote", "set-url", "origin", "https://github.com/me/repo.git"],
        cwd=root,
        check=True,
    )
    subprocess.run(
        ["git", "remote", "set-url", "--push", "origin", str(origin)], cwd=root, check=True
    )
    gh = tmp_path / "bin"
    gh.mkdir()
    (gh / "gh").write_text(GH)
    (gh / "gh").chmod(0o755)
    monkeypatch.setenv("GH_LOG", str(tmp_path / "gh.log"))
    monkeypatch.setenv("GH_LABELS", str(tmp_path / "labels"))
    monkeypatch.setenv("PATH", f"{gh}:/usr/bin:/bin")
    monkeypatch.chdir(root)
    return root


def _origin_files(clone: Path) -> list[str]:
    origin = clone.parent / "origin.git"
    out = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "main"], cwd=origin, capture_output=True, text=True
    )
    return out.stdout.split()


def test_push_commits_magis_files_alone_pushes_and_makes_the_label(clone: Path) -> None:
    (clone / "magi.toml").write_text('[github]\nlabel = "agents"\n')
    (clone / "mine.txt").write_text("my own work\n")
    subprocess.run(["git", "add", "mine.txt"], cwd=clone, check=True)
    res = invoke([*INIT, "--push"])
    assert res.exit_code == 0, res.output
    assert sorted(_origin_files(clone)) == [".github/workflows/magi.yml", ".magi/config.toml"]
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=clone, capture_output=True, text=True
    )
    assert staged.stdout.split() == ["mine.txt"]  # still staged, not in magi's commit
    log = (clone.parent / "gh.log").read_text().split("\n")[0].split()
    assert log[:4] == ["label", "create", "--repo", "me/repo"]
    assert log[-2:] == ["--", "agents"]  # after `--`: a name, never a flag
    assert "created the label `agents` on me/repo" in res.output
    assert "next: label an issue `agents`" in res.output


def test_push_again_keeps_the_label_and_commits_nothing_new(clone: Path) -> None:
    assert invoke([*INIT, "--push"]).exit_code == 0
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True)
    again = invoke([*INIT, "--push", "--force"])
    assert again.exit_code == 0, again.output
    assert "already committed as written" in again.output
    assert "the label `magi` is on me/repo already" in again.output
    after = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True)
    assert after.stdout == head.stdout


def test_push_without_gh_says_the_label_is_yours_to_make(clone, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    res = invoke([*INIT, "--push"])
    assert res.exit_code == 0, res.output
    assert "gh) is not on PATH: create the label `magi` yourself" in res.output
    assert ".github/workflows/magi.yml" in _origin_files(clone)


def test_a_refused_push_says_what_to_do(clone: Path) -> None:
    subprocess.run(
        ["git", "remote", "set-url", "--push", "origin", "/nowhere/at/all.git"],
        cwd=clone,
        check=True,
    )
    res = invoke([*INIT, "--push"])
    assert res.exit_code != 0
    assert "git push origin main failed" in res.output
    assert "push it yourself" in res.output


def test_a_label_starting_with_a_dash_is_made_as_a_name(clone: Path) -> None:
    (clone / "magi.toml").write_text('[github]\nlabel = "--help"\n')
    res = invoke([*INIT, "--push"])
    assert res.exit_code == 0, res.output
    assert (clone.parent / "labels").read_text().split() == ["--help"]
    assert "created the label `--help` on me/repo" in res.output


def test_push_refuses_when_the_branch_has_commits_origin_lacks(clone: Path) -> None:
    """--push sends the whole branch: a local commit not on origin would go with magi's."""
    (clone / "secret.txt").write_text("not for origin yet\n")
    subprocess.run(["git", "add", "secret.txt"], cwd=clone, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "wip: local only"], cwd=clone, check=True)
    res = invoke([*INIT, "--push"])
    assert res.exit_code != 0
    assert "main has 1 commit(s) origin does not have" in res.output
    assert "wip: local only" in res.output
    assert _origin_files(clone) == []  # nothing went
    assert not (clone.parent / "labels").exists()


def test_magis_own_unpushed_commit_does_not_stop_a_second_push(clone: Path) -> None:
    """A push that failed left magi's commit behind: running again pushes it."""
    push = ["git", "remote", "set-url", "--push", "origin"]
    subprocess.run([*push, "/nowhere/at/all.git"], cwd=clone, check=True)
    assert invoke([*INIT, "--push"]).exit_code != 0
    subprocess.run([*push, str(clone.parent / "origin.git")], cwd=clone, check=True)
    again = invoke([*INIT, "--push", "--force"])
    assert again.exit_code == 0, again.output
    assert ".github/workflows/magi.yml" in _origin_files(clone)


def test_push_goes_with_github(repo: Path) -> None:
    res = invoke(["init", "--push"])
    assert res.exit_code != 0
    assert "--push and --ci go with --github" in res.output


def test_a_config_label_the_workflow_does_not_run_on_is_said(repo: Path) -> None:
    """`[github] label` changed after init: the receive job still waits for the old one,
    so doctor and `magi app check` say so, with the command that writes it in."""
    from magi.config.workflow import workflow_problems

    assert invoke(INIT).exit_code == 0
    flow = _flow(repo)
    assert workflow_problems(flow, "magi.yml", None, "magi") == []
    (problem,) = workflow_problems(flow, "magi.yml", None, "it's ours")
    assert problem[0] == "error"
    assert "runs on the label `magi`, and [github] label is `it's ours`" in problem[1]
    assert "magi init --github --force" in problem[1]
    (repo / "magi.toml").write_text('[github]\nlabel = "it\'s ours"\n')
    assert invoke([*INIT, "--force"]).exit_code == 0
    assert workflow_problems(_flow(repo), "magi.yml", None, "it's ours") == []
