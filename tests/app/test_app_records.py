"""The App reads run records from refs/magi/runs/* and answers /magi stats from them."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from github_helpers import REPO, deliver, issue_comment, make_app, store_record, world
from magi.core.figures import stats as figures
from magi.errors import StateError
from magi.github import records
from magi.github.port import GitHubError
from magi.model.run import Run, RunStatus, Seat
from magi.testing.cli import invoke
from magi.testing.github import FakeGitHub
from record_helpers import FIXTURES, run, text


def judging(run_id: str) -> Run:
    """A run still being judged: no tally, so nobody may learn who sits where."""
    seats = {"impl-A": Seat(name="impl-A", agent="secret-agent")}
    return run(run_id, status=RunStatus.JUDGING, tally=None, seats=seats)


def test_records_are_read_migrated_and_bad_ones_skipped_with_a_reason() -> None:
    """Good records parse (an old schema migrates); foreign, broken and newer ones say why."""
    fake = world(FakeGitHub())
    store_record(fake, text(run("20260901-000000-0001")), "20260901-000000-0001")
    old = json.loads((FIXTURES / "state" / "run-schema1.json").read_text())
    store_record(fake, json.dumps(old), old["id"])
    store_record(fake, "{not json", "20260901-000000-0002")
    newer = json.loads(text(run("20260901-000000-0003")))
    store_record(fake, json.dumps({**newer, "schema": 99}), "20260901-000000-0003")
    store_record(fake, text(run("20260901-000000-0009")), "20260901-000000-0004")
    odd = {"schema": 1, "id": "20260901-000000-0006", "seats": [], "candidates": [{"seat": "x"}]}
    odd["candidates"][0]["agent"] = "y"  # type: ignore[index]
    store_record(fake, json.dumps(odd), "20260901-000000-0006")
    fake.world(REPO).refs["magi/runs/not-a-run"] = "1" * 40
    fake.world(REPO).refs["magi/runs/20260901-000000-0005"] = "e" * 40  # gone from GitHub

    got = asyncio.run(records.read_all(fake, REPO))
    assert sorted(s.run_id for s in got.runs) == sorted(["20260901-000000-0001", old["id"]])
    why = {k.ref.removeprefix("refs/magi/runs/"): k.reason for k in got.skipped}
    assert why["not-a-run"].startswith("not a magi run id")
    assert "not valid JSON at line 1" in why["20260901-000000-0002"]
    assert "schema 99" in why["20260901-000000-0003"]
    assert "record says id 20260901-000000-0009" in why["20260901-000000-0004"]
    assert "no commit or tree" in why["20260901-000000-0005"]
    assert "not a record magi wrote (TypeError" in why["20260901-000000-0006"]
    assert got.found == 8


def test_one_request_reads_a_bounded_number_of_records_newest_first() -> None:
    """The cap: the newest records are read, the rest counted as left out."""
    fake = world(FakeGitHub())
    for n in range(1, 6):
        store_record(fake, text(run(f"2026090{n}-000000-0001")), f"2026090{n}-000000-0001")
    got = asyncio.run(records.read_all(fake, REPO, limit=2))
    assert [s.run_id for s in got.runs] == ["20260905-000000-0001", "20260904-000000-0001"]
    assert got.left_out == 3
    assert len(fake.named("get_blob")) == 2, "the records past the cap are not fetched"


def test_a_github_failure_on_one_record_skips_that_record_alone() -> None:
    """A 502 on one blob: that record is skipped with GitHub's words, the others count."""
    fake = world(FakeGitHub())
    for n in (1, 2):
        store_record(fake, text(run(f"2026090{n}-000000-0001")), f"2026090{n}-000000-0001")
    fake.fail("get_blob", GitHubError("Bad Gateway", status=502, transient=True))
    got = asyncio.run(records.read_all(fake, REPO))
    assert len(got.runs) == 1
    assert "502: Bad Gateway" in got.skipped[0].reason


def test_records_already_read_at_their_sha_are_not_fetched_again() -> None:
    """A commit never changes: the second read lists the refs and fetches only what moved;
    a record that failed is not kept and is read again."""
    fake = world(FakeGitHub())
    for n in (1, 2, 3):
        store_record(fake, text(run(f"2026090{n}-000000-0001")), f"2026090{n}-000000-0001")
    fake.fail("get_blob", GitHubError("Bad Gateway", status=502, transient=True))
    cache = records.RecordCache()
    first = asyncio.run(records.read_all(fake, REPO, cache=cache))
    assert (len(first.runs), len(first.skipped), len(cache)) == (2, 1, 2)
    fake.calls.clear()
    moved = run("20260902-000000-0001", reason="moved")
    store_record(fake, text(moved), "20260902-000000-0001")
    again = asyncio.run(records.read_all(fake, REPO, cache=cache))
    assert len(again.runs) == 3
    assert len(fake.named("get_blob")) == 2, "the failed record and the moved one alone"
    assert {s.run_id: s.record.reason for s in again.runs}["20260902-000000-0001"] == "moved"
    fake.calls.clear()
    asyncio.run(records.read_all(fake, REPO, cache=cache))
    assert [c.name for c in fake.calls] == ["matching_refs"]
    other = records.Repo(owner="someone", name="else")
    assert cache.get(other, "20260901-000000-0001", again.runs[-1].commit) is None


