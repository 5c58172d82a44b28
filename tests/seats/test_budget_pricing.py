"""Tokens into dollars: each adapter's tokens by model, the price table, and its config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magi.agents.antigravity import AntigravityAdapter
from magi.agents.base import TurnRequest
from magi.agents.codex import CodexAdapter
from magi.agents.command import CommandAdapter
from magi.agents.gemini import GeminiAdapter
from magi.config.load import load_config
from magi.core.figures.pricing import (
    DEFAULT_PRICES,
    Cost,
    price_table,
    turn_cost,
    unmetered_why,
    usd,
)
from magi.errors import ConfigError
from magi.model.config import AgentConfig, Price
from magi.model.run import ModelTokens, Usage

REQUEST = TurnRequest(seat="impl-A", prompt="p", cwd=Path("/tmp"), allow_write=True, timeout=60)


def _agent(kind: str, model: str | None = None) -> AgentConfig:
    command = ["true"] if kind == "command" else None
    return AgentConfig(id="a", kind=kind, model=model, command=command)


def _lines(*events: object) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


# `codex exec --json`, as README §2(d) shows it (the SDK's types of the same version).
CODEX_OUT = _lines(
    {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "ok"}},
    {
        "type": "turn.completed",
        "usage": {
            "input_tokens": 1_000_000,
            "cached_input_tokens": 400_000,
            "cache_write_input_tokens": 0,
            "output_tokens": 100_000,
            "reasoning_output_tokens": 60_000,
        },
    },
)


def test_codex_tokens_are_split_for_pricing_under_the_configured_model() -> None:
    """Codex counts cached input inside input and reasoning inside output; its events name
    no model, so the agent's `model` is the one priced."""
    usage = CodexAdapter(_agent("codex", "gpt-5-codex")).parse(CODEX_OUT, "", 0, REQUEST).usage
    assert (usage.input_tokens, usage.cached_tokens) == (1_000_000, 400_000), "as reported"
    assert usage.models == {
        "gpt-5-codex": ModelTokens(input=600_000, cached=400_000, output=100_000)
    }
    # 0.6 * 1.25 + 0.4 * 0.125 + 0.1 * 10
    assert turn_cost(usage, DEFAULT_PRICES) == Cost(pytest.approx(1.8), estimated=True)


def test_a_codex_agent_without_a_model_has_tokens_but_no_figure() -> None:
    usage = CodexAdapter(_agent("codex")).parse(CODEX_OUT, "", 0, REQUEST).usage
    assert usage.models == {}
    assert turn_cost(usage, DEFAULT_PRICES) is None
    assert unmetered_why(usage, DEFAULT_PRICES) == (
        "tokens, but no model named (set the agent's `model`)"
    )


def _gemini(models: dict[str, dict[str, int]]) -> str:
    stats = {"models": {m: {"api": {"totalRequests": 1}, "tokens": t} for m, t in models.items()}}
    return json.dumps({"session_id": "s", "response": "ok", "stats": stats}, indent=2)


def test_gemini_prices_each_model_it_names_and_pays_thinking_as_output() -> None:
    """One turn, two models (the stats are per model): each at its own price."""
    pro = {"input": 600_000, "prompt": 1_000_000, "candidates": 50_000, "cached": 400_000}
    lite = {"input": 1_000_000, "prompt": 1_000_000, "candidates": 0, "cached": 0}
    out = _gemini({"gemini-2.5-pro": {**pro, "thoughts": 50_000}, "gemini-2.5-flash-lite": lite})
    usage = GeminiAdapter(_agent("gemini")).parse(out, "", 0, REQUEST).usage
    assert usage.output_tokens == 50_000, "the answer's tokens, as gemini reports them"
    assert usage.models["gemini-2.5-pro"] == ModelTokens(
        input=600_000, cached=400_000, output=100_000
    )
    # pro: 0.6 * 1.25 + 0.4 * 0.31 + 0.1 * 10 = 1.874; lite: 1.0 * 0.10
    cost = turn_cost(usage, DEFAULT_PRICES)
    assert cost == Cost(pytest.approx(1.974), estimated=True)


