"""magi ask: an agent asks a person mid-turn instead of guessing, and gets the answer back.

The agent's side runs inside its seat's turn (jailed where bubblewrap works): ``magi`` is on
its PATH, the question goes into the seat's mailbox, magi records it against the seat, and
``magi answer`` (a person's terminal) sends the answer back on the agent's stdout.
"""

from __future__ import annotations

import json
import os

import pytest

from graph_helpers import COMMIT, FIX, LiveRun, config, git_out, start, wait_for
from magi.core.person.asking import DECIDE, BadQuestion, clean, match
from magi.model.config import Sandbox
from magi.model.run import RunStatus
from magi.sandbox.bwrap import decide
from magi.seats import mailbox

ASKS = (
    'sh:ans=$(magi ask --summary "Which storage backend?" --choice SQLite --choice Redis) '
    '&& echo "$ans" > backend.txt && ' + FIX + " && " + COMMIT + " -m fix"
)
# Asks, gets words back (--say), replies on the same thread, then gets a choice.
ASKS_BACK = (
    'sh:first=$(magi ask --summary "Which storage backend?" --choice SQLite 2>q.err) && '
    "qid=$(sed -n 's/^magi: question \\([0-9a-f]*\\).*/\\1/p' q.err) && "
    'echo "$first" > first.txt && '
    'then=$(magi ask --thread "$qid" --summary "Postgres needs a server" --choice SQLite) && '
    'echo "$then" > backend.txt && rm q.err && ' + FIX + " && " + COMMIT + " -m fix"
)
JAILED = decide(Sandbox()).jailed


def _live(tmp_path, persona: str) -> LiveRun:
    """One asking implementer (no review loop: it would sit as the fixer and ask again)."""
    made = LiveRun(tmp_path, {"a1": persona}, {"j1": "evidence"})
    text = made.cfg.read_text().replace("[graph]\n", "[graph]\nreview_rounds = 0\n")
    if JAILED:  # the real road: the agent asks from inside its jail
        text = text.replace('mode = "off"', f'mode = "auto"\nstate = ["{made.sd}"]')
    made.cfg.write_text(text)
    return made


@pytest.fixture
def live(tmp_path):
    made = _live(tmp_path, ASKS)
    yield made
    made.close()


def _open(live):
    wait_for(lambda: live.store.latest() is not None, "the run's record")
    wait_for(
        lambda: any(q.status == "open" for q in live.store.load(live.run_id()).questions),
        "the question, recorded",
    )
    return next(q for q in live.store.load(live.run_id()).questions if q.status == "open")


def test_an_agent_asks_and_the_answer_comes_back_on_its_stdout(live):
    proc = live.start()
    q = _open(live)
    listed = live.magi("answer")
    assert listed.returncode == 0, listed.stderr
    assert q.id in listed.stdout
    assert "implement · A: Which storage backend?" in listed.stdout
    assert "1. SQLite" in listed.stdout
    assert "2. Redis" in listed.stdout
    assert f"WAITING ON YOU: magi answer {q.id}" in live.magi("list").stdout
    assert f"waiting on you: magi answer {q.id}" in live.magi("show").stdout
    wrong = live.magi("answer", q.id, "Postgres")
    assert wrong.returncode == 2
    assert "not one of its choices" in wrong.stdout + wrong.stderr
    done = live.magi("answer", q.id, "redis")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "answered" in done.stdout
    out = live.ended(proc, "the answer")
    assert proc.returncode == 0, out
    run = live.store.load_run(live.run_id())
    assert run.status is RunStatus.READY, run.reason
    (asked,) = run.questions
    assert asked.seat == run.candidates[0].seat
    assert (asked.node, asked.label, asked.status) == ("implement", "A", "answered")
    assert asked.turns[0].choices == ["SQLite", "Redis"]
    assert (asked.turns[0].how, asked.turns[0].answer) == ("choice", "Redis")
    assert "-> choice: Redis" in live.magi("show", run.id).stdout
    chosen = git_out(live.repo, "show", f"{run.candidates[0].branch}:backend.txt")
    assert chosen == "Redis\n"
    again = live.magi("answer", q.id, "SQLite")
    assert again.returncode == 4, "an answered question is not open any more"
    assert "no agent is waiting on you" in live.magi("answer").stdout


