"""The runner side of ``/magi council`` and ``/magi review``: council job, then publish-council."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import council_helpers as ch
from github_helpers import PEM, REPO, SEAL
from magi.action.agents_job.council import Inputs, convene, read_inputs
from magi.action.context import ActionContext
from magi.action.env import ActionEnv
from magi.action.publish_job.publish_council import (
    publish_council,
    publish_council_missing,
    read_council,
)
from magi.core.council.surface import CHECK_NAME
from magi.demo.council_scripted import ScriptedAsker
from magi.errors import ActionError, TamperedArtifact
from magi.model.run import RunStatus
from magi.state.store import Store
from magi.testing.github import APP_LOGIN, FakeGitHub

HEAD = "c" * 40
ENV = ActionEnv(repo=REPO, app_login=APP_LOGIN, run_id="99", marker_seal=SEAL)
AGENTS = ch.AGENT_IDS[:3]


def thread(
    where: Path, body: str, *, number: int = 1, comment: int = 42, pull: bool = False
) -> Path:
    """The files the read-only task job writes."""
    where.mkdir(parents=True, exist_ok=True)
    url = f"https://api.github.com/repos/{REPO.full_name}/issues/{number}"
    (where / "comment.json").write_text(json.dumps({"id": comment, "issue_url": url, "body": body}))
    (where / "issue.json").write_text(json.dumps({"number": number, "title": "t"}))
    if pull:
        pr = {"number": number, "title": "Add a cache", "head": {"ref": "x", "sha": HEAD}}
        (where / "pull.json").write_text(json.dumps(pr))
        (where / "pull.diff").write_text("diff --git a/x b/x\n+cache = {}\n")
    return where


def run_council(
    tmp_path: Path, inputs: Inputs, personas: dict[str, str], *, mode_seats: int = 3
) -> Path:
    out = tmp_path / "artifact"
    convene(
        cwd=tmp_path,
        inputs=inputs,
        store=Store(tmp_path / "home"),
        out=out,
        config=ch.config(mode_seats),
        environ={},
        asker=ScriptedAsker(personas),
    )
    return out


def publish(fake: FakeGitHub, out: Path, inputs: Inputs) -> str:
    rec = read_council(out, inputs)
    asyncio.run(publish_council(port=fake, env=ENV, inputs=inputs, rec=rec))
    (body,) = fake.comments_on(REPO, inputs.issue)
    return body


def conclusion(fake: FakeGitHub) -> str | None:
    (check,) = [c for c in fake.world(REPO).checks.get(HEAD, []) if c.name == CHECK_NAME]
    return check.conclusion


def test_the_question_comes_from_the_comment_by_id(tmp_path: Path) -> None:
    """read_inputs takes the question from the comment, and refuses another thread's comment."""
    where = thread(tmp_path / "in", "Please decide.\n/magi council TOML or YAML?")
    inputs = read_inputs(where, issue=1, comment=42, command="council")
    assert inputs.question == "TOML or YAML?"
    assert inputs.head_sha is None
    with pytest.raises(ActionError, match="not on #2"):
        read_inputs(where, issue=2, comment=42, command="council")
    with pytest.raises(ActionError, match="not comment 43"):
        read_inputs(where, issue=1, comment=43, command="council")
    with pytest.raises(ActionError, match="no `/magi review`"):
        read_inputs(where, issue=1, comment=42, command="review")


def test_a_council_on_an_issue_posts_the_matrix_and_no_check_run(tmp_path: Path) -> None:
    """Passed: one comment with the matrix, agents named only after the verdict headline."""
    where = thread(tmp_path / "in", "/magi council TOML or YAML?")
    inputs = read_inputs(where, issue=1, comment=42, command="council")
    out = run_council(tmp_path, inputs, {s: "says:TOML" for s in ("sage-1", "sage-2", "sage-3")})
    fake = FakeGitHub()
    body = publish(fake, out, inputs)
    assert len(body.encode("utf-16-le")) // 2 <= 65_536
    headline, _, rest = body.partition("\n")
    assert "magi council" in headline
    assert "TOML" in body
    assert not any(a in headline for a in AGENTS)
    assert all(a in rest for a in AGENTS)  # the verdict exists: the matrix reveals the seats
    assert SEAL.find([body], "council", comment="42", issue="1")
    assert fake.named("create_check_run") == []
    # Publishing again edits nothing and posts nothing new.
    asyncio.run(publish_council(port=fake, env=ENV, inputs=inputs, rec=read_council(out, inputs)))
    assert len(fake.comments_on(REPO, 1)) == 1


