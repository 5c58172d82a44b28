"""An issue labeled magi: the checks, the claim, the acknowledgement, the dispatch."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from github_helpers import REPO, SEAL, deliver, labeled, make_app, world
from magi.core.threads import markers
from magi.github.models import Branch, Label, PullRequest
from magi.github.port import GitHubError
from magi.testing.github import FakeGitHub, branch_repo

CLAIM = "magi/claims/issue-1"


def run(fake: FakeGitHub, payload: dict[str, object] | None = None, event: str = "issues") -> None:
    r = asyncio.run(deliver(make_app(fake), event, payload or labeled()))
    assert r.status_code == 200


def test_a_writers_label_claims_acknowledges_and_dispatches() -> None:
    """One claim ref, one reaction, one ack comment, one dispatch with the run's inputs."""
    fake = world(FakeGitHub())
    run(fake)
    w = fake.world(REPO)
    assert CLAIM in w.refs
    assert w.reactions == [("issue", 1, "rocket")]
    (ack,) = fake.comments_on(REPO, 1)
    (d,) = w.dispatches
    assert d["workflow"] == "magi.yml"
    assert d["ref"] == "main"
    assert d["inputs"]["issue"] == "1"
    assert d["inputs"]["command"] == "compete"
    assert f"`{d['inputs']['run_id']}`" in ack
    assert "3 candidates, 3 judges" in ack
    assert "the agent CLIs found on the runner" in ack
    (mark,) = SEAL.find([ack], markers.RUN)
    assert mark["run"] == d["inputs"]["run_id"]
    assert mark["workflow_run"].isdigit()
    order = [c.name for c in fake.calls]
    assert order.index("create_comment") < order.index("dispatch_workflow")


def test_config_is_read_from_the_default_branch_only() -> None:
    """The config lookup names the default branch, and its label and workflow are used."""
    fake = world(FakeGitHub())
    w = fake.world(REPO)
    w.files[("main", ".magi/config.toml")] = '[github]\nlabel = "compete"\nworkflow = "w.yml"\n'
    w.workflows.add("w.yml")
    run(fake)  # the label "magi" is not this repository's label
    assert w.dispatches == []
    run(fake, labeled("compete"))
    assert [d["workflow"] for d in w.dispatches] == ["w.yml"]
    assert {c.args["ref"] for c in fake.named("get_content")} == {"main"}


@pytest.mark.parametrize("level", ["read", "triage", "none"])
def test_only_writers_start_a_run(level: str) -> None:
    """A triage or read user's label gets one comment saying who may, and nothing starts."""
    fake = world(FakeGitHub())
    fake.world(REPO).permissions["Codertocat"] = level
    run(fake)
    w = fake.world(REPO)
    assert w.dispatches == []
    assert CLAIM not in w.refs
    (reply,) = fake.comments_on(REPO, 1)
    assert "write, maintain or admin" in reply


def test_maintainers_count_as_writers() -> None:
    """maintain folds to write."""
    fake = world(FakeGitHub())
    fake.world(REPO).permissions["Codertocat"] = "maintain"
    run(fake)
    assert len(fake.world(REPO).dispatches) == 1


def test_an_invalid_config_is_quoted_and_nothing_starts() -> None:
    """magi's own ConfigError (file, line, key) is quoted on the issue; the claim is released."""
    fake = world(FakeGitHub())
    w = fake.world(REPO)
    w.files[("main", ".magi/config.toml")] = "[graph]\ncandidates = 0\n"
    run(fake)
    (reply,) = fake.comments_on(REPO, 1)
    assert ".magi/config.toml: graph.candidates:" in reply
    assert w.dispatches == []
    assert CLAIM not in w.refs


def test_an_empty_task_is_refused_with_a_comment() -> None:
    """Title and body blank after cleaning: a comment says so."""
    fake = world(FakeGitHub())
    p = labeled()
    p["issue"]["title"] = "   "
    p["issue"]["body"] = "<!-- template -->\n\n"
    run(fake, p)
    (reply,) = fake.comments_on(REPO, 1)
    assert "empty" in reply
    assert fake.world(REPO).dispatches == []


