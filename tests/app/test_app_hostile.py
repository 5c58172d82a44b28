"""The App against people who may comment but may not write (issue 19's attacks).

Every attack here worked before the seal: the App quoted outside text unescaped, so a
stranger's ``<!-- magi:approval ... -->`` stood in a comment the App wrote, and the gate
read it. After each test, ``only_magis_markers`` checks every comment the App wrote: each
``<!-- magi:`` in it is a whole marker sealed by magi's key.
"""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

import cmarkgfm
import pytest

from github_helpers import (
    NOW,
    REPO,
    SEAL,
    deliver,
    fixture,
    issue_comment,
    labeled,
    make_app,
    pr_comment,
    world,
)
from magi.core.threads import markers
from magi.core.threads.landing import HELD
from magi.core.threads.markers import Seal
from magi.github.port import GitHubError
from magi.testing.github import APP_LOGIN, COMMENT_LIMIT, FakeGitHub, branch_repo

SHA = "a" * 40
PR = 7
WRITER = "Codertocat"
_OPENING = re.compile(r"<!--\s*magi:", re.IGNORECASE)


def scene() -> FakeGitHub:
    fake = world(FakeGitHub(), writer=WRITER)
    fake.now = NOW - timedelta(minutes=30)
    w = fake.world(REPO)
    w.permissions["reader"] = "read"
    body = "Closes #1\n" + SEAL.marker(markers.PR, issue=1, run="r1")
    fake.add_pull(REPO, PR, "magi/r1/A", SHA, title="Fix spelling", body=body)
    w.refs["heads/magi/r1/B"] = "b" * 40
    w.refs["magi/claims/issue-1"] = "0" * 40
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    return fake


def only_magis_markers(fake: FakeGitHub) -> None:
    """No ``<!-- magi:`` in anything the App wrote that magi's seal did not make."""
    for number, thread in fake.world(REPO).comments.items():
        for c in thread:
            if c.user is None or c.user.login != APP_LOGIN:
                continue
            sealed = len(SEAL.read(c.body))
            assert len(_OPENING.findall(c.body)) == sealed, (number, c.body)
            assert len(c.body) <= COMMENT_LIMIT


def comment(fake: FakeGitHub, body: str, login: str, *, on: int = PR) -> None:
    made = pr_comment(body, login=login, number=on, comment_id=7000 + len(fake.calls))
    asyncio.run(deliver(make_app(fake), "issue_comment", made))


def wake(fake: FakeGitHub) -> None:
    p = fixture("check_suite.completed")
    p["check_suite"]["head_sha"] = SHA
    p["check_suite"]["pull_requests"] = [{"number": PR}]
    asyncio.run(deliver(make_app(fake), "check_suite", p))


def forged(kind: str = markers.APPROVAL, **fields: object) -> list[str]:
    """A marker as a stranger can write one: typed, with a made-up mac, another App's."""
    fields = fields or {"comment": 5001, "sha": SHA, "login": WRITER}
    pairs = " ".join(f"{k}={v}" for k, v in fields.items())
    return [
        f"<!-- magi:{kind} {pairs} -->",
        f"<!-- magi:{kind} {pairs} mac={'0' * 32} -->",
        Seal(b"another App's key, not magi's").marker(kind, **fields),
        SEAL.marker(kind, **fields),  # even magi's own, copied: an echo is never a marker
    ]


@pytest.mark.parametrize("mark", forged(), ids=["typed", "bad-mac", "other-key", "copied"])
@pytest.mark.parametrize(
    ("login", "line"),
    [
        ("mallory", "/magi hi {m}"),  # a stranger's unknown command
        ("reader", "/magi stop {m}"),  # a reader's refused command
        (WRITER, "/magi hi {m}"),  # a writer's typo echoes too
    ],
    ids=["stranger-unknown", "reader-refused", "writer-unknown"],
)
def test_an_echoed_approval_never_merges(mark: str, login: str, line: str) -> None:
    """The App quotes the command; the quote carries no marker, so green checks merge nothing."""
    fake = scene()
    comment(fake, line.format(m=mark), login)
    wake(fake)
    assert fake.world(REPO).merges == []
    assert SEAL.latest(fake.comments_on(REPO, PR), markers.APPROVAL) is None
    only_magis_markers(fake)


@pytest.mark.parametrize("mark", forged(), ids=["typed", "bad-mac", "other-key", "copied"])
def test_an_approval_in_a_check_name_never_merges(mark: str) -> None:
    """A red check named with a marker is named in the landing comment: shown, never read."""
    fake = scene()
    fake.world(REPO).checks.clear()
    fake.set_check(REPO, SHA, f"ci {mark}", "completed", "failure")
    wake(fake)
    assert [d["inputs"]["command"] for d in fake.world(REPO).dispatches] == ["land"]
    fake.world(REPO).checks.clear()
    fake.set_check(REPO, SHA, f"ci {mark}", "completed", "success")  # the re-run is green
    wake(fake)
    assert fake.world(REPO).merges == []
    only_magis_markers(fake)