def test_no_agent_is_named_before_the_verdict(tmp_path: Path) -> None:
    """A council that reached no verdict names no agent, even where a seat quoted one."""
    where = thread(tmp_path / "in", "/magi council Is opus right?")
    inputs = read_inputs(where, issue=1, comment=42, command="council")
    out = run_council(tmp_path, inputs, {s: "says:TOML" for s in ("sage-1", "sage-2", "sage-3")})
    record = json.loads((out / "council.json").read_text())
    record["verdict"] = None
    record["status"] = RunStatus.INTERRUPTED.value
    (out / "council.json").write_text(json.dumps(record))
    fake = FakeGitHub()
    fake.add_pull(REPO, 1, "topic", HEAD)
    inputs = Inputs(**{**inputs.__dict__, "head_sha": HEAD})
    body = publish(fake, out, inputs)
    assert not [a for a in AGENTS if a in body]
    assert "did not reach a verdict" in body
    assert conclusion(fake) == "failure"


@pytest.mark.parametrize(
    ("personas", "mode", "expected"),
    [
        ({"sage-1": "approve", "sage-2": "approve", "sage-3": "approve"}, "review", "success"),
        ({"sage-1": "reject", "sage-2": "reject", "sage-3": "reject"}, "review", "failure"),
        (
            {"sage-1": "says:A", "sage-2": "says:B", "sage-3": "says:C"},
            "council",
            "action_required",
        ),
    ],
    ids=["passed", "rejected", "no_consensus"],
)
def test_the_check_run_on_the_pr_head_follows_the_verdict(
    tmp_path: Path, personas: dict[str, str], mode: str, expected: str
) -> None:
    """success when passed, failure when rejected, action_required without consensus (never
    neutral, which GitHub lets pass a required check)."""
    body = f"/magi {mode}" + (" A, B or C?" if mode == "council" else "")
    where = thread(tmp_path / "in", body, number=7, comment=77, pull=True)
    inputs = read_inputs(where, issue=7, comment=77, command=mode)
    assert inputs.head_sha == HEAD
    if mode == "review":
        assert "+cache" in (inputs.diff or "")
    out = run_council(tmp_path, inputs, personas)
    fake = FakeGitHub()
    fake.add_pull(REPO, 7, "topic", HEAD)
    body_posted = publish(fake, out, inputs)
    assert conclusion(fake) == expected
    assert len(body_posted) <= 65_536


def review_pr(
    tmp_path: Path, fake: FakeGitHub, personas: dict[str, str], command: str, *, comment: int = 77
) -> str:
    """One `/magi review ...` on PR #7 through both jobs against the GitHub double: the body."""
    where = thread(tmp_path / f"in-{comment}", command, number=7, comment=comment, pull=True)
    inputs = read_inputs(where, issue=7, comment=comment, command="review")
    out = run_council(tmp_path / f"run-{comment}", inputs, personas)
    rec = read_council(out, inputs)
    asyncio.run(publish_council(port=fake, env=ENV, inputs=inputs, rec=rec))
    return next(c.body for c in fake.world(REPO).comments[7] if f"comment={comment}" in c.body)


def check_run(fake: FakeGitHub):
    (check,) = [c for c in fake.world(REPO).checks.get(HEAD, []) if c.name == CHECK_NAME]
    return check


def test_a_critical_review_two_reviewers_lost_is_not_a_passing_check(tmp_path: Path) -> None:
    """Inconclusive is action_required (neutral would pass a required check), linked to the
    matrix comment."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 7, "topic", HEAD)
    personas = {"sage-1": "approve", "sage-2": "fail", "sage-3": "garbage"}
    body = review_pr(tmp_path, fake, personas, "/magi review critical")
    assert "inconclusive" in body
    check = check_run(fake)
    assert check.conclusion == "action_required"
    (comment,) = fake.world(REPO).comments[7]
    assert comment.html_url
    assert check.details_url == comment.html_url


@pytest.mark.parametrize(
    ("third", "expected"),
    [("abstain", "action_required"), ("garbage", "action_required"), ("plain:REJECT", "failure")],
    ids=["abstained", "unreadable", "seed-format-reject"],
)
def test_a_high_risk_review_does_not_pass_two_to_nothing(
    tmp_path: Path, third: str, expected: str
) -> None:
    """2:0 beside a silent third is no quorum at high risk; a seed-format REJECT rejects."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 7, "topic", HEAD)
    review_pr(
        tmp_path,
        fake,
        {"sage-1": "approve", "sage-2": "approve", "sage-3": third},
        "/magi review high",
    )
    assert check_run(fake).conclusion == expected