def test_an_issue_that_opened_a_pr_is_never_competed_again() -> None:
    """The reply links the PR; the claim stays so later labels are silent."""
    fake = world(FakeGitHub())
    w = fake.world(REPO)
    w.pulls[9] = PullRequest(
        number=9,
        state="closed",
        html_url="https://github.example/pr/9",
        body="done\n" + SEAL.marker(markers.PR, issue=1, run="r1"),
        head=Branch(ref="magi/r1/A", sha="b" * 40, repo=branch_repo(REPO.full_name)),
        base=Branch(ref="main", sha="0" * 40, repo=branch_repo(REPO.full_name)),
    )
    run(fake)
    (reply,) = fake.comments_on(REPO, 1)
    assert "https://github.example/pr/9" in reply
    assert w.dispatches == []
    assert CLAIM in w.refs
    run(fake)
    assert len(fake.comments_on(REPO, 1)) == 1


@pytest.mark.parametrize(
    ("status", "words"),
    [(404, "not on the default branch"), (403, "Actions: write"), (422, "Actions may be disabled")],
)
def test_a_failed_dispatch_is_said_with_the_fix_and_releases_the_claim(
    status: int, words: str
) -> None:
    """Never a green no-op: the issue says what failed and how to fix it."""
    fake = world(FakeGitHub())
    fake.fail("dispatch_workflow", GitHubError("nope", status=status))
    run(fake)
    (reply,) = fake.comments_on(REPO, 1)
    assert words in reply
    assert "Fix:" in reply
    assert SEAL.find([reply], markers.RUN) == []
    assert CLAIM not in fake.world(REPO).refs


def test_the_same_delivery_a_hundred_times_starts_one_run() -> None:
    """Sequential and concurrent redeliveries: one dispatch, one acknowledgement."""
    fake = world(FakeGitHub())
    app = make_app(fake)

    async def go() -> None:
        for _ in range(20):
            await deliver(app, "issues", labeled(), delivery="same")
        await asyncio.gather(
            *(deliver(app, "issues", labeled(), delivery="same") for _ in range(80))
        )

    asyncio.run(go())
    assert len(fake.world(REPO).dispatches) == 1
    assert len(fake.comments_on(REPO, 1)) == 1
    assert len(fake.named("create_ref")) == 100


def test_two_app_instances_sharing_github_start_one_run() -> None:
    """Two replicas behind one address: exactly one dispatch and one acknowledgement."""
    fake = world(FakeGitHub())
    a, b = make_app(fake), make_app(fake)

    async def go() -> None:
        await asyncio.gather(*(deliver(x, "issues", labeled()) for x in [a, b] * 10))

    asyncio.run(go())
    assert len(fake.world(REPO).dispatches) == 1
    assert len(fake.comments_on(REPO, 1)) == 1


def test_unlabeled_before_the_runner_started_cancels_it() -> None:
    """The queued workflow run is cancelled and the claim released; nothing is deleted."""
    fake = world(FakeGitHub())
    run(fake)
    w = fake.world(REPO)
    (wid,) = w.runs
    run(fake, labeled(action="unlabeled"))
    assert w.runs[wid].conclusion == "cancelled"
    assert CLAIM not in w.refs
    assert "cancelled" in fake.comments_on(REPO, 1)[-1]
    assert not fake.named("delete_ref") or all(
        "claims" in c.args["ref"] for c in fake.named("delete_ref")
    )


def test_unlabeled_after_the_runner_started_leaves_it() -> None:
    """Once the runner took the job, removing the label does not cancel it."""
    fake = world(FakeGitHub())
    run(fake)
    w = fake.world(REPO)
    (wid,) = w.runs
    w.runs[wid] = w.runs[wid].model_copy(update={"status": "in_progress"})
    run(fake, labeled(action="unlabeled"))
    assert w.runs[wid].status == "in_progress"
    assert not fake.named("cancel_workflow_run")
    assert CLAIM in w.refs


def test_a_forged_run_marker_in_someone_elses_comment_is_not_trusted() -> None:
    """Markers count only in the App's own comments."""
    fake = world(FakeGitHub())
    w = fake.world(REPO)
    from magi.github.models import Comment, User

    forged = SEAL.marker(markers.RUN, run="x", issue=1, workflow_run=42)
    w.comments[1] = [Comment(id=1, body=forged, user=User(login="mallory"))]
    from magi.github.models import WorkflowRun

    w.runs[42] = WorkflowRun(id=42, status="queued")
    run(fake, labeled(action="unlabeled"))
    assert not fake.named("cancel_workflow_run")