def test_the_record_cache_is_bounded_by_count_and_bytes_least_recently_used_first() -> None:
    stored = [
        records.Stored(f"r{n}", f"{n}" * 40, "t", "x" * 10, run(f"20260901-000000-000{n}"))
        for n in range(4)
    ]
    cache = records.RecordCache(entries=3, max_bytes=25)
    for s in stored[:2]:
        cache.put(REPO, s)
    assert cache.get(REPO, "r0", "0" * 40) is stored[0]  # r0 used: r1 is now the oldest
    cache.put(REPO, stored[2])  # 30 bytes > 25: the least recently used goes
    assert cache.get(REPO, "r1", "1" * 40) is None
    assert cache.get(REPO, "r0", "0" * 40) is stored[0]
    big = records.Stored("big", "b" * 40, "t", "x" * 26, stored[3].record)
    assert not cache.put(REPO, big)  # larger than the whole cache: nothing pushed out
    assert (cache.get(REPO, "big", "b" * 40), len(cache)) == (None, 2)


def test_a_read_of_more_records_than_fit_still_hits_the_ones_it_kept() -> None:
    """Every record is looked up before any is read, so the records a read pushes out are
    not the ones it still has to ask for: of five, the three that fit come from the cache."""
    fake = world(FakeGitHub())
    for n in range(1, 6):
        store_record(fake, text(run(f"2026090{n}-000000-0001")), f"2026090{n}-000000-0001")
    size = len(text(run("20260901-000000-0001")).encode())
    cache = records.RecordCache(max_bytes=3 * size)
    asyncio.run(records.read_all(fake, REPO, cache=cache))
    assert len(cache) == 3
    fake.calls.clear()
    again = asyncio.run(records.read_all(fake, REPO, cache=cache))
    assert len(again.runs) == 5
    assert len(fake.named("get_blob")) == 2, "three of five came from the cache"


def test_a_repeated_stats_command_costs_one_listing_call() -> None:
    """The App keeps what it read: the second `/magi stats` reads no record again."""
    fake = world(FakeGitHub())
    for n in (1, 2):
        store_record(fake, text(run(f"2026090{n}-000000-0001")), f"2026090{n}-000000-0001")
    app = make_app(fake)
    asyncio.run(deliver(app, "issue_comment", issue_comment("/magi stats")))
    reads = len(fake.named("get_blob"))
    asyncio.run(deliver(app, "issue_comment", issue_comment("/magi stats")))
    assert reads == 2
    assert len(fake.named("get_blob")) == reads
    first, second = fake.comments_on(REPO, 1)[-2:]
    assert first == second


def say_stats(fake: FakeGitHub) -> str:
    before = len(fake.comments_on(REPO, 1))
    asyncio.run(deliver(make_app(fake), "issue_comment", issue_comment("/magi stats")))
    (reply,) = fake.comments_on(REPO, 1)[before:]
    return reply