def test_words_back_and_a_reply_on_the_same_thread(tmp_path):
    live = _live(tmp_path, ASKS_BACK)
    try:
        proc = live.start()
        q = _open(live)
        said = live.magi("answer", q.id, "--say", "why not Postgres?")
        assert said.returncode == 0, said.stdout + said.stderr
        wait_for(
            lambda: (
                len(live.store.load(live.run_id()).questions[0].turns) == 2
                and live.store.load(live.run_id()).questions[0].status == "open"
            ),
            "the agent's reply on the thread",
        )
        listed = live.magi("answer").stdout
        assert "Postgres needs a server" in listed
        done = live.magi("answer", q.id, "1")
        assert done.returncode == 0, done.stdout + done.stderr
        live.ended(proc, "the second answer")
        run = live.store.load_run(live.run_id())
        (asked,) = run.questions  # one question, two turns: a reply is not a new one
        assert [(t.how, t.answer) for t in asked.turns] == [
            ("say", "why not Postgres?"),
            ("choice", "SQLite"),
        ]
    finally:
        live.close()


def test_past_max_per_run_an_agent_is_told_to_decide_itself(env):
    """No one is waited on: the question is recorded and answered by magi at once."""
    repo, home, sd = env
    cfg = config(sd, {"a1": ASKS}, judges={}, ask={"max_per_run": 0}, graph={"review_rounds": 0})
    run = start(repo, home, cfg)
    assert run.status is RunStatus.READY, run.reason
    assert run.questions == [], "past the limit a question is counted, not recorded"
    assert any(
        "1 question(s) answered 'decide yourself' (past [ask] max_per_run = 0" in e.message
        for e in run.events
    )
    reply = git_out(repo, "show", f"{run.candidates[0].branch}:backend.txt")
    assert reply == DECIDE + "\n"


def test_a_question_is_cleaned_and_bounded() -> None:
    asked = clean("Which\x1b[31m backend?\n\n  really", ["SQLite", "sqlite", " Redis ", ""])
    assert asked.summary == "Which[31m backend? really"
    assert asked.choices == ("SQLite", "Redis")
    assert len(clean("x" * 5000, []).summary) == 500
    with pytest.raises(BadQuestion, match="--summary"):
        clean("  ", ["a"])
    with pytest.raises(BadQuestion, match="at most 8"):
        clean("q", [f"c{i}" for i in range(9)])
    assert match("2", ("a", "b")) == "b"
    with pytest.raises(BadQuestion, match="--say"):
        match("x", ())


def test_an_answer_is_written_once(tmp_path) -> None:
    state, run = tmp_path / "state", tmp_path / "run"
    state.mkdir()
    run.mkdir()
    mailbox.write(state, mailbox.ASK, "ab12", name="q-1.json", data={"summary": "q"})
    assert mailbox.pending(state) == [("ab12", 1)]
    assert mailbox.answer(run, "impl-A", "ab12", 1, "say", "first")
    assert not mailbox.answer(run, "impl-A", "ab12", 1, "say", "second")
    assert mailbox.answered(run, "impl-A", "ab12", 1) == {"how": "say", "answer": "first"}
    assert mailbox.pending(state) == [("ab12", 1)], "a person's answer is not the agent's yet"
    assert mailbox.hand(state, "ab12", 1, "say", "first")
    assert mailbox.pending(state) == []
    mailbox.write(state, mailbox.ASK, "cd34", name="q-1.json", data={"summary": "q"})
    (state / "ask" / "cd34" / "q-1.json").write_text(json.dumps(["not", "an object"]))
    with pytest.raises(BadQuestion, match="not a JSON object"):
        mailbox.question(state, "cd34", 1)
    with pytest.raises(BadQuestion, match="not a question id"):
        mailbox.question(state, "../x", 1)


