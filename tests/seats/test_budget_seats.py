"""Budgets see every seat: a codex seat's tokens are priced, a command seat's time is capped."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from budget_helpers import budget_config, seat_context
from magi.agents import build_agent
from magi.agents.base import TurnRequest, TurnResult, TurnStatus
from magi.core.figures.pricing import Spend
from magi.model.run import RunStatus, Usage
from magi.seats import SeatContext, Stop, ask, check_budget
from magi.testing.fakes import FakeAgent
from magi.testing.standins import write_standin

# The stand-in prints codex's real `turn.completed` usage: 100 input tokens (50 of them
# cached) and 20 output. At these prices that is (50 * 2000 + 50 * 0 + 20 * 2500) / 1e6.
CODEX_PRICE = {"input": 2000.0, "cached": 0.0, "output": 2500.0}
CODEX_TURN_USD = 0.15


def _ask(sctx: SeatContext, work: Path, seat: str = "impl-A") -> TurnResult:
    return ask(sctx, seat=seat, node="implement", prompt="do it", cwd=work, allow_write=True)


def test_a_codex_seat_is_held_by_run_usd_at_the_price_of_its_tokens(tmp_path: Path) -> None:
    """Codex reports tokens and no cost: they are priced, and the next seat is not started."""
    work = tmp_path / "work"
    work.mkdir()
    codex = write_standin(tmp_path / "bin", "codex", reply="done")
    entry = codex.agent_config("cx", model="gpt-5-codex")
    cfg = budget_config(
        [entry.model_dump(exclude_none=True)],
        run_usd=0.10,
        prices={"gpt-5-codex": CODEX_PRICE},
    )
    sctx = seat_context(tmp_path / "home", cfg, {"cx": build_agent(entry)})

    first = _ask(sctx, work)
    assert first.status is TurnStatus.OK, first.error
    assert sctx.record.turns[0].usage.cost_usd is None, "codex reports no cost of its own"
    with pytest.raises(Stop) as held:
        _ask(sctx, work)
    assert held.value.status is RunStatus.HELD
    assert held.value.reason == "budget: this run has spent ~$0.15 est. of its $0.10 cap"
    assert len(codex.calls()) == 1, "the seat past the cap never started"


def test_the_default_price_table_prices_a_codex_seat_without_any_config(tmp_path: Path) -> None:
    """No [budget.prices]: magi's own estimate for gpt-5-codex is what the cap counts."""
    work = tmp_path / "work"
    work.mkdir()
    codex = write_standin(tmp_path / "bin", "codex", reply="done")
    entry = codex.agent_config("cx", model="gpt-5-codex")
    # (50 * 1.25 + 50 * 0.125 + 20 * 10) / 1e6 = $0.00026875
    cfg = budget_config([entry.model_dump(exclude_none=True)], run_usd=0.0002)
    sctx = seat_context(tmp_path / "home", cfg, {"cx": build_agent(entry)})
    _ask(sctx, work)
    with pytest.raises(Stop, match=r"spent ~\$0\.00 est\. of its \$0\.00 cap"):
        _ask(sctx, work)


def _slow_command(seconds: float) -> FakeAgent:
    """What a command seat's turn leaves: a reply, its wall time, no tokens and no cost."""

    def reply(request: TurnRequest) -> TurnResult:
        return TurnResult(TurnStatus.OK, text="done", duration_s=seconds)

    return FakeAgent("cmd", reply, kind="command")


def test_a_command_seat_is_held_by_run_minutes(tmp_path: Path) -> None:
    """A CLI that reports neither cost nor tokens spends wall minutes against run_minutes."""
    cfg = budget_config([{"id": "cmd", "kind": "command", "command": ["true"]}], run_minutes=1)
    agent = _slow_command(90.0)
    sctx = seat_context(tmp_path / "home", cfg, {"cmd": agent})

    _ask(sctx, tmp_path)
    with pytest.raises(Stop) as held:
        _ask(sctx, tmp_path)
    assert held.value.status is RunStatus.HELD
    assert held.value.reason == (
        "budget: turns with no dollar figure (command: no cost or tokens reported) have "
        "taken 1.5 of this run's 1 minutes ([budget] run_minutes)"
    )
    assert len(agent.requests) == 1


