"""The Action's parts on their own: credentials in a checkout, the remote, attempts, follow-ups."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from action_helpers import ISSUE, REPO, TOKEN, make_world
from github_helpers import SEAL
from magi.action.agents_job.checkout import credential_problems
from magi.action.env import ActionEnv
from magi.action.publish_job.posts import FOLLOW_UP, Poster, follow_ups
from magi.core.threads.posting import Policy
from magi.errors import ActionError
from magi.git.remote import Remote
from magi.model.review import FindingRecord, FixReport, Rejected, Review, ReviewRound
from magi.model.run import Run
from magi.testing.github import FakeGitHub


def _repo(tmp: Path) -> Path:
    repo = tmp / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def _config(repo: Path, key: str, value: str) -> None:
    subprocess.run(["git", "config", key, value], cwd=repo, check=True)


def test_a_clean_checkout_has_no_credential_problem(tmp_path):
    """A remote URL without userinfo (or ssh's git@) is fine."""
    repo = _repo(tmp_path)
    _config(repo, "remote.origin.url", "https://github.com/o/r.git")
    _config(repo, "remote.backup.url", "git@github.com:o/r.git")
    assert credential_problems(repo) == []


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0", "extraheader"),
        ("remote.origin.url", "https://x-access-token:ghs_abcdefabcdef@github.com/o/r", "URL"),
        ("remote.origin.pushurl", "https://ghp_" + "a" * 36 + "@github.com/o/r", "URL"),
        ("url.https://u:pw@github.com/.insteadOf", "https://github.com/", "rewrites"),
    ],
)
def test_each_way_a_credential_hides_in_git_config_is_found(tmp_path, key, value, said):
    """extraheader, a token in a (push) URL, an insteadOf rewrite: named, value never shown."""
    repo = _repo(tmp_path)
    _config(repo, key, value)
    problems = credential_problems(repo)
    assert len(problems) == 1
    assert said in problems[0]
    assert "c2VjcmV0" not in problems[0]
    assert "ghs_abcdef" not in problems[0]


def test_the_remote_refuses_a_url_with_credentials(tmp_path):
    """The token travels through GIT_ASKPASS only; a URL carrying one is refused."""
    with pytest.raises(ActionError):
        Remote(tmp_path, "https://x-access-token:abc@github.com/o/r.git", TOKEN)


def test_a_failed_push_never_prints_the_token(tmp_path):
    """git's error is reported with the token masked, even if git echoed it."""
    repo = _repo(tmp_path)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        cwd=repo,
        check=True,
    )
    remote = Remote(repo, str(tmp_path / f"missing-{TOKEN}"), TOKEN)
    with pytest.raises(ActionError) as caught:
        remote.push("HEAD", "refs/heads/x", expect=None)
    assert TOKEN not in caught.value.message


def _review(n: int) -> Review:
    """A review record as the review loop writes it: minor findings, one adopted."""
    findings = [
        FindingRecord(
            id=f"R1-1-{i}", round=1, seat="review-1", severity="minor", title=f"tidy {i}",
            file="a.py", line=i, detail="@octocat look",
        )
        for i in range(1, n + 1)
    ]  # fmt: skip
    findings.append(FindingRecord(id="R1-1-99", round=1, seat="review-1", severity="blocking",
                                  title="bug"))  # fmt: skip
    fix = FixReport(seat="impl-A", agent="x", status="ok", adopted=["R1-1-1"])
    rnd = ReviewRound(round=1, head="c0ffee" * 6 + "c0ff", findings=findings, fix=fix)
    return Review(label="A", branch="magi/x/A", rounds=[rnd])


def test_unadopted_minor_findings_become_at_most_five_follow_ups_once(tmp_path):
    """Minor and not adopted: filed with magi:follow-up (never magi), five at most, once."""
    github = FakeGitHub()
    env = ActionEnv(repo=REPO, marker_seal=SEAL)
    job = Poster(github, env, ISSUE, Policy(revealed=True))
    run = SimpleNamespace(id="20261201-000000-abcd", review=_review(8))
    first = asyncio.run(follow_ups(job, run))  # type: ignore[arg-type]
    assert len(first) == 5
    filed = [github.world(REPO).issues[n] for n in first]
    assert all([lb.name for lb in i.labels] == [FOLLOW_UP] for i in filed)
    ids = {SEAL.find([i.body or ""], "follow-up")[0]["finding"] for i in filed}
    assert "R1-1-1" not in ids  # adopted
    assert "R1-1-99" not in ids  # blocking, not minor
    assert all("@octocat" not in (i.body or "") for i in filed)
    again = asyncio.run(follow_ups(job, run))  # type: ignore[arg-type]
    assert again == first
    assert len(github.named("create_issue")) == 5


