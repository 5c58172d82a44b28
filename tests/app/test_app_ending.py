"""A magi PR merged or closed: the App writes the ending into refs/magi/runs/<id>."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from app_ending_helpers import PR, REF, RUN, SHA, recorded, scene
from app_landing_helpers import pull_event
from github_helpers import NOW, REPO, deliver, make_app, store_record
from magi.github import records
from magi.github.models import GitRef, Repo
from magi.model.review import MergeRecord
from magi.model.run import RunStatus
from magi.testing.github import FakeGitHub, branch_repo
from record_helpers import run, text


def close(fake: FakeGitHub, *, merged: bool) -> None:
    w = fake.world(REPO)
    update: dict[str, Any] = {"state": "closed", "merged": merged}
    if merged:
        w.merge_commits[PR] = "c" * 40  # GraphQL's mergeCommit: REST 2026-03-10 has none
    w.pulls[PR] = w.pulls[PR].model_copy(update=update)
    asyncio.run(deliver(make_app(fake), "pull_request", pull_event(fake, "closed")))


def test_a_merge_is_written_into_the_run_record() -> None:
    """Merged: status merged, the PR, its head and the squash; run.json alone replaced."""
    fake = scene()
    before = fake.world(REPO).refs[REF]
    close(fake, merged=True)
    after = fake.world(REPO).refs[REF]
    r = recorded(fake)
    assert r.status is RunStatus.MERGED
    assert r.merge is not None
    assert (r.merge.mode, r.merge.result, r.merge.pr) == ("pr", "merged", PR)
    assert (r.merge.head, r.merge.commit, r.merge.base) == (SHA, "c" * 40, "main")
    assert r.merge.at == NOW
    assert r.events[-1].node == "landing"
    assert "#7 merged" in r.events[-1].message
    assert fake.world(REPO).objects[after].parents == [before]  # type: ignore[union-attr]
    assert fake.file_at(REPO, after, "artifacts/judge-1.txt") == b"why A"
    assert fake.file_at(REPO, after, "published.json") == b"p"
    assert fake.world(REPO).issues[1].state == "closed"
    assert [c.args["force"] for c in fake.named("update_ref")] == [False]


def test_a_close_without_merge_is_written_as_closed() -> None:
    """Closed unmerged: status closed, result closed, no squash commit; the issue stays open."""
    fake = scene()
    close(fake, merged=False)
    r = recorded(fake)
    assert r.status is RunStatus.CLOSED
    assert r.merge is not None
    assert (r.merge.result, r.merge.commit) == ("closed", None)
    assert r.reason == "pull request #7 closed unmerged"
    assert fake.world(REPO).issues[1].state == "open"


def test_a_redelivered_close_writes_nothing_twice() -> None:
    """The ending is said once: a second closed event finds it recorded."""
    fake = scene()
    close(fake, merged=True)
    first = fake.world(REPO).refs[REF]
    close(fake, merged=True)
    assert fake.world(REPO).refs[REF] == first
    assert len(fake.named("update_ref")) == 1


class RacingPublish(FakeGitHub):
    """A publish that lands between the App's read of the record and its ref update."""

    def __init__(self, races: int) -> None:
        super().__init__()
        self.races = races
        self.published: list[str] = []

    async def update_ref(self, repo: Repo, ref: str, sha: str, *, force: bool) -> GitRef:
        if self.races and ref.endswith(REF):
            self.races -= 1
            w = self.world(repo)
            raw = self.file_at(repo, w.refs[REF], "run.json")
            assert raw is not None
            theirs = json.loads(raw) | {"reason": f"published again ({self.races})"}
            files = {"published.json": "theirs"}
            self.published.append(store_record(self, json.dumps(theirs), RUN, files=files))
        return await super().update_ref(repo, ref, sha, force=force)


