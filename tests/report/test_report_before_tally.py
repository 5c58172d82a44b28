"""The record published before a tally cannot be put back together with the committed
config: not by its seed, not by an alias, not by what an implementer's CLI printed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from magi.core.compete.blind import shuffle_labels
from magi.core.figures.pricing import price_table, spend
from magi.core.threads.posting import Policy, gate_json
from magi.model.config import AgentConfig
from magi.model.run import (
    Event,
    Leak,
    ModelTokens,
    Ranking,
    Run,
    RunStatus,
    Seat,
    SessionTotal,
    Turn,
    Usage,
    Verification,
    Vote,
)
from magi.report.before_tally import HIDDEN, panel_copy, public_copy, published_before_tally
from record_helpers import run as fixture_run

ROSTER = [
    AgentConfig(id="cl", kind="claude", model="claude-sonnet-4-5"),
    AgentConfig(id="cx", kind="codex", model="gpt-5-codex"),
    AgentConfig(id="oc", kind="opencode", model="anthropic/claude-opus-4"),
    AgentConfig(id="jx", kind="gemini", model="gemini-2.5-pro"),
]
AT = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def _turn(seat: str, agent: str, **kw: object) -> Turn:
    fields: dict[str, object] = {
        "seat": seat,
        "node": "implement" if seat.startswith("impl-") else "judge",
        "turn": 1,
        "agent": agent,
        "status": "ok",
        "started_at": AT,
        "duration_s": 60.0,
        "prompt_artifact": f"artifacts/x-{seat}-t1.prompt.md",
        "reply_artifact": f"artifacts/x-{seat}-t1.reply.md",
        "raw_artifact": f"artifacts/x-{seat}-t1.raw.txt",
    }
    return Turn.model_validate({**fields, **kw})


def _run(authors: dict[str, str], seed: int) -> Run:
    """A run stopped before its tally, ``authors`` seat -> agent, each agent's own traces:
    its session id's format, how it reports spend, how long it takes (and so the order its
    turns end in), its words. impl-C's turn failed its login (that it failed is the seat's,
    shown anyway), and the same agent held judge-2, which passed on because of it."""
    traces = {
        "cl": {"session_id": "0b5a6e52-1c1e", "usage": Usage(cost_usd=0.4), "duration_s": 30.0},
        "cx": {
            "session_id": "019a-thread",
            "usage": Usage(input_tokens=900, output_tokens=90),
            "duration_s": 600.0,  # its configured implement timeout, say
        },
        "oc": {"session_id": "ses_4f2a", "usage": Usage(), "duration_s": 90.0},
    }
    wording = {"cl": "API Error: 401", "cx": "codex login required", "oc": "ProviderAuthError"}
    failing = authors["impl-C"]
    base = fixture_run("20261203-120000-abcd")
    config = base.config.model_copy(update={"agents": ROSTER})
    r = base.model_copy(
        update={"seed": seed, "tally": None, "status": RunStatus.STALLED, "config": config}
    )
    r.seats = {
        seat: Seat(
            name=seat,
            agent=agent,
            session_id=str(traces[agent]["session_id"]),
            session_host=f"box-{sorted(traces).index(agent)}",  # where its login lives
            cli_version={"cl": "2.1.197", "cx": "0.171.0", "oc": "1.18.33"}[agent],
            # codex keeps its running total (and the model that spent it) on the seat.
            session_total=SessionTotal(
                session_id=str(traces[agent]["session_id"]),
                usage=Usage(models={"gpt-5-codex": ModelTokens(input=900, output=90)}),
            )
            if agent == "cx"
            else None,
        )
        for seat, agent in authors.items()
    }
    r.seats["judge-1"] = Seat(name="judge-1", agent="jx")
    r.seats["judge-2"] = Seat(name="judge-2", agent="jx", failover_from=[failing])
    impl = [
        _turn(
            seat,
            agent,
            **traces[agent],  # type: ignore[arg-type]
            error=wording[agent] if seat == "impl-C" else None,
            failure="auth" if seat == "impl-C" else None,
        )
        for seat, agent in authors.items()
    ]
    # Each agent's own pace: a second turn starts when its first ended (after a timeout,
    # the agent's configured one); turns are recorded as they end.
    again = _turn(
        "impl-A",
        authors["impl-A"],
        turn=2,
        started_at=AT + timedelta(seconds=float(traces[authors["impl-A"]]["duration_s"])),
    )  # type: ignore[arg-type]
    impl.append(again)
    impl.sort(key=lambda t: t.started_at + timedelta(seconds=t.duration_s))
    tokens = Usage(models={"gemini-2.5-pro": ModelTokens(input=1000, output=100)})
    r.turns = [*impl, _turn("judge-1", "jx", usage=tokens)]
    ended = {t.seat: t.started_at + timedelta(seconds=t.duration_s) for t in impl}
    # Recorded as the seats end: the faster agent's candidate first.
    r.events = [
        *r.events,
        *sorted(
            (
                Event(at=ended[c.seat], node="implement", message=f"candidate {c.label}: rescued")
                for c in r.candidates
                if c.seat in ended
            ),
            key=lambda e: e.at,
        ),
    ]
    for c in r.candidates:
        c.verification = Verification(
            passed=True, commands=["pytest"], exit_code=0, tail=f"{authors.get(c.seat)} printed"
        )
    r.judgements = [
        Ranking(
            seat="judge-1",
            status="ok",
            ranking=["A", "B"],
            text=f"A reads like {authors['impl-A']}",
        )
    ]
    r.votes = [
        Vote(seat="judge-1", status="ok", vote="A", rationale=f"{authors['impl-A']}'s style")
    ]
    for c in r.candidates:
        c.summary = f"{authors[c.seat]}: done, in my own words"
    r.leaks = [Leak(label="B", where="patch", term=authors["impl-B"], action="warned")]
    said = [
        f"impl-B: {authors['impl-B']} ran out of quota; the seat passes on",
        f"judge-2 held by {failing}, which auth: {wording[failing]}; handed to jx, the next "
        "agent in the roster",
    ]
    r.events = [*r.events, *(Event(at=AT, node="judge", message=m, level="warn") for m in said)]
    return r


def _published(r: Run) -> dict[str, object]:
    copy = public_copy(r)
    return gate_json(copy.model_dump(mode="json", by_alias=True), Policy(roster=ROSTER))


def test_who_sat_where_leaves_no_trace_in_the_published_copy() -> None:
    """Two runs that differ only in which agent wrote which candidate (and in their seeds)
    publish the same record: nothing in it can tell them apart."""
    one = _run({"impl-A": "cl", "impl-B": "cx", "impl-C": "oc"}, seed=11)
    other = _run({"impl-A": "oc", "impl-B": "cl", "impl-C": "cx"}, seed=29)
    assert _published(one) == _published(other)


def test_the_seed_and_the_committed_roster_order_no_longer_name_an_author() -> None:
    """Before: ``shuffle_labels(n, seed)`` over ``[roles] implementers`` was the answer."""
    r = _run({"impl-A": "cl", "impl-B": "cx", "impl-C": "oc"}, seed=11)
    assert shuffle_labels(3, r.seed)  # the attack needs only the seed
    out = _published(r)
    assert out["seed"] == 0
    seats = out["seats"]
    assert isinstance(seats, dict)
    assert {seats[s]["agent"] for s in seats} == {HIDDEN}, "judges too: one may implement"


def test_only_magis_implement_prompts_go_out_of_the_artifacts() -> None:
    """A judge's packet holds every candidate's summary and patch; an implementer's reply
    and raw output are its own words and its CLI's format."""
    assert published_before_tally("implement-impl-A-t1.prompt.md")
    for name in (
        "implement-impl-A-t1.raw.txt",
        "implement-impl-B-t1.reply.md",
        "judge-judge-1-t1.prompt.md",
        "deliberate-judge-2-t2.reply.md",
        "vote-judge-1-t3.raw.txt",
    ):
        assert not published_before_tally(name), name


