"""`/magi stop` parks a run (the App records the request; the run asks at its next node
boundary); `/magi stop now` cancels; a retry withdraws the request and hands on the channel."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import httpx

from github_helpers import REPO, SEAL, SETTINGS, deliver, issue_comment, labeled, make_app, world
from magi.core.person.park import HEADER, park_key, read_channel
from magi.testing.github import FakeGitHub

PUBLIC = "https://magi.example.com"
PARKING = replace(SETTINGS, public_url=PUBLIC)


def _started(settings=PARKING) -> FakeGitHub:
    fake = world(FakeGitHub())
    asyncio.run(deliver(make_app(fake, settings=settings), "issues", labeled()))
    return fake


def _say(fake: FakeGitHub, body: str, settings=PARKING) -> list[str]:
    before = len(fake.comments_on(REPO, 1))
    asyncio.run(deliver(make_app(fake, settings=settings), "issue_comment", issue_comment(body)))
    return fake.comments_on(REPO, 1)[before:]


def _run_id(fake: FakeGitHub) -> str:
    return fake.world(REPO).dispatches[0]["inputs"]["run_id"]


async def _ask(fake: FakeGitHub, path: str, key: str | bytes | None) -> httpx.Response:
    app = make_app(fake, settings=PARKING)
    headers = {HEADER: key} if key is not None else {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
        return await client.get(path, headers=headers)


def test_every_competition_dispatch_carries_its_runs_channel() -> None:
    fake = _started()
    run_id = _run_id(fake)
    sent = fake.world(REPO).dispatches[0]["inputs"]["park"]
    got = read_channel(sent, REPO.full_name, run_id)
    assert got.url == f"{PUBLIC}/park/{REPO.full_name}/{run_id}"
    assert got.key == park_key(SEAL, REPO.full_name, run_id)


def test_without_a_public_address_no_channel_is_sent_and_stop_says_it_cancelled() -> None:
    fake = world(FakeGitHub())
    asyncio.run(deliver(make_app(fake), "issues", labeled()))
    assert "park" not in fake.world(REPO).dispatches[0]["inputs"]
    (wid,) = fake.world(REPO).runs
    (reply,) = _say(fake, "/magi stop", settings=SETTINGS)
    assert fake.world(REPO).runs[wid].conclusion == "cancelled"
    assert "cancelled, not parked" in reply
    assert "MAGI_PUBLIC_URL" in reply


def test_stop_asks_the_run_to_park_and_cancels_nothing() -> None:
    fake = _started()
    run_id = _run_id(fake)
    (wid,) = fake.world(REPO).runs
    (reply,) = _say(fake, "/magi stop")
    assert f"Parking magi run `{run_id}` at its next node boundary" in reply
    assert "/magi stop now" in reply
    assert f"magi/park/{run_id}" in fake.world(REPO).refs
    assert fake.world(REPO).runs[wid].status != "completed", "the runner goes on to a boundary"
    assert not fake.named("cancel_workflow_run")
    (again,) = _say(fake, "/magi stop")
    assert "already parking" in again
    (early,) = _say(fake, "/magi retry")
    assert "is parking at its next node boundary" in early, "not `/magi stop` first"
    assert len(fake.world(REPO).dispatches) == 1


def test_stop_now_cancels_at_once_and_withdraws_a_park() -> None:
    fake = _started()
    run_id = _run_id(fake)
    (wid,) = fake.world(REPO).runs
    _say(fake, "/magi stop")
    (reply,) = _say(fake, "/magi stop NOW")
    assert fake.world(REPO).runs[wid].conclusion == "cancelled"
    assert "Stopped the runner" in reply
    assert "not parked" not in reply, "a stop now is what was asked"
    assert f"magi/park/{run_id}" not in fake.world(REPO).refs


def test_stop_with_other_words_is_refused_saying_which_exist() -> None:
    fake = _started()
    (reply,) = _say(fake, "/magi stop please")
    assert reply.startswith("> /magi stop please\n")
    assert "`/magi stop now` cancels" in reply
    assert not fake.named("cancel_workflow_run")
    assert not [r for r in fake.world(REPO).refs if r.startswith("magi/park/")]


def test_a_retry_withdraws_the_honoured_park_before_it_dispatches() -> None:
    fake = _started()
    run_id = _run_id(fake)
    _say(fake, "/magi stop")
    w = fake.world(REPO)
    for wid, r in w.runs.items():  # the runner parked at its boundary, and its job ended
        w.runs[wid] = r.model_copy(update={"status": "completed", "conclusion": "success"})
    assert _say(fake, "/magi retry") == []
    assert f"magi/park/{run_id}" not in w.refs, "else the resumed run parks at once"
    last = w.dispatches[-1]["inputs"]
    assert last["run_id"] == run_id
    assert read_channel(last["park"], REPO.full_name, run_id).key == park_key(
        SEAL, REPO.full_name, run_id
    )


def test_the_park_question_answers_one_bit_to_the_runs_key_only() -> None:
    fake = _started()
    run_id = _run_id(fake)
    path = f"/park/{REPO.full_name}/{run_id}"
    key = park_key(SEAL, REPO.full_name, run_id)
    calls = len(fake.calls)
    refused = asyncio.run(_ask(fake, path, park_key(SEAL, REPO.full_name, "20260101-000000-ffff")))
    assert refused.status_code == 403
    assert asyncio.run(_ask(fake, path, None)).status_code == 403
    assert len(fake.calls) == calls, "a stranger's question costs no call to GitHub"
    bad = asyncio.run(_ask(fake, f"/park/{REPO.full_name}/..", key))
    assert bad.status_code == 404
    not_yet = asyncio.run(_ask(fake, path, key))
    assert (not_yet.status_code, not_yet.json()) == (200, {"park": False})
    assert not_yet.headers["cache-control"] == "no-store"
    _say(fake, "/magi stop")
    asked = asyncio.run(_ask(fake, path, key))
    assert (asked.status_code, asked.json()) == (200, {"park": True})
    assert json.dumps(asked.json()) == '{"park": true}', "nothing but the bit"


def test_a_workflow_older_than_the_park_input_still_starts_and_its_stop_cancels() -> None:
    """GitHub refuses an input the repository's workflow does not declare (422): the App
    dispatches again without it, and the run, which cannot be asked, is cancelled by stop."""
    fake = world(FakeGitHub())
    w = fake.world(REPO)
    w.declared["magi.yml"] = w.declared["magi.yml"] - {"park"}
    asyncio.run(deliver(make_app(fake, settings=PARKING), "issues", labeled()))
    (sent,) = w.dispatches
    assert "park" not in sent["inputs"]
    (wid,) = w.runs
    (reply,) = _say(fake, "/magi stop")
    assert w.runs[wid].conclusion == "cancelled"
    assert "started without a park channel" in reply
    assert "magi init --github --force" in reply
    assert not [r for r in w.refs if r.startswith("magi/park/")]


def _park_reads(fake: FakeGitHub) -> int:
    return len([c for c in fake.named("get_ref") if "magi/park/" in str(c.args["ref"])])


def _questions(app, path: str, key: str, n: int, *, together: bool = False) -> list[int | bool]:
    """``n`` park questions, one after another or all at once; each answer (a bit, or the
    status when there is none)."""

    async def asking() -> list[int | bool]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:

            async def one() -> int | bool:
                got = await client.get(path, headers={HEADER: key})
                return got.json()["park"] if got.status_code == 200 else got.status_code

            if together:
                return list(await asyncio.gather(*(one() for _ in range(n))))
            return [await one() for _ in range(n)]

    return asyncio.run(asking())


def test_200_questions_while_a_park_is_asked_cost_a_handful_of_reads() -> None:
    """A key is in a public repository's logs: while a park is asked, 200 questions (in a
    row, then all at once) cost GitHub one read per few seconds, not one each. The "yes"
    is remembered with the park ref's sha, and a retry forgets it at once."""
    fake = _started()
    run_id = _run_id(fake)
    path = f"/park/{REPO.full_name}/{run_id}"
    key = park_key(SEAL, REPO.full_name, run_id)
    _say(fake, "/magi stop")
    app = make_app(fake, settings=PARKING)  # the App's clock stands still: one window
    assert _questions(app, path, key, 100) == [True] * 100
    assert _questions(app, path, key, 100, together=True) == [True] * 100
    assert _park_reads(fake) == 1
    w = fake.world(REPO)
    for wid, r in w.runs.items():  # the runner parked at its boundary, and its job ended
        w.runs[wid] = r.model_copy(update={"status": "completed", "conclusion": "success"})
    asyncio.run(deliver(app, "issue_comment", issue_comment("/magi retry")))  # this replica
    assert f"magi/park/{run_id}" not in w.refs
    assert _questions(app, path, key, 3) == [False] * 3, "the retry forgot the yes"
    assert _park_reads(fake) == 2