def test_a_publish_racing_the_app_is_never_overwritten() -> None:
    """The ref moved meanwhile: 422, read again, the ending is laid on the publish's record."""
    fake = RacingPublish(races=1)
    scene(fake)
    close(fake, merged=True)
    w = fake.world(REPO)
    head = w.objects[w.refs[REF]]
    r = recorded(fake)
    assert r.status is RunStatus.MERGED
    assert r.reason is not None
    assert r.reason.startswith("pull request #7 merged")
    assert head.parents == fake.published  # type: ignore[union-attr]
    assert fake.file_at(REPO, w.refs[REF], "published.json") == b"theirs", "publish's kept"
    assert len(fake.named("update_ref")) == 2


def test_a_race_lost_every_time_writes_nothing_and_the_fold_still_happens() -> None:
    """Bounded: after RACE_ATTEMPTS lost races the App gives up, says why, and folds anyway."""
    fake = scene(RacingPublish(races=records.RACE_ATTEMPTS))
    close(fake, merged=True)
    assert len(fake.named("update_ref")) == records.RACE_ATTEMPTS
    assert recorded(fake).status is RunStatus.READY
    assert fake.world(REPO).issues[1].state == "closed"
    assert not [r for r in fake.world(REPO).refs if r.startswith(f"heads/magi/{RUN}/")]


def test_a_record_of_a_newer_schema_is_never_rewritten() -> None:
    """A newer magi wrote it: reading it would drop meaning, so the App leaves it alone."""
    fake = scene()
    newer = json.loads(text(run(RUN))) | {"schema": 99}
    store_record(fake, json.dumps(newer), RUN)
    before = fake.world(REPO).refs[REF]
    close(fake, merged=True)
    assert fake.world(REPO).refs[REF] == before
    assert fake.named("create_blob") == []
    assert fake.world(REPO).issues[1].state == "closed"


def test_the_report_says_how_the_pull_request_ended() -> None:
    """magi show over the recorded run: the merge row names the PR and its ending."""
    from magi.core.review.report import review_rows

    fake = scene()
    close(fake, merged=False)
    assert ("merge pr", "pull request #7 closed unmerged") in review_rows(recorded(fake))


def test_a_strangers_fork_pr_named_like_a_magi_branch_ends_nothing() -> None:
    """Anyone can open a fork PR from `magi/<someone's run>/x` and close it: its head is in
    another repository, so it is not magi's: no fold, no record write, no comment."""
    fake = scene()
    w = fake.world(REPO)
    del w.pulls[PR]
    fork = branch_repo("stranger/widgets")
    fake.add_pull(REPO, PR, f"magi/{RUN}/x", SHA, title="hi", body="Closes #1", head_repo=fork)
    w.refs[f"heads/magi/{RUN}/A"] = SHA  # the victim's branch
    before = dict(w.refs)
    fake.calls.clear()
    close(fake, merged=False)
    assert w.refs == before
    assert fake.named("update_ref") == []
    assert fake.named("delete_ref") == []
    assert fake.named("create_comment") == []
    assert fake.named("update_comment") == []
    assert recorded(fake).status is not RunStatus.CLOSED


def test_a_record_that_names_another_pr_is_not_ended_by_this_one() -> None:
    """A record holding its own PR number is ended by that PR only."""
    fake = scene()
    rec = run(RUN)
    rec.merge = MergeRecord(mode="pr", result="blocked", pr=99)
    store_record(fake, text(rec), RUN)
    before = fake.world(REPO).refs[REF]
    close(fake, merged=False)
    assert fake.world(REPO).refs[REF] == before


def test_a_record_whose_publish_named_another_pr_is_not_ended_by_this_one() -> None:
    """published.json says which PR publish opened for the run: another PR closing (a
    branch borrowing the run id) writes nothing into the record."""
    fake = scene()
    store_record(fake, text(run(RUN)), RUN, files={"published.json": '{"pr": 99}'})
    before = fake.world(REPO).refs[REF]
    close(fake, merged=False)
    assert fake.world(REPO).refs[REF] == before
    ours = scene()
    store_record(ours, text(run(RUN)), RUN, files={"published.json": f'{{"pr": {PR}}}'})
    close(ours, merged=False)
    assert recorded(ours).status is RunStatus.CLOSED