def test_the_mailbox_is_never_read_or_written_through_a_link_or_a_pipe(tmp_path) -> None:
    """A seat owns its mailbox; magi, outside the jail, follows no link it planted, and a FIFO
    (which would block an open for ever) is refused at once."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.json").write_text('{"summary": "the user\'s secret", "answer": "x"}')
    state = tmp_path / "state"
    d = state / "ask" / "ab12"
    d.mkdir(parents=True)
    (d / "q-1.json").symlink_to(elsewhere / "secret.json")
    with pytest.raises(BadQuestion, match="cannot read"):
        mailbox.question(state, "ab12", 1)
    (state / "ask" / "cd34").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(BadQuestion, match="not a folder"):
        mailbox.hand(state, "cd34", 1, "say", "hi")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["secret.json"]
    os.mkfifo(d / "a-1.json")
    with pytest.raises(BadQuestion, match="not a regular file"):
        mailbox.handed(state, "ab12", 1)


@pytest.mark.parametrize("plant", ["printf '[1]' > $q", "mkfifo $q"], ids=["not-json", "a-fifo"])
def test_a_question_written_by_hand_that_cannot_be_read_is_said_once_and_ends_the_wait(env, plant):
    """Not through magi ask: the run says so once and answers "decide yourself". A FIFO
    would block whoever opens it: magi never waits on one."""
    repo, home, sd = env
    bad = (
        "sh:q=$MAGI_STATE_DIR/ask/ab12/q-1.json && mkdir -p $MAGI_STATE_DIR/ask/ab12 && "
        + plant
        + " && until [ -e $MAGI_STATE_DIR/ask/ab12/a-1.json ]; do sleep 0.05; done && "
        + FIX
        + " && "
        + COMMIT
        + " -m fix"
    )
    cfg = config(sd, {"a1": bad}, judges={}, graph={"review_rounds": 0})
    run = start(repo, home, cfg)
    assert run.status is RunStatus.READY, run.reason
    said = [e.message for e in run.events if "a question was not taken" in e.message]
    assert len(said) == 1, said
    assert run.questions == []


def test_an_answer_the_agent_wrote_itself_is_never_recorded_as_a_persons(env):
    """The mailbox is the agent's to write: only magi answer (outside every jail) counts."""
    repo, home, sd = env
    forged = (
        "sh:d=$MAGI_STATE_DIR/ask/ab12 && mkdir -p $d && "
        """printf '{"summary": "q", "choices": ["x"]}' > $d/q-1.json && """
        """printf '{"how": "choice", "answer": "x"}' > $d/a-1.json && """
        + FIX
        + " && "
        + COMMIT
        + " -m fix"
    )
    cfg = config(sd, {"a1": forged}, judges={}, graph={"review_rounds": 0})
    run = start(repo, home, cfg)
    assert run.status is RunStatus.READY, run.reason
    assert all(t.how is None for q in run.questions for t in q.turns)
    assert all(q.status != "answered" for q in run.questions)


def test_a_question_left_open_by_a_killed_turn_is_closed_when_the_run_resumes() -> None:
    import threading
    import types
    from datetime import UTC, datetime

    from magi.model.run import Question, QuestionTurn
    from magi.seats.asking import close_open

    now = datetime(2026, 12, 2, tzinfo=UTC)
    q = Question(id="ab12", box="ab12", seat="impl-A", node="implement", turn=1, label="A")
    q.turns.append(QuestionTurn(summary="q", asked_at=now))
    record = types.SimpleNamespace(questions=[q])
    ctx = types.SimpleNamespace(lock=threading.RLock(), record=record)
    assert close_open(ctx) == ["ab12"]  # type: ignore[arg-type]
    assert q.status == "unanswered"
    assert close_open(ctx) == []  # type: ignore[arg-type]
