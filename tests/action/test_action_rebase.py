"""`magi action rebase`: onto the base as the remote has it, leased push, the approval rule."""

from __future__ import annotations

import asyncio

import pytest

from github_helpers import PEM, SEAL
from land_helpers import BRANCH, ENV, PR, REPO, Scene, commit, scene, sh
from magi.action.publish_job.rebase import Rebased, rebase
from magi.core.threads import markers
from magi.git.remote import LeaseRejected


def run(s: Scene) -> Rebased:
    return asyncio.run(rebase(port=s.github, env=ENV, git=s.git, remote=s.remote, pr=PR))


def approve(s: Scene, sha: str) -> None:
    body = SEAL.marker(markers.APPROVAL, comment=5001, sha=sha, login="maintainer")
    asyncio.run(s.github.create_comment(REPO, PR, f"Approval recorded.\n\n{body}"))


def test_same_patch_keeps_the_approval(tmp_path):
    """Base moved elsewhere: rebased, pushed, approval re-pinned to the new head."""
    s = scene(tmp_path)
    head = s.remote_sha(BRANCH)
    approve(s, head)
    base = s.move_main("c.txt", "sea\n")
    done = run(s)
    assert done.outcome == "rebased"
    assert done.approval_kept is True
    assert s.remote_sha(BRANCH) == done.new_head != head
    assert sh(s.origin, "rev-parse", f"{done.new_head}^") == base
    said = s.github.comments_on(REPO, PR)[-1]
    assert f"rebased onto `{base[:12]}`, same patch, approval kept" in said
    assert SEAL.latest([said], markers.APPROVAL)["sha"] == done.new_head  # type: ignore[index]


def test_an_up_to_date_branch_is_left_alone(tmp_path):
    """Nothing moved: no push, no comment."""
    s = scene(tmp_path)
    head = s.remote_sha(BRANCH)
    assert run(s).outcome == "up-to-date"
    assert s.remote_sha(BRANCH) == head
    assert s.github.comments_on(REPO, PR) == []


def test_a_conflict_goes_to_the_fixer_first_then_to_a_person(tmp_path):
    """main changed the same line: no push; the first time on this head the fixer gets it
    (said, no label); the second time the paths are posted and magi:conflict labeled."""
    s = scene(tmp_path)
    head = s.remote_sha(BRANCH)
    base = s.move_main("a.txt", "one\n2\nthree\n")
    first = run(s)
    assert (first.outcome, first.paths) == ("to-fixer", ("a.txt",))
    assert s.remote_sha(BRANCH) == head
    assert "magi:conflict" not in s.github.labels_on(REPO, PR)
    said = s.github.comments_on(REPO, PR)[-1]
    assert "The fixer that wrote them gets the conflict once" in said
    handed = SEAL.latest([said], "land", step="conflict", to="fixer")
    assert handed is not None
    assert (handed["sha"], handed["base"]) == (head, base)
    second = run(s)
    assert second.outcome == "conflict"
    assert second.paths == ("a.txt",)
    assert s.remote_sha(BRANCH) == head
    assert "magi:conflict" in s.github.labels_on(REPO, PR)
    said = s.github.comments_on(REPO, PR)[-1]
    assert "- `a.txt`" in said
    assert "the fixer already had this head's conflict" in said


def test_a_conflict_the_fixer_already_had_goes_to_a_person(tmp_path):
    """The App dispatched a conflict round for this head already: the rebase labels."""
    s = scene(tmp_path)
    head = s.remote_sha(BRANCH)
    s.move_main("a.txt", "one\n2\nthree\n")
    mark = SEAL.marker("land", step="fix", sha=head, round=1, conflict=1)
    asyncio.run(s.github.create_comment(REPO, PR, f"Landing: fix round 1.\n\n{mark}"))
    assert run(s).outcome == "conflict"
    assert "magi:conflict" in s.github.labels_on(REPO, PR)


def test_a_push_in_between_is_refused_by_the_lease(tmp_path, monkeypatch):
    """Someone pushes after the job read the head: the lease refuses, nothing overwritten."""
    s = scene(tmp_path)
    s.move_main("c.txt", "sea\n")
    real = s.remote.push

    def racing_push(local: str, ref: str, *, expect: str | None) -> None:
        sh(s.dev, "checkout", "-q", BRANCH)
        commit(s.dev, "d.txt", "late\n", "a person's push")
        sh(s.dev, "push", "-q", "origin", BRANCH)
        real(local, ref, expect=expect)

    remote = s.remote
    monkeypatch.setattr(remote, "push", racing_push)
    with pytest.raises(LeaseRejected):
        asyncio.run(rebase(port=s.github, env=ENV, git=s.git, remote=remote, pr=PR))
    late = s.remote_sha(BRANCH)
    assert sh(s.origin, "log", "-1", "--format=%s", late) == "a person's push"


def test_the_command_line_exits_with_the_rebase_conflict_code(tmp_path, monkeypatch):
    """`magi action rebase` on a conflict exits 16 (its own code, not a config error's 3)."""
    from magi.action.context import ActionContext
    from magi.errors import ExitCode
    from magi.testing.cli import invoke

    s = scene(tmp_path)
    s.move_main("a.txt", "one\n2\nthree\n")
    monkeypatch.chdir(s.git.root)
    env = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "MAGI_GITHUB_TOKEN": "ghs_test",
        "MAGI_APP_SLUG": ENV.app_login.removesuffix("[bot]"),
        "MAGI_MARKER_KEY": PEM,
    }
    given = ActionContext(ports=lambda _url, _token: s.github)
    res = invoke(["action", "rebase", "--pr", str(PR)], env=env, obj=given)
    assert res.exit_code == ExitCode.REBASE_CONFLICT == 16, res.output
    assert "to-fixer" in res.output  # the first conflict on a head: the fixer gets it