def test_stats_answers_with_the_clis_figures_over_the_same_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/magi stats over refs/magi/runs/* == `magi stats --markdown` over the same run.json."""
    fake = world(FakeGitHub())
    runs = [
        run("20260901-000000-0001"),
        run("20260902-000000-0001", tally=run("x").tally.model_copy(update={"winner": "B"})),  # type: ignore[union-attr]
        judging("20260903-000000-0001"),
    ]
    for r in runs:
        store_record(fake, text(r), r.id)
        d = tmp_path / "runs" / r.id
        d.mkdir(parents=True)
        (d / "run.json").write_text(text(r), encoding="utf-8")
    reply = say_stats(fake)
    monkeypatch.setenv("MAGI_HOME", str(tmp_path))
    cli = invoke(["stats", "--markdown"])
    assert cli.exit_code == 0, cli.output
    figures_only = cli.stdout.splitlines()[1:]  # the first line says where the runs are
    assert figures_only
    assert "\n".join(figures_only) in reply
    assert "50% (1/2, 2 runs)" in reply, "each figure says how many runs it rests on"
    assert "**2 recorded runs.**" in reply


def test_stats_keeps_the_blind_rule_for_runs_not_tallied() -> None:
    """A run still being judged is not counted and its seats are never named."""
    fake = world(FakeGitHub())
    store_record(fake, text(run("20260901-000000-0001")), "20260901-000000-0001")
    store_record(fake, text(judging("20260902-000000-0001")), "20260902-000000-0001")
    reply = say_stats(fake)
    assert "secret-agent" not in reply
    assert "1 run is not counted: not tallied yet" in reply
    assert "`opus-agent`" in reply


def test_stats_lists_unreadable_records_and_logs_why(caplog: pytest.LogCaptureFixture) -> None:
    """A bad record is folded under the figures and logged with the delivery; never a crash."""
    fake = world(FakeGitHub())
    store_record(fake, text(run("20260901-000000-0001")), "20260901-000000-0001")
    store_record(fake, "[1, 2]", "20260902-000000-0001")
    with caplog.at_level(logging.WARNING, logger="magi.app"):
        logging.getLogger("magi.app").addHandler(caplog.handler)
        try:
            reply = say_stats(fake)
        finally:
            logging.getLogger("magi.app").removeHandler(caplog.handler)
    assert "1 record(s) could not be read" in reply
    assert "expected a JSON object, found list" in reply
    assert "**1 recorded run.**" in reply
    logged = [r for r in caplog.records if "run record skipped" in r.getMessage()]
    assert logged
    assert getattr(logged[0], "delivery", "").startswith("d-")


def test_stats_when_github_cannot_list_the_records_says_so() -> None:
    """Listing refs/magi/runs/* fails: a plain reply, no exception out of the task."""
    fake = world(FakeGitHub())
    fake.fail("matching_refs", GitHubError("Server Error", status=500, transient=True))
    reply = say_stats(fake)
    assert "could not list the run records" in reply
    assert "500" in reply


def test_markdown_and_text_carry_the_same_figures() -> None:
    """The GitHub rendering is the terminal's figures, row for row."""
    s = figures.compute([run("20260901-000000-0001")])
    md, plain = figures.markdown(s), figures.render(s)
    rows = [line.split(maxsplit=1) for line in plain.splitlines() if line.startswith("  ")]
    rows = [r for r in rows if r[0] != "(no"]
    assert len(rows) >= 7
    for agent, figure in rows:
        assert f"- `{agent}`: {figure}" in md


@pytest.mark.parametrize(
    "bad", ["../../heads/main", "20260901-000000-0001/../../x", "x?y=1", "20260901-000000-ZZZZ"]
)
def test_a_run_id_that_is_not_one_reaches_no_ref_and_no_url(bad: str) -> None:
    """A run id comes from a branch name anyone can pick: read and update refuse a bad one
    with a StateError (the caller logs it) before any call to GitHub."""
    fake = world(FakeGitHub())
    store_record(fake, text(run("20260901-000000-0001")), "20260901-000000-0001")
    fake.calls.clear()
    with pytest.raises(StateError, match="not a run id"):
        asyncio.run(records.read(fake, REPO, bad))
    with pytest.raises(StateError, match="not a run id"):
        asyncio.run(records.read(fake, REPO, bad, sha="1" * 40))
    with pytest.raises(StateError, match="not a run id"):
        asyncio.run(records.update(fake, REPO, bad, lambda r: r, message="m"))
    assert fake.calls == []


def test_stats_on_the_app_reads_whether_winners_stayed_merged_from_the_base_history(
    tmp_path: Path,
) -> None:
    """The base's history on GitHub (list commits): one winner stayed, one was reverted by a
    `git revert`, one landed too recently to say; the figures count them as `magi stats`
    does from a local repository."""
    import subprocess
    from datetime import timedelta

    from github_helpers import NOW
    from magi.model.review import MergeRecord
    from magi.model.run import Task
    from stats_helpers import base, cand, tally

    repo = tmp_path / "repo"
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *ident, "-C", str(repo), *args], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    shas = {}
    for name in ("start", "kept", "undone", "fresh"):
        (repo / name).write_text(name)
        git("add", name)
        git("commit", "-q", "-m", f"add {name}")
        shas[name] = git("rev-parse", "HEAD")
        if name == "undone":
            git("revert", "--no-edit", shas[name])
    fake = world(FakeGitHub())
    fake.mirror_ref(REPO, repo / ".git", "refs/heads/main")

    def merged(run_id: str, commit: str, days_ago: int) -> Run:
        return base(
            run_id,
            {"impl-A": "opus", "impl-B": "sonnet", "judge-1": "j1", "judge-2": "j2"},
            created_at=NOW - timedelta(days=days_ago, hours=1),
            task=Task(original="t", cleaned="t", source=f"issue:{run_id[-1]}"),
            candidates=[cand("A"), cand("B")],
            tally=tally("A"),
            merge=MergeRecord(
                mode="pr", result="merged", commit=commit, base="main", at=NOW - timedelta(days_ago)
            ),
        )

    for r in (
        merged("20251201-000000-0001", shas["kept"], 20),
        merged("20251201-000000-0002", shas["undone"], 20),
        merged("20251201-000000-0003", shas["fresh"], 1),
    ):
        store_record(fake, text(r), r.id)
    reply = say_stats(fake)
    assert len(fake.named("list_commits")) == 1, "the history is read once per base"
    stayed = reply.split("**stayed merged (stayed / settled merges)**")[1].split("**")[0]
    assert stayed.strip() == "- `opus`: too few runs (1/2, 2 runs)", "kept stayed, undone not"
    fake.fail("list_commits", GitHubError("Server Error", status=502))
    blind = say_stats(fake)
    stayed = blind.split("**stayed merged (stayed / settled merges)**")[1].split("**")[0]
    assert stayed.strip() == "- (no data)", "no history: merged, fate unknown, still an answer"