def test_seats_with_a_dollar_figure_do_not_spend_run_minutes(tmp_path: Path) -> None:
    """run_minutes caps only what no dollar cap can see: a priced turn's time is not in it."""

    def priced(request: TurnRequest) -> TurnResult:
        return TurnResult(TurnStatus.OK, text="ok", duration_s=600.0, usage=Usage(cost_usd=0.01))

    cfg = budget_config([{"id": "cl", "kind": "claude"}], run_minutes=1)
    sctx = seat_context(tmp_path / "home", cfg, {"cl": FakeAgent("cl", priced)})
    _ask(sctx, tmp_path)
    _ask(sctx, tmp_path)  # ten minutes of reported-cost work: not held
    assert len(sctx.record.turns) == 2


def test_a_dollar_cap_says_once_which_turns_it_cannot_see(tmp_path: Path) -> None:
    """run_usd set, run_minutes not, a command seat running: a warning, not a silent pass."""
    cfg = budget_config([{"id": "cmd", "kind": "command", "command": ["true"]}], run_usd=5)
    sctx = seat_context(tmp_path / "home", cfg, {"cmd": _slow_command(1.0)})
    for _ in range(3):
        _ask(sctx, tmp_path)
    said = [e for e in sctx.record.events if e.node == "budget"]
    assert len(said) == 1
    assert said[0].level == "warn"
    assert "(command: no cost or tokens reported) are not counted by run_usd" in said[0].message
    assert "cmd" not in said[0].message.replace("command", ""), "a kind, never an agent id"


class CountingSpend:
    """A fake ``DaySpend``: a fixed figure, and how often it was asked."""

    def __init__(self, spent: Spend) -> None:
        self.figure = spent
        self.asked: list[tuple[date, str]] = []

    def spent(self, sctx: SeatContext, day: date, *, besides: str) -> Spend:
        self.asked.append((day, besides))
        return self.figure


def test_day_usd_reads_its_source_once_per_process_and_adds_this_run(tmp_path: Path) -> None:
    """The day's other runs are read once; this run's own turns are added on every check."""
    source = CountingSpend(Spend(reported_usd=1.0, estimated_usd=0.5, metered=2))
    cfg = budget_config([{"id": "cl", "kind": "claude"}], day_usd=2.0)

    def costly(request: TurnRequest) -> TurnResult:
        return TurnResult(TurnStatus.OK, text="ok", usage=Usage(cost_usd=0.5))

    sctx = seat_context(tmp_path / "home", cfg, {"cl": FakeAgent("cl", costly)}, day_spend=source)
    _ask(sctx, tmp_path)  # 1.5 before: asked
    with pytest.raises(Stop) as held:
        _ask(sctx, tmp_path)  # 1.5 + 0.5
    assert (
        held.value.reason == "budget: ~$2.00 ($0.50 est.) spent today against the $2.00 daily cap"
    )
    assert source.asked == [(date(2026, 11, 29), sctx.record.id)]


def test_check_budget_with_no_caps_reads_nothing(tmp_path: Path) -> None:
    """No [budget]: no source is asked, nothing is said."""
    source = CountingSpend(Spend())
    cfg = budget_config([{"id": "cmd", "kind": "command", "command": ["true"]}])
    sctx = seat_context(tmp_path / "home", cfg, {"cmd": _slow_command(9999.0)}, day_spend=source)
    _ask(sctx, tmp_path)
    check_budget(sctx)
    assert source.asked == []
    assert not [e for e in sctx.record.events if e.node == "budget"]


def test_a_command_seat_that_reports_its_cost_is_held_by_run_usd(tmp_path: Path) -> None:
    """A real command process printing ``MAGI-USAGE`` on stderr: its dollars count against
    run_usd like a CLI's, and its time no longer counts against run_minutes."""
    import sys

    script = (
        "import sys; print('done'); "
        'print(\'MAGI-USAGE: {"cost_usd": 0.3, "output_tokens": 7}\', file=sys.stderr)'
    )
    entry = {"id": "cmd", "kind": "command", "command": [sys.executable, "-c", script]}
    cfg = budget_config([entry], run_usd=0.5, run_minutes=1)
    sctx = seat_context(tmp_path / "home", cfg, {"cmd": build_agent(cfg.agents[0])})
    _ask(sctx, tmp_path)
    _ask(sctx, tmp_path)
    assert [t.usage.cost_usd for t in sctx.record.turns] == [0.3, 0.3]
    with pytest.raises(Stop) as held:
        _ask(sctx, tmp_path)
    assert held.value.status is RunStatus.HELD
    assert held.value.reason == "budget: this run has spent $0.60 of its $0.50 cap"