def test_an_implementers_words_are_withheld_and_its_spend_pooled_as_dollars() -> None:
    r = _run({"impl-A": "cl", "impl-B": "cx", "impl-C": "oc"}, seed=11)
    copy = public_copy(r)
    impl = [t for t in copy.turns if t.seat.startswith("impl-")]
    assert [(t.seat, t.turn) for t in impl] == [
        ("impl-A", 1),
        ("impl-A", 2),
        ("impl-B", 1),
        ("impl-C", 1),
    ], "seat order, not the order they ended in"
    assert {t.duration_s for t in impl} == {0.0}
    assert {t.started_at for t in impl} == {AT}, "each starts when the wave did"
    assert impl[0].usage == Usage(cost_usd=0.4), "one dollar figure, nothing per CLI"
    assert all(t.usage == Usage() for t in impl[1:])
    (judge,) = [t for t in copy.turns if t.seat == "judge-1"]
    assert judge.usage.models == {}, "a model's name would be hidden, collapsing its prices"
    assert judge.usage.cost_usd is not None, "priced here, with its model's price"
    prices = price_table(r.config.budget.prices)
    before, after = spend(r.turns, prices).usd, spend(copy.turns, prices).usd
    assert after == pytest.approx(before), "budgets over published records add up as before"
    assert impl[3].error is not None, "that it failed is the seat's, and shown"
    assert impl[3].failure is None
    text = copy.model_dump_json()
    for words in ("ProviderAuthError", "in my own words", "ses_4f2a", "printed", "style"):
        assert words not in text
    assert r.seats["impl-A"].agent == "cl", "the run itself is untouched"