def test_while_github_fails_questions_are_not_each_a_read() -> None:
    """GitHub failing: five questions cost one read, not five (each read's own retries
    multiplied that: five questions cost twenty-five calls)."""
    from magi.github.port import GitHubError

    fake = _started()
    run_id = _run_id(fake)
    path = f"/park/{REPO.full_name}/{run_id}"
    key = park_key(SEAL, REPO.full_name, run_id)
    fake.fail("get_ref", GitHubError("Server Error", status=502), times=50)
    app = make_app(fake, settings=PARKING)
    assert _questions(app, path, key, 5) == [502] * 5
    assert _park_reads(fake) == 1, "one read for the five"


def test_a_no_is_answered_from_memory() -> None:
    fake = _started()
    run_id = _run_id(fake)
    path = f"/park/{REPO.full_name}/{run_id}"
    key = park_key(SEAL, REPO.full_name, run_id)
    assert _questions(make_app(fake, settings=PARKING), path, key, 2) == [False, False]
    assert _park_reads(fake) == 1, "the second no came from memory"


def test_a_key_that_is_not_even_ascii_is_refused_not_a_crash() -> None:
    fake = _started()
    path = f"/park/{REPO.full_name}/{_run_id(fake)}"
    got = asyncio.run(_ask(fake, path, "\xe9".encode("latin-1") * 32))
    assert got.status_code == 403
