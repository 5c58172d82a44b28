"""A private repository on GitHub Free or Pro has no drafts: the PR opens ready and says so."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from githubkit import GitHub, TokenAuthStrategy

from action_helpers import REPO
from github_helpers import SEAL, no_sleep
from magi.action.env import ActionEnv
from magi.action.publish_job.posts import NOT_YET_REVIEWED, Poster, check_run, pull, ready_early
from magi.core.threads.posting import Policy
from magi.github.githubkit_port import GitHubKitPort
from magi.github.models import PullRequest
from magi.github.port import GitHubError, GitHubPort
from magi.model.review import Gate, Review
from magi.model.run import Run
from magi.testing.github import DRAFTS_REFUSED, FakeGitHub
from magi.testing.github_http import GitHubHTTP

FIXTURE = Path(__file__).parents[1] / "fixtures" / "report" / "run.json"
BRANCH = "magi/20260830-153012-a1b2/A"
BODY = "The change.\n\n<!-- magi:pr run=x -->"


def _run(*, green: bool) -> Run:
    run = Run.model_validate_json(FIXTURE.read_text(encoding="utf-8"))
    if green:
        run.gate = Gate(ran=True, passed=True)
        run.review = Review(label="A", branch=BRANCH, outcome="clean")
    return run


def _fake(visibility: str = "private", plan: str = "free") -> FakeGitHub:
    fake = FakeGitHub()
    world = fake.world(REPO)
    world.visibility, world.plan = visibility, plan
    world.refs[f"heads/{BRANCH}"] = "a" * 40
    return fake


def _publish(port: GitHubPort, run: Run) -> PullRequest:
    job = Poster(port, ActionEnv(repo=REPO, marker_seal=SEAL), 7, Policy(revealed=True))

    async def go() -> PullRequest:
        pr = await pull(job, run, BRANCH, BODY, "the title")
        await check_run(job, run, "a" * 40, early=ready_early(run, pr))
        return pr

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("visibility", "plan", "refused"),
    [
        ("private", "free", True),
        ("private", "pro", True),
        ("private", "team", False),
        ("private", "enterprise", False),
        ("public", "free", False),
    ],
)
def test_the_fake_refuses_a_draft_where_github_has_none(visibility, plan, refused):
    """422 with GitHub's words on a private Free/Pro repository, opening or converting."""
    fake = _fake(visibility, plan)
    fake.add_pull(REPO, 3, "other", "b" * 40)

    async def go() -> list[str]:
        said = []
        for attempt in (
            fake.create_pull(REPO, title="t", head=BRANCH, base="main", body="", draft=True),
            fake.set_draft(REPO, 3, True),
        ):
            try:
                await attempt
            except GitHubError as exc:
                said.append(f"{exc.status} {exc.message}")
        return said

    said = asyncio.run(go())
    assert said == ([f"422 {DRAFTS_REFUSED}"] * 2 if refused else [])


def test_a_pr_that_cannot_be_a_draft_opens_ready_says_so_and_holds_its_check():
    """Not green on a private Free repository: ready, the note in the body, check in progress."""
    fake = _fake()
    pr = _publish(fake, _run(green=False))
    assert not pr.draft
    assert NOT_YET_REVIEWED in (pr.body or "")
    assert (pr.body or "").endswith("<!-- magi:pr run=x -->")  # the marker stays last
    [check] = fake.world(REPO).checks["a" * 40]
    assert (check.status, check.conclusion) == ("in_progress", None)
    assert NOT_YET_REVIEWED in fake.named("create_check_run")[0].args["summary"]


def test_publishing_again_before_review_asks_for_no_draft_again_and_writes_nothing():
    """The note says drafts were refused: a second publish neither converts nor edits."""
    fake = _fake()
    _publish(fake, _run(green=False))
    before = len(fake.calls)
    _publish(fake, _run(green=False))
    writes = [c.name for c in fake.calls[before:] if not c.name.startswith(("list_", "get_"))]
    assert writes == []


def test_once_review_and_gate_are_green_the_note_goes_and_the_check_completes():
    """The same PR, green now: the body loses the note, the check is a success."""
    fake = _fake()
    _publish(fake, _run(green=False))
    pr = _publish(fake, _run(green=True))
    assert NOT_YET_REVIEWED not in (pr.body or "")
    [check] = fake.world(REPO).checks["a" * 40]
    assert (check.status, check.conclusion) == ("completed", "success")


def test_a_public_repository_still_gets_a_draft_and_no_note():
    """Where GitHub has drafts nothing changes: a draft, no note, the check completed."""
    fake = _fake(visibility="public")
    pr = _publish(fake, _run(green=False))
    assert pr.draft
    assert NOT_YET_REVIEWED not in (pr.body or "")
    [check] = fake.world(REPO).checks["a" * 40]
    assert check.status == "completed"


def test_another_refusal_of_the_pr_is_not_taken_for_a_refused_draft():
    """Only GitHub's draft words open the PR ready: any other 422 is raised as it is."""
    fake = _fake()
    fake.fail("create_pull", GitHubError("Validation Failed", status=422))
    with pytest.raises(GitHubError, match="Validation Failed"):
        _publish(fake, _run(green=False))
    assert len(fake.named("create_pull")) == 1


def _http_port(double: GitHubHTTP) -> GitHubKitPort:
    gh = GitHub(
        TokenAuthStrategy("ghs_test"),
        base_url="https://api.github.test/",
        async_transport=httpx.MockTransport(double),
        auto_retry=False,
        http_cache=False,
    )
    return GitHubKitPort(gh, sleep=no_sleep)


def test_over_http_the_refusal_is_read_from_rest_and_from_graphql():
    """Through githubkit: POST /pulls answers 422; an open PR's conversion, GraphQL's error."""
    fake = _fake()
    double = GitHubHTTP(fake)
    pr = _publish(_http_port(double), _run(green=False))
    assert not pr.draft
    assert NOT_YET_REVIEWED in (pr.body or "")
    # A PR opened ready by hand before magi published: the conversion is refused too.
    fake.world(REPO).pulls[pr.number] = pr.model_copy(update={"body": "by hand"})
    pr = _publish(_http_port(double), _run(green=False))
    assert [c.args["draft"] for c in fake.named("set_draft")] == [True]
    assert NOT_YET_REVIEWED in (pr.body or "")
    double.assert_clean()


def test_a_check_summary_of_exactly_65536_characters_is_cut_to_githubs_65535(monkeypatch):
    """A comment may hold 65,536 characters, a check summary one fewer: cut to fit."""
    import magi.action.publish_job.posts as posts

    monkeypatch.setattr(posts, "ending", lambda _run: "line\n" * 13_107 + "x")  # 65,536
    fake = _fake(visibility="public")
    _publish(fake, _run(green=True))
    [made] = fake.named("create_check_run")
    assert 60_000 < len(made.args["summary"]) <= 65_535


def test_githubkits_own_refusal_of_a_body_is_a_github_error_not_a_traceback():
    """A summary over 65,535 never leaves githubkit: the port says so as a 422."""
    fake = _fake(visibility="public")
    port = _http_port(GitHubHTTP(fake))
    with pytest.raises(GitHubError, match=r"before it was sent: output\.summary") as info:
        asyncio.run(
            port.create_check_run(
                REPO, name="magi", head_sha="a" * 40, status="completed", summary="x" * 65_536
            )
        )
    assert info.value.status == 422
    assert not fake.named("create_check_run")