def _panel(r: Run) -> dict[str, object]:
    """The panel of ``r``'s judges' wave (judge-2 its own seat), without what the judges
    read and wrote: in this fixture those name authors on purpose, and they are kept."""
    copy = panel_copy(r, {"judge-2"})
    for c in copy.candidates:
        c.summary = ""
        c.verification = None
    copy.judgements, copy.votes = [], []
    return copy.model_dump(mode="json")


def test_who_sat_where_leaves_no_trace_in_a_judges_panel() -> None:
    """Two runs that differ only in which agent wrote which candidate (and in their seeds)
    give a judges' runner the same panel, but for what the judges read and wrote."""
    one = _run({"impl-A": "cl", "impl-B": "cx", "impl-C": "oc"}, seed=11)
    other = _run({"impl-A": "oc", "impl-B": "cl", "impl-C": "cx"}, seed=29)
    assert _panel(one) == _panel(other)


def test_a_judges_panel_keeps_what_the_judges_read_and_names_no_author() -> None:
    """What a judge's seat job on another runner works from: the candidates as the judges
    read them and the seat it asks, and none of what ties a candidate to an agent, the
    traces a judge's seat left when it passed on included."""
    r = _run({"impl-A": "cl", "impl-B": "cx", "impl-C": "oc"}, seed=11)
    r.turns.append(_turn("judge-2", "oc", failure="auth", error="ProviderAuthError", turn=1))
    r.turns.append(_turn("judge-2", "jx", turn=2))
    panel = panel_copy(r, {"judge-2"})
    assert panel.seed == 0
    assert {panel.seats[s].agent for s in ("impl-A", "impl-B", "impl-C", "judge-1")} == {HIDDEN}
    assert (panel.seats["judge-2"].agent, panel.seats["judge-2"].failover_from) == ("jx", [])
    impl = [t for t in panel.turns if t.seat.startswith("impl-")]
    assert {t.agent for t in impl} == {HIDDEN}
    assert not [t for t in impl if t.reply_artifact or t.raw_artifact or t.failure]
    passed_on, held = [t for t in panel.turns if t.seat == "judge-2"]
    assert (passed_on.agent, passed_on.failure, passed_on.raw_artifact) == (HIDDEN, None, None)
    assert held.agent == "jx", "the agent that holds its seat now runs it there"
    assert [lk.term for lk in panel.leaks] == [HIDDEN]
    # What the judges read and wrote stays: their prompts are built of it.
    viable = [c.summary for c in r.candidates if c.viable]
    assert viable
    assert [c.summary for c in panel.candidates if c.viable] == viable
    assert panel.judgements == r.judgements
    judged = [e for e in panel.events if e.node == "judge"]
    assert [e.at for e in judged] == [AT, AT], "the judges' events keep their times"
    text = panel.model_dump_json(exclude={"config"})
    for words in ("ProviderAuthError", "codex login required", "held by", "ses_4f2a", '"cx"'):
        assert words not in text, words
    assert r.seats["judge-2"].failover_from == ["oc"], "the run itself is untouched"


def test_a_candidate_no_judge_reads_stays_with_the_pool() -> None:
    r = _run({"impl-A": "cl", "impl-B": "cx", "impl-C": "oc"}, seed=11)
    r.candidates[1].disqualified = "deleted the tests"
    panel = panel_copy(r, set())
    lost = panel.candidates[1]
    assert (lost.summary, lost.head) == ("[withheld until the tally]", None)
    assert panel.candidates[0].summary == r.candidates[0].summary
