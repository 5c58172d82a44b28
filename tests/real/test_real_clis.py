"""Real claude and codex turns, jailed, through magi's adapters, against the scripted model:
what the defects of issue 46 looked like with the real CLIs, each checked as fixed."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_helpers import BIN, GIT_ID, KEYS, needs_clis, pointed

from magi.agents import auth
from magi.agents.base import TurnRequest, TurnResult, TurnStatus, Usage
from magi.agents.registry import build_agent, kinds
from magi.model.config import AgentConfig, Sandbox
from magi.sandbox.bwrap import decide, seat_spec
from magi.sandbox.seat_state import Laid, hand_back, lay
from magi.testing.model_scripts import shell
from magi.testing.model_server import ScriptedModel
from magi.testing.model_wire import Asked, Reply

pytestmark = needs_clis
COMMIT = (
    "echo scripted > change.txt && git add change.txt"
    " && git commit -qm 'the scripted change' && echo committed"
)


def script(asked: Asked) -> Reply:
    """Commit when asked to, then say what the command printed; else answer in words."""
    role, text = asked.last
    if role == "tool":
        return Reply(text=f"done: {text.strip()[-60:]}", input_tokens=30, output_tokens=4)
    if "commit" not in asked.last_user:
        return Reply(text="nothing to do", input_tokens=20, output_tokens=3)
    return shell(asked, COMMIT)


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(script, KEYS) as m:
        yield m


def clone(place: Path) -> Path:
    work = place / "clone"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(
        ["git", "-C", str(work), "commit", "-q", "--allow-empty", "-m", "base"],
        check=True,
        env={**os.environ, **GIT_ID},
    )
    return work


def turn(
    cfg: AgentConfig,
    work: Path,
    home: Path,
    *,
    write: bool,
    prompt: str,
    session: str | None = None,
    total: Usage | None = None,
) -> TurnResult:
    # As a seat's turn is asked (magi.seats.jailing): its own copy of its CLI's state,
    # laid with the login before the turn, the login handed back and taken out after it.
    state = kinds()[cfg.kind].state
    laid = (
        lay(state, home=str(home), environ={"HOME": str(home)}, seat_dir=home.parent / "seat")
        if state is not None
        else Laid()
    )
    spec = seat_spec(
        decide(Sandbox()),
        cwd=work,
        writable=write,
        hide=[],
        environ={"HOME": str(home)},
        binds=laid.binds,
    )
    assert spec is not None, "bubblewrap is not usable here"
    request = TurnRequest(
        seat="impl-A" if write else "judge-1",
        prompt=prompt,
        cwd=work,
        allow_write=write,
        timeout=120,
        session_id=session,
        session_total=total,
        jail=spec,
        environ={"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home)},
    )
    try:
        return build_agent(cfg).run_turn(request)
    finally:
        hand_back(laid, lock_dir=home.parent / "locks")


def log(work: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(work), "log", "--format=%s"], capture_output=True, text=True, check=True
    )
    return out.stdout.split("\n")[:-1]


def test_claude_commits_jailed_and_resumes_its_session(model: ScriptedModel, place: Path) -> None:
    home = place / "home"
    home.mkdir()
    work = clone(place)
    cfg = pointed("claude", model.url, home)
    first = turn(cfg, work, home, write=True, prompt="please commit the change")
    assert first.status is TurnStatus.OK, first.error
    assert first.text == "done: committed"
    assert log(work) == ["the scripted change", "base"]
    sent = model.logged("anthropic")
    assert {r.headers.get("x-claude-code-session-id") for r in sent} == {first.session_id}
    second = turn(cfg, work, home, write=False, prompt="and now?", session=first.session_id)
    assert second.status is TurnStatus.OK, second.error
    assert second.session_id == first.session_id
    last = model.logged("anthropic")[-1].body
    said = json.dumps(last["messages"])
    assert "please commit the change" in said  # the resumed turn carried the first prompt
    assert "and now?" in said


def test_codex_commits_in_its_own_clone_and_counts_a_resumed_turn_once(
    model: ScriptedModel, place: Path
) -> None:
    home = place / "home"
    home.mkdir()
    work = clone(place)
    cfg = pointed("codex", model.url, home)
    first = turn(cfg, work, home, write=True, prompt="please commit the change")
    assert first.status is TurnStatus.OK, first.error
    why = first.raw_stdout[-2000:] + first.raw_stderr[-2000:]
    assert log(work) == ["the scripted change", "base"], why  # before: index.lock, read-only
    asked_first = len(model.logged("openai"))
    second = turn(
        cfg,
        work,
        home,
        write=False,
        prompt="and now?",
        session=first.session_id,
        total=first.session_total,
    )
    assert second.status is TurnStatus.OK, second.error
    # The requests the script answered: not the WebSocket's handshake, nor codex's warm-up
    # (a response.create with no input, answered with nothing spent).
    asked_second = [
        r
        for r in model.logged("openai")[asked_first:]
        if isinstance(r.body, dict) and r.body.get("input")
    ]
    # Each answer of the script is 20 tokens in (or 30 after a tool, 10 for a call): the
    # second turn counts only its own requests, not the thread's running total.
    assert second.usage.input_tokens == 20 * len(asked_second)
    assert second.session_total is not None
    assert second.session_total.input_tokens == (first.usage.input_tokens or 0) + 20 * len(
        asked_second
    )


def test_a_rejected_claude_key_reaches_the_model_at_most_twice(
    model: ScriptedModel, place: Path
) -> None:
    home = place / "home"
    home.mkdir()
    work = clone(place)
    cfg = pointed("claude", model.url, home, key="sk-ant-wrong")
    env = {"PATH": f"{BIN}:/usr/bin:/bin", **cfg.env}
    assert auth.check_claude(cfg, env).ok is True  # a key is present: only a turn can tell
    result = turn(cfg, work, home, write=False, prompt="judge this")
    assert result.status is TurnStatus.ERROR
    assert result.failure == "auth"
    posts = [r for r in model.logged("anthropic") if r.method == "POST"]
    assert 1 <= len(posts) <= 2
    assert {r.credential for r in posts} == {"rejected"}


def test_codex_with_only_openai_api_key_is_refused_by_doctor_and_sends_no_key(
    model: ScriptedModel, place: Path
) -> None:
    """Doctor says no, and rightly: codex with only OPENAI_API_KEY and no login sends no
    credential at all, so every request the model sees is refused."""
    home = place / "home"
    home.mkdir()
    cfg = AgentConfig(
        id="cx", kind="codex", env={"OPENAI_API_KEY": KEYS["openai"], "HOME": str(home)}
    )
    env = {"PATH": f"{BIN}:/usr/bin:/bin", **cfg.env}
    status = auth.check_codex(cfg, env)
    assert status.ok is False
    assert "CODEX_API_KEY" in status.fix
    args = ["-c", f"openai_base_url={json.dumps(model.url + '/v1')}"]
    only = AgentConfig(id="cx", kind="codex", args=args, env=cfg.env)
    result = turn(only, clone(place), home, write=False, prompt="judge this")
    assert result.status is TurnStatus.ERROR
    seen = model.logged("openai")
    assert seen
    assert {r.credential for r in seen} == {"missing"}


def test_gemini_commits_jailed_and_resumes_its_session(model: ScriptedModel, place: Path) -> None:
    home = place / "home"
    home.mkdir()
    work = clone(place)
    cfg = pointed("gemini", model.url, home)
    first = turn(cfg, work, home, write=True, prompt="please commit the change")
    assert first.status is TurnStatus.OK, first.error
    assert log(work) == ["the scripted change", "base"]
    sent = model.logged("gemini")
    assert {(r.path, r.credential) for r in sent} == {
        ("/v1beta/models/gemini-2.5-pro:streamGenerateContent", "accepted")
    }
    second = turn(cfg, work, home, write=False, prompt="and now?", session=first.session_id)
    assert second.status is TurnStatus.OK, second.error
    said = json.dumps(model.logged("gemini")[-1].body["contents"])
    assert "please commit the change" in said
    assert "and now?" in said


def test_gemini_without_a_model_is_routed_by_one_classifier_call(
    model: ScriptedModel, place: Path
) -> None:
    """Without ``-m``, gemini 0.61.0 first asks a classifier (``generateContent`` for JSON of
    a schema) which model takes the turn. Answered with the script's tool call, as the
    scripted model once did where the API answers JSON of the schema, gemini retried it
    five times with backoff (some 100 s) before falling back: the slow gemini turns of the
    first four-CLI competition, whose seats had no model."""
    home = place / "home"
    home.mkdir()
    work = clone(place)
    cfg = pointed("gemini", model.url, home).model_copy(update={"model": None})
    first = turn(cfg, work, home, write=True, prompt="please commit the change")
    assert first.status is TurnStatus.OK, first.error
    assert log(work) == ["the scripted change", "base"]
    asked = [(r.path.rsplit("/", 1)[-1], r.status) for r in model.logged("gemini")]
    routed = [r for r in model.logged("gemini") if r.path.endswith(":generateContent")]
    assert len(routed) == 1, asked
    assert routed[0].body["generationConfig"]["responseMimeType"] == "application/json"


def test_gemini_with_a_base_url_and_no_settings_is_refused_by_doctor_and_by_gemini(
    model: ScriptedModel, place: Path
) -> None:
    """What doctor says is what headless gemini does: "Invalid auth method selected" (exit
    41) before any request, with GOOGLE_GEMINI_BASE_URL and no settings.json."""
    home = place / "home"
    home.mkdir()
    env = {"GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": KEYS["gemini"], "HOME": str(home)}
    cfg = AgentConfig(id="gm", kind="gemini", env=env)
    status = auth.check_gemini(cfg, {"PATH": f"{BIN}:/usr/bin:/bin", **env})
    assert status.ok is False
    result = turn(cfg, clone(place), home, write=False, prompt="judge this")
    assert result.status is TurnStatus.ERROR
    assert result.exit_code == 41
    assert "Invalid auth method selected" in (result.error or "")
    assert model.logged("gemini") == []


def test_opencode_commits_jailed_and_resumes_its_session(model: ScriptedModel, place: Path) -> None:
    home = place / "home"
    home.mkdir()
    work = clone(place)
    cfg = pointed("opencode", model.url, home)
    first = turn(cfg, work, home, write=True, prompt="please commit the change")
    assert first.status is TurnStatus.OK, first.error
    assert log(work) == ["the scripted change", "base"]
    assert {r.credential for r in model.logged("anthropic")} == {"accepted"}
    second = turn(cfg, work, home, write=False, prompt="and now?", session=first.session_id)
    assert second.status is TurnStatus.OK, second.error
    assert second.session_id == first.session_id
    said = json.dumps(model.logged("anthropic")[-1].body["messages"])
    assert "please commit the change" in said