def test_a_conditional_review_holds_the_check_until_a_review_passes_without_conditions(
    tmp_path: Path,
) -> None:
    """CONDITIONAL: action_required with the conditions in the check's summary; a later
    review with no conditions turns the same check green."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 7, "topic", HEAD)
    personas = {
        "sage-1": "approve",
        "sage-2": "conditional:add a test for @everyone",
        "sage-3": "approve",
    }
    body = review_pr(tmp_path, fake, personas, "/magi review")
    assert "CONDITIONAL" in body
    assert "approved with conditions" in body
    assert check_run(fake).conclusion == "action_required"
    (created,) = fake.named("create_check_run")
    summary = ch.shown(created.args["summary"])
    assert "Not passing until" in summary
    assert "sage-2: add a test for" in summary
    assert "@everyone" not in summary  # a seat's words stay inert in the summary
    review_pr(tmp_path, fake, {s: "approve" for s in personas}, "/magi review", comment=78)
    check = check_run(fake)
    assert check.conclusion == "success"
    assert check.details_url is not None
    assert check.details_url.endswith(f"#issuecomment-{fake.world(REPO).comments[7][1].id}")


def test_an_artifact_for_another_comment_is_refused(tmp_path: Path) -> None:
    """The agents job cannot redirect the matrix: the manifest must match the task job's read."""
    where = thread(tmp_path / "in", "/magi council Q?")
    inputs = read_inputs(where, issue=1, comment=42, command="council")
    out = run_council(tmp_path, inputs, {s: "says:X" for s in ("sage-1", "sage-2", "sage-3")})
    other = Inputs(**{**inputs.__dict__, "comment": 43})
    with pytest.raises(TamperedArtifact):
        read_council(out, other)


def test_a_missing_council_is_said_and_cut_to_fit(tmp_path: Path) -> None:
    """No artifact: a comment saying why (under the limit) and a failed check run."""
    fake = FakeGitHub()
    fake.add_pull(REPO, 7, "topic", HEAD)
    inputs = Inputs(7, 77, "review", "q", None, "", HEAD)
    asyncio.run(publish_council_missing(port=fake, env=ENV, inputs=inputs, why="x" * 100_000))
    (body,) = fake.comments_on(REPO, 7)
    assert len(body.encode("utf-16-le")) // 2 <= 65_536
    assert conclusion(fake) == "failure"


def test_the_cli_steps_run_as_the_workflow_runs_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`magi action council` then `magi action publish-council`: one matrix, one check run."""
    import magi.action.agents_job.council as council_mod
    from magi.engine.diagnose import Diagnosis
    from magi.testing.cli import invoke

    where = thread(tmp_path / "in", "/magi review", number=7, comment=77, pull=True)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    monkeypatch.setattr(
        "magi.engine.diagnose.diagnose", lambda *_a, **_k: Diagnosis(config=ch.config(3))
    )
    real_start = council_mod.start
    asker = ScriptedAsker({s: "approve" for s in ("sage-1", "sage-2", "sage-3")})
    monkeypatch.setattr(
        council_mod, "start", lambda *a, **k: real_start(*a, **{**k, "asker": asker})
    )
    fake = FakeGitHub()
    fake.add_pull(REPO, 7, "topic", HEAD)
    given = ActionContext(ports=lambda _url, _token: fake)
    env: dict[str, str | None] = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "MAGI_HOME": str(tmp_path / "home"),
        "MAGI_GITHUB_TOKEN": None,
        "GITHUB_TOKEN": None,
        "GH_TOKEN": None,
    }
    common = ["--issue", "7", "--comment", "77", "--input-dir", str(where), "--command", "review"]
    art = ["--artifact-dir", str(tmp_path / "art")]
    res = invoke(["action", "council", *common, *art], env=env)
    assert res.exit_code == 0, res.output
    res = invoke(
        ["action", "publish-council", *common, *art],
        env={**env, "MAGI_GITHUB_TOKEN": "ghs_t", "MAGI_MARKER_KEY": PEM},
        obj=given,
    )
    assert res.exit_code == 0, res.output
    (body,) = fake.comments_on(REPO, 7)
    assert "magi council" in body
    assert conclusion(fake) == "success"


def test_a_council_job_refusal_is_said_on_the_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No council can be seated: the agents job leaves why, publish-council posts it."""
    from magi.engine.diagnose import Diagnosis
    from magi.testing.cli import invoke

    where = thread(tmp_path / "in", "/magi council Q?", comment=42)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("magi.engine.diagnose.diagnose", lambda *_a, **_k: Diagnosis())
    fake = FakeGitHub()
    given = ActionContext(ports=lambda _url, _token: fake)
    env: dict[str, str | None] = {
        "GITHUB_REPOSITORY": REPO.full_name,
        "MAGI_HOME": str(tmp_path / "home"),
        "MAGI_GITHUB_TOKEN": None,
    }
    common = ["--issue", "1", "--comment", "42", "--input-dir", str(where)]
    art = ["--artifact-dir", str(tmp_path / "art")]
    assert invoke(["action", "council", *common, *art], env=env).exit_code != 0
    res = invoke(
        ["action", "publish-council", *common, *art],
        env={**env, "MAGI_GITHUB_TOKEN": "ghs_t", "MAGI_MARKER_KEY": PEM},
        obj=given,
    )
    assert res.exit_code != 0
    (body,) = fake.comments_on(REPO, 1)
    assert "no council can be seated" in body