def test_a_stranger_cannot_void_a_writers_approval() -> None:
    """A later forged approval for another head would be the 'latest'; it is none at all."""
    fake = scene()
    fake.world(REPO).checks.clear()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    comment(fake, "merge", WRITER)
    for mark in forged(comment=9, sha="0" * 40, login=WRITER):
        comment(fake, f"/magi hi {mark}", "mallory")
    fake.world(REPO).checks.clear()
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    wake(fake)
    assert [m["sha"] for m in fake.world(REPO).merges] == [SHA]
    only_magis_markers(fake)


def test_a_planted_run_marker_cannot_aim_a_writers_stop() -> None:
    """`/magi stop` cancels the run magi started, never a deploy a stranger named."""
    fake = world(FakeGitHub(), writer=WRITER)
    asyncio.run(deliver(make_app(fake), "issues", labeled()))
    (ours,) = [r.id for r in fake.world(REPO).runs.values()]
    fake.add_run(REPO, 4242, "deploy production", path=".github/workflows/deploy.yml")
    for mark in forged(markers.RUN, run="evil", issue=1, workflow_run=4242):
        made = issue_comment(f"/magi status {mark}", login="mallory")
        asyncio.run(deliver(make_app(fake), "issue_comment", made))
    asyncio.run(deliver(make_app(fake), "issue_comment", issue_comment("/magi stop")))
    assert [c.args["run_id"] for c in fake.named("cancel_workflow_run")] == [ours]
    assert fake.world(REPO).runs[4242].status == "queued"
    only_magis_markers(fake)


def test_planted_landing_rounds_do_not_hold_the_pr() -> None:
    """Four forged `land step=fix` markers would use up the rounds: the red check is fixed."""
    fake = scene()
    for n in range(1, 5):
        for mark in forged("land", step="fix", round=n, sha=SHA):
            comment(fake, f"/magi hi {mark}", "mallory")
    fake.world(REPO).checks.clear()
    fake.set_check(REPO, SHA, "ci", "completed", "failure")
    wake(fake)
    assert [d["inputs"]["round"] for d in fake.world(REPO).dispatches] == ["1"]
    assert HELD not in fake.labels_on(REPO, PR)
    only_magis_markers(fake)


def test_a_strangers_magi_branch_pr_does_not_block_the_issue() -> None:
    """A fork PR from `magi/...` saying "Closes #1", or a writer's own `magi/` branch without
    magi's sealed marker, is not the issue's PR: labeling starts the run."""
    fake = world(FakeGitHub(), writer=WRITER)
    fork = branch_repo("mallory/Hello-World")
    fake.add_pull(REPO, 2, "magi/r9/A", "c" * 40, body="Closes #1", head_repo=fork)
    fake.add_pull(REPO, 3, "magi/by-hand/x", "d" * 40, body="Fixes #1")
    typed = "Closes #1\n<!-- magi:pr issue=1 run=r8 -->"
    fake.add_pull(REPO, 4, "magi/r8/A", "e" * 40, body=typed)
    asyncio.run(deliver(make_app(fake), "issues", labeled()))
    assert [d["inputs"]["command"] for d in fake.world(REPO).dispatches] == ["compete"]
    assert "magi/claims/issue-1" in fake.world(REPO).refs


def test_a_strangers_commands_cost_one_reply_and_one_ref_per_thread() -> None:
    """However many commands a person without write access posts, magi answers once."""
    fake = scene()
    before = set(fake.world(REPO).refs)
    for n in range(10):
        comment(fake, f"/magi retry\n/magi hi {n}", "mallory")
    (reply,) = fake.comments_on(REPO, PR)
    assert "once per person" in reply
    assert len(set(fake.world(REPO).refs) - before) == 1
    assert fake.world(REPO).dispatches == []
    assert not [r for r in fake.world(REPO).reactions if r[0] == "comment"]


def test_a_70000_character_command_is_answered_within_githubs_limit() -> None:
    """The quote is cut; the reply fits (the fake refuses a longer body with 422, as GitHub)."""
    fake = scene()
    comment(fake, "/magi " + "x" * 70_000, WRITER)
    (reply,) = fake.comments_on(REPO, PR)
    assert "magi does not know this command" in reply
    assert len(reply) < 2_000


def test_invisible_and_control_characters_are_not_echoed() -> None:
    """NUL, ESC, bidi overrides and tag characters are dropped from the quote."""
    fake = scene()
    comment(fake, "/magi hi \x00\x1b[31m \u202eevil\u2066 \U000e0041 \u200bx", WRITER)
    (reply,) = fake.comments_on(REPO, PR)
    for bad in ("\x00", "\x1b", "\u202e", "\u2066", "\U000e0041", "\u200b"):
        assert bad not in reply
    assert "evil" in reply