def test_one_model_without_a_price_leaves_the_whole_turn_unpriced() -> None:
    """No model borrows another's price: the turn's time goes to run_minutes instead."""
    out = _gemini({"gemini-2.5-pro": {"input": 1}, "gemini-9-ultra": {"input": 1}})
    usage = GeminiAdapter(_agent("gemini")).parse(out, "", 0, REQUEST).usage
    assert turn_cost(usage, DEFAULT_PRICES) is None
    assert unmetered_why(usage, DEFAULT_PRICES) == "no price for model 'gemini-9-ultra'"


def test_agy_tokens_are_priced_at_the_configured_model() -> None:
    out = json.dumps({"response": "ok", "usage": {"input_tokens": 10, "output_tokens": 2}})
    usage = AntigravityAdapter(_agent("antigravity", "gemini-3-pro-preview")).parse(
        out, "", 0, REQUEST
    )
    assert usage.usage.models == {"gemini-3-pro-preview": ModelTokens(input=10, output=2)}


def test_a_command_reports_nothing_to_price() -> None:
    parsed = CommandAdapter(_agent("command")).parse("done\n", "", 0, REQUEST)
    assert parsed.usage == Usage()
    assert unmetered_why(parsed.usage, DEFAULT_PRICES) == "no cost or tokens reported"


def test_a_reported_cost_is_never_replaced_by_an_estimate() -> None:
    usage = Usage(cost_usd=0.01, models={"gpt-5": ModelTokens(input=10**9)})
    assert turn_cost(usage, DEFAULT_PRICES) == Cost(0.01, estimated=False)


def test_usage_sums_tokens_per_model() -> None:
    a = Usage(models={"m": ModelTokens(input=1, output=2)})
    b = Usage(models={"m": ModelTokens(cached=3), "n": ModelTokens(input=4)})
    assert (a + b).models == {
        "m": ModelTokens(input=1, cached=3, output=2),
        "n": ModelTokens(input=4),
    }


def test_the_config_price_beats_the_default_and_cached_defaults_to_input() -> None:
    table = price_table({"gpt-5-codex": Price(input=2.0, output=4.0)})
    usage = Usage(models={"gpt-5-codex": ModelTokens(input=500_000, cached=500_000)})
    assert turn_cost(usage, table) == Cost(2.0, estimated=True)
    assert DEFAULT_PRICES["gpt-5-codex"].input == 1.25, "the defaults are left alone"


@pytest.mark.parametrize(
    ("total", "estimated", "shown"),
    [(0.42, 0.0, "$0.42"), (0.42, 0.42, "~$0.42 est."), (0.42, 0.1, "~$0.42 ($0.10 est.)")],
)
def test_an_estimate_is_always_marked(total: float, estimated: float, shown: str) -> None:
    assert usd(total, estimated) == shown


def test_prices_load_from_toml_and_merge_per_model(tmp_path: Path) -> None:
    path = tmp_path / "magi.toml"
    path.write_text(
        '[budget]\nrun_minutes = 90\n\n[budget.prices."my-model"]\ninput = 1.5\noutput = 6\n'
    )
    budget = load_config(None, config_path=path).config.budget
    assert budget.run_minutes == 90
    assert budget.prices == {"my-model": Price(input=1.5, output=6.0)}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[budget.prices."m"]\ninput = 1\noutput = 1\ncahced = 1\n', "cahced"),
        ('[budget.prices."m"]\ninput = -1\noutput = 1\n', "input"),
        ('[budget.prices."m"]\ninput = 1\n', "budget.prices.m.output: required key is missing"),
        ('[budget.prices." m"]\ninput = 1\noutput = 1\n', "prices"),
        ("[budget]\nrun_minutes = 0\n", "run_minutes"),
    ],
)
def test_a_bad_price_or_cap_is_an_error_naming_the_key(
    tmp_path: Path, text: str, where: str
) -> None:
    path = tmp_path / "magi.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(None, config_path=path)
    assert where in str(err.value)
    if "missing" not in where:  # a key set in a file is named with its file
        assert str(path) in str(err.value)