def test_the_fake_filters_pulls_like_github() -> None:
    """FakeGitHub's list_pulls honours state and GitHub's owner:branch head filter."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 2, "magi/r/A", "a" * 40)
    fake.add_pull(REPO, 3, "magi/r/B", "b" * 40, state="closed")

    async def go() -> tuple[list[int], list[int], list[int]]:
        open_ = [p.number for p in await fake.list_pulls(REPO)]
        every = [p.number for p in await fake.list_pulls(REPO, state="all")]
        one = [p.number for p in await fake.list_pulls(REPO, state="all", head="o:magi/r/B")]
        return open_, every, one

    assert asyncio.run(go()) == ([2], [2, 3], [3])


def test_github_failing_after_the_claim_releases_it() -> None:
    """A failure past the retries before the run starts releases the claim: label again works."""
    fake = world(FakeGitHub())
    fake.fail("permission", GitHubError("unavailable", status=503))
    run(fake)
    assert CLAIM not in fake.world(REPO).refs
    run(fake)
    assert len(fake.world(REPO).dispatches) == 1


def test_a_failed_link_after_the_dispatch_keeps_the_claim() -> None:
    """Once the runner is dispatched, failing to edit the acknowledgement starts no second run."""
    fake = world(FakeGitHub())
    fake.fail("update_comment", GitHubError("unavailable", status=503))
    run(fake)
    assert CLAIM in fake.world(REPO).refs
    run(fake)
    assert len(fake.world(REPO).dispatches) == 1


def test_the_dispatch_carries_the_configs_runner_labels() -> None:
    """`[github] runner_labels` picks the runner: sent with the dispatch, as JSON."""
    fake = world(FakeGitHub())
    fake.world(REPO).files[("main", ".magi/config.toml")] = (
        '[github]\nrunner_labels = ["self-hosted", "gpu"]\n'
    )
    asyncio.run(deliver(make_app(fake), "issues", labeled()))
    (sent,) = fake.world(REPO).dispatches
    assert sent["inputs"]["runner-labels"] == '["self-hosted", "gpu"]'


def test_a_competition_starts_on_the_pools_labels_and_hands_the_gpu_seat_on() -> None:
    """An agent logged in only on the GPU box: the competition starts on `[github]
    runner_labels` (no runner need hold every login); that agent's seats are handed to the
    GPU box from there. A council still runs where every agent can."""
    fake = world(FakeGitHub())
    fake.world(REPO).files[("main", ".magi/config.toml")] = (
        '[[agents]]\nid = "boxed"\nkind = "command"\ncommand = ["true"]\n'
        'runner_labels = ["self-hosted", "gpu"]\n'
    )
    asyncio.run(deliver(make_app(fake), "issues", labeled()))
    (sent,) = fake.world(REPO).dispatches
    assert sent["inputs"]["runner-labels"] == '["self-hosted", "magi"]'
    from magi.config.load import load_config_text
    from magi.github.state import dispatch_inputs

    config = load_config_text(fake.world(REPO).files[("main", ".magi/config.toml")]).config
    council = dispatch_inputs(config, command="council")
    assert council["runner-labels"] == '["self-hosted", "magi", "gpu"]'


def test_the_app_reads_both_repository_layers_as_the_cli_does() -> None:
    """`magi.toml` over `.magi/config.toml`, from the default branch: its label counts."""
    fake = world(FakeGitHub())
    files = fake.world(REPO).files
    files[("main", ".magi/config.toml")] = '[github]\nlabel = "magi"\nattempts = 3\n'
    files[("main", "magi.toml")] = '[github]\nlabel = "ai-please"\n'
    asyncio.run(deliver(make_app(fake), "issues", labeled("magi")))
    assert fake.world(REPO).dispatches == []  # not the label any more
    asyncio.run(deliver(make_app(fake), "issues", labeled("ai-please")))
    assert len(fake.world(REPO).dispatches) == 1


def test_an_invalid_magi_toml_is_said_with_its_file_and_key() -> None:
    """The same error the CLI gives: file, line and key, on the issue."""
    fake = world(FakeGitHub())
    fake.world(REPO).files[("main", "magi.toml")] = "[graph]\ncandidates = 99\n"
    asyncio.run(deliver(make_app(fake), "issues", labeled()))
    (reply,) = fake.comments_on(REPO, 1)
    assert "magi.toml" in reply
    assert "graph.candidates" in reply
    assert fake.world(REPO).dispatches == []


def _labeled_at(when: str) -> dict[str, object]:
    """A label event; GitHub's clock is the issue's updated_at (the label just changed it)."""
    p = labeled()
    p["issue"]["updated_at"] = when  # type: ignore[index]
    return p


def test_a_claim_whose_run_ended_without_a_pr_is_taken_over_and_said() -> None:
    """The run died (at "Set up job", or failed): a new label starts again, and says so."""
    fake = world(FakeGitHub())
    run(fake)
    w = fake.world(REPO)
    (first,) = w.runs
    w.runs[first] = w.runs[first].model_copy(
        update={
            "status": "completed",
            "conclusion": "failure",
            "display_title": "magi compete, issue #1",
        }
    )
    run(fake, _labeled_at("2026-01-01T00:05:00Z"))
    assert len(w.dispatches) == 2
    said = fake.comments_on(REPO, 1)[-1]
    assert "An earlier claim on this issue was taken over" in said
    assert "ended (failure) without a pull request" in said


def test_a_fork_prs_run_titled_like_magis_does_not_keep_a_dead_claim_alive() -> None:
    """A stranger's fork PR edits magi.yml to run on `pull_request` with magi's run-name for
    this issue, and keeps it running: GitHub files that run under this repository's
    magi.yml, event `pull_request`, head repository the fork. The claim whose run ended is
    still taken over."""
    fake = world(FakeGitHub())
    run(fake)
    w = fake.world(REPO)
    (first,) = w.runs
    w.runs[first] = w.runs[first].model_copy(
        update={"status": "completed", "conclusion": "failure"}
    )
    fake.add_fork_run(
        REPO, 9001, "magi compete, issue #1", fork="stranger/Hello-World", status="in_progress"
    )
    run(fake, _labeled_at("2026-01-01T00:05:00Z"))
    assert len(w.dispatches) == 2
    assert "An earlier claim on this issue was taken over" in fake.comments_on(REPO, 1)[-1]


def test_a_live_run_keeps_its_claim() -> None:
    """Queued or running: a second label is silent, as before."""
    fake = world(FakeGitHub())
    run(fake)
    w = fake.world(REPO)
    (first,) = w.runs
    w.runs[first] = w.runs[first].model_copy(
        update={"status": "in_progress", "display_title": "magi compete, issue #1"}
    )
    run(fake, _labeled_at("2026-02-01T00:00:00Z"))
    assert len(w.dispatches) == 1


@pytest.mark.parametrize(
    ("when", "taken"), [("2026-01-01T00:09:00Z", False), ("2026-01-01T00:11:00Z", True)]
)
def test_a_claim_left_before_any_run_is_taken_over_after_ten_minutes(
    when: str, taken: bool
) -> None:
    """The receiver restarted between the claim and the acknowledgement: the claim is dated
    by GitHub (its own commit), and after CLAIM_STALE a label takes it over."""
    fake = world(FakeGitHub())
    fake.fail("create_comment", GitHubError("boom", status=502), times=1)
    run(fake)  # the acknowledgement failed: that delivery gave its claim back
    w = fake.world(REPO)
    assert CLAIM not in w.refs
    w.refs[CLAIM] = asyncio.run(_stale_claim(fake))  # as a receiver killed right after claiming
    run(fake, _labeled_at(when))
    assert (len(w.dispatches) == 1) is taken
    assert ("An earlier claim" in " ".join(fake.comments_on(REPO, 1))) is taken


async def _stale_claim(fake: FakeGitHub) -> str:
    """A claim commit as the App makes one, dated by the fake's clock (2026-01-01 00:00)."""
    tree = (await fake.get_git_commit(REPO, "0" * 40)).tree
    made = await fake.create_git_commit(
        REPO, message="magi: claim issue #1, taken (0)", tree=tree, parents=["0" * 40]
    )
    return made.sha


