"""publish-land re-checks a conflict round itself: git's merge of the head and the base is
recomputed, a resolution may choose content for the conflicting paths alone, ``.github/``
is compared with the base tip, and only the App's sealed ``conflict=1`` marker makes a
round a conflict round (``round.json`` is the agents job's, where an agent ran)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from github_helpers import SEAL
from land_helpers import BRANCH, ENV, PR, REPO, Scene, commit, scene, sh
from magi.action.agents_job.land import BUNDLE, OUT_REF, ROUND, LandRound
from magi.action.publish_job.land_publish import LandPublished, publish_land, read_round
from magi.errors import TamperedArtifact
from magi.model.fix_round import RoundInput
from magi.model.landing import LandConflict
from magi.model.review import E2eResult, Gate

RUN = "20261201-120000-abcd"
FLOW = ".github/workflows/ci.yml"


def _flow(cwd: Path, text: str) -> None:
    (cwd / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (cwd / FLOW).write_text(text)


def world(tmp: Path, *, head_flow: str | None = None) -> tuple[Scene, str, str]:
    """main holds an open workflow; the PR (rebased onto it) changes a.txt (and, with
    ``head_flow``, the workflow too); then main hardens the workflow, changes b.txt and the
    PR's line of a.txt. (scene, the PR's head, main's tip)."""
    s = scene(tmp)
    sh(s.dev, "checkout", "-q", "main")
    _flow(s.dev, "permissions: write-all\n")
    commit(s.dev, FLOW, "permissions: write-all\n", "main: a workflow")
    sh(s.dev, "push", "-q", "origin", "main")
    sh(s.dev, "checkout", "-q", BRANCH)
    sh(s.dev, "rebase", "-q", "main")
    if head_flow is not None:
        commit(s.dev, FLOW, head_flow, "the PR's workflow")
    head = sh(s.dev, "rev-parse", "HEAD")
    sh(s.dev, "push", "-q", "-f", "origin", BRANCH)
    s.github.push(REPO, PR, head)
    sh(s.dev, "checkout", "-q", "main")
    commit(s.dev, FLOW, "permissions: read-all\n", "main: harden the workflow")
    commit(s.dev, "b.txt", "bee\nhive\n", "main: b")
    tip = commit(s.dev, "a.txt", "one\n2\nthree\n", "main: the PR's line")
    sh(s.dev, "push", "-q", "origin", "main")
    sh(s.checkout, "fetch", "-q", "origin")  # the job's checkout holds the head
    sh(s.dev, "checkout", "-q", "-b", "fixer", head)
    return s, head, tip


def merge_resolved(s: Scene, tip: str, *theirs: str) -> None:
    """``git merge`` of the tip, a.txt resolved to the PR's line, ``theirs`` paths to the
    base's side; left uncommitted."""
    res = sh_ok(s.dev, "merge", "-q", "--no-edit", tip)
    assert res != 0  # it conflicts
    (s.dev / "a.txt").write_text("one\nTWO\nthree\n")
    for path in theirs:
        sh(s.dev, "checkout", "--theirs", "--", path)
    sh(s.dev, "add", "-A")


def sh_ok(cwd: Path, *args: str) -> int:
    import subprocess

    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    return subprocess.run(["git", *ident, *args], cwd=cwd, capture_output=True).returncode


def artifact(s: Scene, head: str, *, base: str | None, paths: tuple[str, ...] = ("a.txt",)) -> Path:
    """The agents job's artifact for the fixer's head (``fixer`` in the dev clone)."""
    new = sh(s.dev, "rev-parse", "HEAD")
    where = s.tmp / "land-1"
    where.mkdir()
    sh(s.dev, "update-ref", OUT_REF, new)
    sh(s.dev, "bundle", "create", str(where / BUNDLE), OUT_REF, f"^{head}")
    conflict = None
    if base is not None:
        conflict = LandConflict(base=base, merge=new, paths=list(paths), said="CONFLICT")
    done = LandRound(
        pr=PR,
        run=RUN,
        round=1,
        head=head,
        new_head=new,
        changed=True,
        e2e=E2eResult(head=new, passed=True, exit_code=0),
        gate=Gate(ran=True, head=new, passed=True),
        input=RoundInput(pr=PR, run=RUN, head=head, base_ref="main"),
        conflict=conflict,
    )
    (where / ROUND).write_text(json.dumps(done.model_dump(mode="json")))
    return where


def dispatched(s: Scene, head: str, **conflict: int) -> None:
    """The App's sealed dispatch marker for round 1 on ``head``."""
    mark = SEAL.marker("land", step="fix", sha=head, lock="l1", round=1, **conflict)
    asyncio.run(s.github.create_comment(REPO, PR, f"Landing: a fix round.\n\n{mark}"))


def publish(s: Scene, where: Path) -> LandPublished:
    return asyncio.run(
        publish_land(port=s.github, env=ENV, git=s.git, remote=s.remote, where=where, pr=PR)
    )


def refused(s: Scene, head: str, label: str, *said: str) -> None:
    assert s.remote_sha(BRANCH) == head  # nothing pushed
    assert label in s.github.labels_on(REPO, PR)
    last = s.github.comments_on(REPO, PR)[-1]
    for words in said:
        assert words in last


def test_an_honest_resolution_is_pushed(tmp_path):
    s, head, tip = world(tmp_path)
    merge_resolved(s, tip)
    sh(s.dev, "commit", "-q", "--no-edit")
    dispatched(s, head, conflict=1)
    done = publish(s, artifact(s, head, base=tip))
    assert done.outcome == "pushed"
    assert s.remote_sha(BRANCH) == done.head != head