def test_failures_spend_attempts_until_the_issue_is_held(tmp_path, monkeypatch):
    """Each failed run spends one attempt (once, however often published); the last holds it."""
    world = make_world(tmp_path, implementers=("empty", "empty"))
    for attempt in (1, 2):
        res = world.compete()
        assert res.returncode == 0, res.stdout + res.stderr
        for _ in range(2):  # publishing twice counts once
            out = world.publish(monkeypatch)
            assert out.exit_code == 0, out.output
        tracking = [b for b in world.github.comments_on(REPO, ISSUE) if "magi:tracking" in b]
        assert len(tracking) == 1
        assert f"spent={attempt}" in tracking[0]
    assert world.github.labels_on(REPO, ISSUE) == ["magi:held"]
    assert "2 of 2 attempts spent" in tracking[0]


def test_publish_without_an_artifact_says_so_on_the_issue(tmp_path, monkeypatch):
    """A crashed or refused agents job is never a silent stop."""
    world = make_world(tmp_path)
    out = world.publish(monkeypatch)
    assert out.exit_code == 20
    assert "left no result" in world.github.comments_on(REPO, ISSUE)[-1]


def test_a_missing_artifact_keeps_the_jobs_the_app_showed(tmp_path, monkeypatch):
    """The App's jobs part of the tracking comment survives publish saying "no result"."""
    from magi.github.models import Comment, User
    from magi.report.tracking import JobLine, jobs_block, jobs_of
    from magi.testing.github import APP_LOGIN

    world = make_world(tmp_path)
    block = jobs_block(9, "", [JobLine("Compete", "completed", "failure")], SEAL)
    mark = SEAL.marker("tracking", issue=ISSUE, spent=1)
    body = f"### magi\n\nThe workflow is running.\n\n{block}\n{mark}"
    app = User(login=APP_LOGIN, type="Bot")
    world.github.world(REPO).comments[ISSUE] = [Comment(id=3, body=body, user=app)]
    world.publish(monkeypatch)
    [c] = world.github.world(REPO).comments[ISSUE]
    assert "left no result" in c.body
    assert jobs_of(c.body) == block
    assert SEAL.latest([c.body], "tracking") == {"issue": str(ISSUE), "spent": "1"}


def test_review_findings_link_to_the_pr_head_and_say_adopted_or_rejected():
    """Each finding: id, severity, a file:line link at the head, and what the fixer did."""
    from magi.action.publish_job.render import Links, review_sections

    review = _review(2)
    review.outcome, review.reason = "rounds", "out of rounds"
    review.rounds[0].fix.rejected = [Rejected(id="R1-1-2", reason="out of scope")]  # type: ignore[union-attr]
    fixture = Path(__file__).parents[1] / "fixtures" / "report" / "run.json"
    run = Run.model_validate_json(fixture.read_text(encoding="utf-8"))
    run = run.model_copy(update={"review": review})
    links = Links(repo_url="https://github.example/octo/widgets", head="abc123")
    text = "\n".join(s.body for s in review_sections(run, links))
    assert (
        "**R1-1-1** (minor) [a.py:1](https://github.example/octo/widgets/blob/abc123/a.py#L1)"
        in text
    )
    assert "adopted" in text
    assert "rejected: out of scope" in text
    assert "**R1-1-99** (blocking)" in text


def test_a_verified_noop_is_said_labelled_and_opens_nothing(tmp_path, monkeypatch):
    """Every candidate showed nothing is needed: magi:noop, the evidence said, no PR."""
    world = make_world(tmp_path, implementers=("noop", "noop"))
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    out = world.publish(monkeypatch)
    assert out.exit_code == 0, out.output
    assert world.github.labels_on(REPO, ISSUE) == ["magi:noop"]
    assert not world.github.named("create_pull")
    assert not [r for r in world.remote_refs() if r.startswith("refs/heads/magi/")]
    tracking = [b for b in world.github.comments_on(REPO, ISSUE) if "magi:tracking" in b]
    assert "Verified no-op" in tracking[0]


def test_a_candidate_that_changes_workflows_is_not_pushed(tmp_path, monkeypatch):
    """The winner also adds `.github/workflows/exfiltrate.yml`: publish pushes the other
    candidate, opens no PR from it, and the tracking comment says which file and why."""
    world = make_world(tmp_path, implementers=("workflow", "wrong"))
    res = world.compete()
    assert res.returncode == 0, res.stdout + res.stderr
    out = world.publish(monkeypatch)
    assert out.exit_code == 0, out.output
    pushed = [r for r in world.remote_refs() if r.startswith("refs/heads/magi/")]
    assert len(pushed) == 1  # the loser's branch only
    assert world.github.named("create_pull") == []
    (tracking,) = [b for b in world.github.comments_on(REPO, ISSUE) if "magi:tracking" in b]
    assert "(the winner) changes `.github/workflows/exfiltrate.yml`: not pushed" in tracking
    assert "workflow_changes" in tracking
