"""magi ask: an agent asks a person mid-turn instead of guessing, and gets the answer back.

The agent's side runs inside its seat's turn (jailed where bubblewrap works): ``magi`` is on
its PATH, the question goes into the seat's mailbox, magi records it against the seat, and
``magi answer`` (a person's terminal) sends the answer back on the agent's stdout.
"""

from __future__ import annotations

import json

import pytest

from graph_helpers import COMMIT, FIX, LiveRun, config, git_out, start, wait_for
from magi.config.model import Sandbox
from magi.core.asking import DECIDE, BadQuestion, clean, match
from magi.jail import decide
from magi.seats import mailbox
from magi.state.model import RunStatus

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
    (asked,) = run.questions
    assert (asked.status, asked.turns[0].how, asked.turns[0].answer) == (
        "answered",
        "decide",
        DECIDE,
    )
    assert any("past [ask] max_per_run = 0" in e.message for e in run.events)


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
    mailbox.write(mailbox.thread(tmp_path, "ab12") / "q-1.json", {"summary": "q"})
    assert mailbox.pending(tmp_path) == [("ab12", 1)]
    assert mailbox.answer(tmp_path, "ab12", 1, "say", "first")
    assert not mailbox.answer(tmp_path, "ab12", 1, "say", "second")
    assert mailbox.answer_of(tmp_path, "ab12", 1) == {"how": "say", "answer": "first"}
    assert mailbox.pending(tmp_path) == []
    (mailbox.thread(tmp_path, "cd34")).mkdir()
    (mailbox.thread(tmp_path, "cd34") / "q-1.json").write_text(json.dumps(["not", "an object"]))
    with pytest.raises(BadQuestion, match="not a JSON object"):
        mailbox.read(mailbox.thread(tmp_path, "cd34") / "q-1.json")
    with pytest.raises(BadQuestion, match="not a question id"):
        mailbox.thread(tmp_path, "../x")


def test_the_mailbox_is_never_read_or_written_through_a_link(tmp_path) -> None:
    """A seat owns its mailbox; magi, outside the jail, must not follow a link it planted."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.json").write_text('{"summary": "the user\'s secret", "answer": "x"}')
    state = tmp_path / "state"
    d = mailbox.thread(state, "ab12")
    d.mkdir(parents=True)
    (d / "q-1.json").symlink_to(elsewhere / "secret.json")
    with pytest.raises(BadQuestion, match="cannot read"):
        mailbox.read(d / "q-1.json")
    (mailbox.thread(state, "cd34")).symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(BadQuestion, match="symbolic link"):
        mailbox.answer(state, "cd34", 1, "say", "hi")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["secret.json"]


def test_a_question_written_by_hand_that_cannot_be_read_is_said_once_and_ends_the_wait(env):
    """Not through magi ask: the run says so once and answers "decide yourself"."""
    repo, home, sd = env
    bad = (
        "sh:mkdir -p $MAGI_STATE_DIR/ask/ab12 && printf '[1]' > $MAGI_STATE_DIR/ask/ab12/q-1.json"
        " && until [ -e $MAGI_STATE_DIR/ask/ab12/a-1.json ]; do sleep 0.05; done && "
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