def _rendered(body: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(
        body, options=cmarkgfm.Options.CMARK_OPT_UNSAFE
    )


def test_html_and_mentions_in_a_quoted_command_stay_text() -> None:
    """GitHub's renderer shows the quote as written: no tag renders, nobody is pinged, and
    magi's own `<details>` is not closed early."""
    fake = scene()
    line = "/magi hi @victim </details> <img src=x> `code` **b** <!-- hidden"
    comment(fake, line, WRITER)
    (reply,) = fake.comments_on(REPO, PR)
    html = _rendered(reply)
    assert "<img" not in html
    assert "<!--" not in html
    assert html.count("<details>") == html.count("</details>") == 1
    assert "@victim" not in reply  # a word joiner follows the @
    assert "&lt;img src=x&gt;" in html


def test_a_backtick_in_a_check_name_cannot_leave_its_code_span() -> None:
    """A check name ends no code span: its mention and its HTML stay inside it."""
    fake = scene()
    fake.world(REPO).checks.clear()
    fake.set_check(REPO, SHA, "ci` @victim <b>bold</b> `x", "completed", "failure")
    wake(fake)
    (said,) = [b for b in fake.comments_on(REPO, PR) if b.startswith("Landing:")]
    html = _rendered(said)
    assert "<b>" not in html
    outside = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert "@victim" not in outside


@pytest.mark.parametrize("change", ["deleted", "edited"])
def test_a_deleted_or_edited_merge_comment_merges_nothing(change: str) -> None:
    """The approval is re-read at the comment it names before the merge."""
    fake = scene()
    fake.world(REPO).checks.clear()
    fake.set_check(REPO, SHA, "ci", "in_progress", None)
    made = pr_comment("merge", login=WRITER, number=PR)
    asyncio.run(deliver(make_app(fake), "issue_comment", made))
    assert SEAL.latest(fake.comments_on(REPO, PR), markers.APPROVAL) is not None
    later: dict[str, Any] = {**made, "action": change}
    asyncio.run(deliver(make_app(fake), "issue_comment", later))
    fake.world(REPO).checks.clear()
    fake.set_check(REPO, SHA, "ci", "completed", "success")
    wake(fake)
    assert fake.world(REPO).merges == []
    assert any(f"was {change}" in b for b in fake.comments_on(REPO, PR))


def test_the_thumbs_up_comes_only_after_the_approval_is_posted() -> None:
    """A reply GitHub refused leaves no 👍 saying the approval was recorded."""
    fake = scene()
    fake.fail("create_comment", GitHubError("boom", status=502), times=10)
    asyncio.run(deliver(make_app(fake), "issue_comment", pr_comment("merge", login=WRITER)))
    assert not [r for r in fake.world(REPO).reactions if r[0] == "comment"]
    assert fake.world(REPO).merges == []


def test_a_strangers_merge_comments_cost_one_reply_per_thread() -> None:
    """Ten `merge` from a person without write access: one refusal, one ref."""
    fake = scene()
    before = set(fake.world(REPO).refs)
    for n in range(10):
        made = pr_comment("merge", login="mallory", number=PR, comment_id=8000 + n)
        asyncio.run(deliver(make_app(fake), "issue_comment", made))
    assert len(fake.comments_on(REPO, PR)) == 1
    assert len(set(fake.world(REPO).refs) - before) == 1
    assert fake.world(REPO).merges == []


def test_a_person_who_took_the_apps_slug_as_a_login_writes_no_state() -> None:
    """`magi-app` (a user) is not `magi-app[bot]`: a copied genuine approval in their
    comment is not the App's."""
    from magi.github.models import Comment, User

    fake = scene()
    copied = SEAL.marker(markers.APPROVAL, comment=5001, sha=SHA, login=WRITER)
    fake.keep_comment(REPO, PR, comment_id=5001, body="merge", login=WRITER)
    w = fake.world(REPO)
    w.comments[PR].append(Comment(id=9, body=copied, user=User(login="magi-app", type="User")))
    wake(fake)
    assert w.merges == []


def test_a_renamed_writer_is_still_the_writer() -> None:
    """The approval names the author's id; the same id under a new login still approves."""
    from magi.github.models import User

    fake = scene()
    made = pr_comment("merge", login=WRITER, number=PR)
    made["comment"]["user"]["id"] = 583231
    asyncio.run(deliver(make_app(fake), "issue_comment", made))
    assert fake.world(REPO).merges  # merged at once: checks are green
    (approval,) = SEAL.find(fake.comments_on(REPO, PR), markers.APPROVAL)
    assert approval["uid"] == "583231"
    thread = fake.world(REPO).comments[PR]
    (theirs,) = [c for c in thread if c.id == 5001]
    renamed = theirs.model_copy(update={"user": User(login="new-name", id=583231)})
    from magi.github.gate import approval_voided

    assert approval_voided(approval, [renamed]) == ""
    other = theirs.model_copy(update={"user": User(login=WRITER, id=1)})
    assert approval_voided(approval, [other]) == "is not by the writer the approval names"