def test_a_merge_s_ours_throwing_the_base_away_is_not_pushed(tmp_path):
    """Attack A: the head's tree with the base merged as history only; every check of the
    base's ancestry and markers passes, the PR's diff would revert the base."""
    s, head, tip = world(tmp_path)
    sh(s.dev, "merge", "-q", "-s", "ours", "--no-edit", tip)
    commit(s.dev, "a.txt", "one\nTWO\nthree\n\n", "resolve")
    dispatched(s, head, conflict=1)
    assert publish(s, artifact(s, head, base=tip)).outcome == "conflict"
    refused(s, head, "magi:conflict", "outside the conflict", f"`{FLOW}`", "`b.txt`")


def test_an_old_workflow_checked_out_over_the_base_is_not_pushed(tmp_path):
    """Attack B: resolved, then the head's old version of a workflow the base hardened;
    head to new head shows nothing under .github/."""
    s, head, tip = world(tmp_path)
    merge_resolved(s, tip)
    sh(s.dev, "checkout", head, "--", FLOW)
    sh(s.dev, "commit", "-q", "--no-edit")
    dispatched(s, head, conflict=1)
    assert publish(s, artifact(s, head, base=tip)).outcome == "conflict"
    refused(s, head, "magi:conflict", "outside the conflict", f"`{FLOW}`")


def test_a_conflicting_workflow_resolved_to_the_heads_side_is_not_pushed(tmp_path):
    """The workflow is a conflicting path (the PR changed it too): the fixer may choose its
    content, but a resolution whose diff against the base tip changes .github/ is not
    pushed while `[github] workflow_changes` is false."""
    s, head, tip = world(tmp_path, head_flow="permissions: {contents: write}\n")
    merge_resolved(s, tip)
    sh(s.dev, "checkout", head, "--", FLOW)  # the head's side of the conflict
    sh(s.dev, "add", FLOW)
    sh(s.dev, "commit", "-q", "--no-edit")
    dispatched(s, head, conflict=1)
    assert publish(s, artifact(s, head, base=tip, paths=("a.txt", FLOW))).outcome == "conflict"
    refused(s, head, "magi:conflict", "diff against the base changes workflows", f"`{FLOW}`")


def test_an_ordinary_round_that_merged_the_base_over_its_workflows_is_not_pushed(tmp_path):
    """No conflict round: the fixer merged the base itself, `-s ours`; its own commits
    change nothing under .github/, the PR's diff against the base would."""
    s, head, tip = world(tmp_path)
    sh(s.dev, "merge", "-q", "-s", "ours", "--no-edit", tip)
    commit(s.dev, "c.txt", "sea\n", "a fix")
    dispatched(s, head)
    assert publish(s, artifact(s, head, base=None)).outcome == "blocked"
    refused(s, head, "magi:blocked", f"`{FLOW}`", "workflow_changes")


def test_an_ordinary_round_behind_the_base_is_pushed(tmp_path):
    """The PR is behind a base that changed .github/: a fix that does not merge the base
    is pushed (GitHub's three-way merge keeps the base's workflow)."""
    s, head, _tip = world(tmp_path)
    commit(s.dev, "c.txt", "sea\n", "a fix")
    dispatched(s, head)
    assert publish(s, artifact(s, head, base=None)).outcome == "pushed"


def test_a_conflict_field_without_the_apps_conflict_marker_is_refused(tmp_path):
    """An ordinary round's artifact naming a `conflict` does not switch publish's checks."""
    s, head, tip = world(tmp_path)
    merge_resolved(s, tip)
    sh(s.dev, "commit", "-q", "--no-edit")
    dispatched(s, head)  # the App dispatched round 1 without conflict=1
    with pytest.raises(TamperedArtifact, match="conflict=1"):
        publish(s, artifact(s, head, base=tip))
    assert s.remote_sha(BRANCH) == head


def test_a_conflict_base_that_does_not_conflict_is_refused(tmp_path):
    """A forged `conflict.base`: an old commit of main, already in the head."""
    s, head, tip = world(tmp_path)
    old = sh(s.dev, "rev-parse", f"{head}^")
    merge_resolved(s, tip)
    sh(s.dev, "commit", "-q", "--no-edit")
    dispatched(s, head, conflict=1)
    with pytest.raises(TamperedArtifact, match="does not conflict"):
        publish(s, artifact(s, head, base=old))
    assert s.remote_sha(BRANCH) == head


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("base", "main"),
        ("base", "abc123"),
        ("merge", "HEAD"),
        ("paths", ["../outside"]),
        ("paths", ["/etc/passwd"]),
        ("paths", ["a/../../b"]),
        ("paths", [f"f{n}" for n in range(1001)]),
        ("left", [""]),
    ],
)
def test_conflict_fields_are_validated_by_name(tmp_path, field, value):
    conflict = {"base": "a" * 40, "merge": "b" * 40, "paths": ["a.txt"], field: value}
    done = {
        "pr": PR,
        "run": RUN,
        "round": 1,
        "head": "c" * 40,
        "new_head": "d" * 40,
        "changed": True,
        "input": {"pr": PR, "run": RUN, "head": "c" * 40},
        "conflict": conflict,
    }
    (tmp_path / ROUND).write_text(json.dumps(done))
    with pytest.raises(TamperedArtifact, match=f"conflict\\.{field}"):
        read_round(tmp_path, PR)