def test_an_issue_with_a_pr_is_never_taken_over() -> None:
    """Its run opened a PR: the claim stays however old, and the label is answered as before."""
    fake = world(FakeGitHub())
    w = fake.world(REPO)
    w.refs[CLAIM] = asyncio.run(_stale_claim(fake))
    body = "done\n" + SEAL.marker(markers.PR, issue=1, run="r1")
    fake.add_pull(REPO, 9, "magi/r1/A", "b" * 40, body=body)
    run(fake, _labeled_at("2026-03-01T00:00:00Z"))
    assert w.dispatches == []


def test_racing_takers_of_a_dead_claim_start_one_run() -> None:
    """Two replicas take over the same dead claim at once: the fast forward admits one."""
    fake = world(FakeGitHub())
    w = fake.world(REPO)
    w.refs[CLAIM] = asyncio.run(_stale_claim(fake))
    apps = [make_app(fake), make_app(fake)]
    payload = _labeled_at("2026-01-01T01:00:00Z")

    async def both() -> None:
        await asyncio.gather(*(deliver(a, "issues", payload) for a in apps))

    asyncio.run(both())
    assert len(w.dispatches) == 1


def test_an_older_workflow_names_the_inputs_github_refused_and_the_command() -> None:
    """GitHub's 422 "Unexpected inputs provided": which inputs, and `magi init --github
    --force`, not "the inputs are wrong"."""
    fake = world(FakeGitHub())
    w = fake.world(REPO)
    w.declared["magi.yml"] = w.declared["magi.yml"] - {"runner-labels"}
    run(fake)
    (reply,) = fake.comments_on(REPO, 1)
    assert "(`runner-labels`)" in reply
    assert "magi init --github --force" in reply
    assert "inputs are wrong" not in reply


@pytest.mark.parametrize("private", [False, True], ids=["public", "private"])
def test_a_public_repository_is_told_what_the_label_approved(private: bool) -> None:
    """docs/runner.md's words, on the acknowledgement of a public repository only."""
    from magi.core.person.public import PUBLIC_LABEL

    fake = world(FakeGitHub())
    payload = labeled()
    payload["repository"]["private"] = private  # type: ignore[index]
    run(fake, payload)
    (ack,) = fake.comments_on(REPO, 1)
    assert ("This repository is public" in ack) is not private
    assert ("an issue anyone may have written" in ack) is not private
    runner_md = " ".join((Path(__file__).parents[2] / "docs" / "runner.md").read_text().split())
    assert PUBLIC_LABEL.split(" (docs/runner.md")[0].capitalize() in runner_md


def test_the_label_pins_the_issue_text_in_the_claim_sealed() -> None:
    """The claim commit holds the title and body the label event carried, its digest in a
    marker sealed with the App's key; the issue edited afterwards changes nothing there."""
    from magi.github.pin import read_pin

    fake = world(FakeGitHub())
    payload = labeled()
    issue = payload["issue"]
    assert isinstance(issue, dict)
    run(fake, payload)
    w = fake.world(REPO)
    fake.add_issue(REPO, 1, "edited", "an edit made after the label")
    pinned = asyncio.run(read_pin(fake, REPO, 1, SEAL))
    assert pinned is not None
    assert (pinned.title, pinned.body) == (issue["title"], issue["body"] or "")
    commit = w.objects[w.refs[CLAIM]]
    assert SEAL.find([commit.message], markers.PIN, issue="1")


def _replay(fake: FakeGitHub, guid: str, payload: dict[str, object] | None = None) -> None:
    """GitHub sending ``guid`` again because the App's start-up asked for it."""
    app = make_app(fake)
    app.state.edge.replays.add(guid)
    r = asyncio.run(deliver(app, "issues", payload or labeled(), delivery=guid))
    assert r.status_code == 200


def _label_on(fake: FakeGitHub) -> None:
    w = fake.world(REPO)
    w.issues[1] = w.issues[1].model_copy(update={"labels": [Label(name="magi")]})


def test_a_replayed_label_starts_nothing_once_the_label_is_gone() -> None:
    """Labeled, then unlabeled, while the App was down: replayed in any order, the label's
    payload is old, and the issue is read again: without the label nothing starts. With
    the label still on, the replay starts the run, at one more call (the issue read)."""
    fake = world(FakeGitHub())
    _replay(fake, "0b989ba4-242f-11e5-81e1-000000000001")
    w = fake.world(REPO)
    assert (w.dispatches, fake.comments_on(REPO, 1), CLAIM in w.refs) == ([], [], False)
    _label_on(fake)
    _replay(fake, "0b989ba4-242f-11e5-81e1-000000000002")
    assert len(w.dispatches) == 1
    assert [c.name for c in fake.calls].count("get_issue") == 2


def test_a_replay_of_the_label_that_started_a_run_never_starts_another() -> None:
    """Its run failed (no pull request): a new label takes the claim over, but the same
    delivery sent again (a start-up asking for a 202 "working" whose work did finish) is
    named in the acknowledgement's sealed marker, and starts nothing."""
    fake = world(FakeGitHub())
    _label_on(fake)
    guid = "0b989ba4-242f-11e5-81e1-000000000003"
    payload = _labeled_at("2026-01-01T00:05:00Z")
    asyncio.run(deliver(make_app(fake), "issues", payload, delivery=guid))
    w = fake.world(REPO)
    (first,) = w.runs
    w.runs[first] = w.runs[first].model_copy(
        update={"status": "completed", "conclusion": "failure"}
    )
    said = len(fake.comments_on(REPO, 1))
    _replay(fake, guid, payload)
    assert len(w.dispatches) == 1
    assert len(fake.comments_on(REPO, 1)) == said
