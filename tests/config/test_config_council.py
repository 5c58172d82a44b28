"""The [council] table: panels, weights, personalities, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from config_helpers import load, write
from magi.errors import ConfigError
from magi.model.council import PERSONALITIES

AGENTS = """
[[agents]]
id = "opus"
kind = "claude"

[[agents]]
id = "codex"
kind = "codex"

[[agents]]
id = "oc"
kind = "opencode"
"""


def council(tmp_path: Path, text: str):
    write(tmp_path / "magi.toml", AGENTS + text)
    return load(tmp_path, tmp_path / "home").config.council


def error(tmp_path: Path, text: str) -> str:
    write(tmp_path / "magi.toml", AGENTS + text)
    with pytest.raises(ConfigError) as info:
        load(tmp_path, tmp_path / "home")
    return str(info.value)


def test_the_issue_example_loads(tmp_path):
    """The README's [council] example is a valid config."""
    c = council(
        tmp_path,
        """
[council]
panel = "default"
clerk = "opus"
[council.panels.default]
threshold = 0.5
rounds = 2
seats = [
  { agent = "opus", weight = 40, personality = "security" },
  { agent = "codex", weight = 30 },
  { agent = "oc", weight = 30, veto = true },
]
""",
    )
    panel = c.panels["default"]
    assert [s.weight for s in panel.seats] == [40, 30, 30]
    assert panel.seats[2].veto is True
    assert c.clerk == "opus"


def test_no_council_table_is_the_default(tmp_path):
    """Without [council] there are no panels: the roster sits with equal weights."""
    c = council(tmp_path, "")
    assert c.panels == {}
    assert c.panel == "default"


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ('seats = [{ agent = "opus", weight = 0 }, { agent = "codex" }]', "weight"),
        ('seats = [{ agent = "opus", weight = 101 }, { agent = "codex" }]', "weight"),
        ('seats = [{ agent = "opus" }]', "seats"),
        ('threshold = 0\nseats = [{ agent = "opus" }, { agent = "codex" }]', "threshold"),
        ('rounds = 3\nseats = [{ agent = "opus" }, { agent = "codex" }]', "rounds"),
        ('seats = [{ agent = "opus" }, { agent = "nobody" }]', "seats[1].agent"),
        ('seats = [{ agent = "opus", personality = "poet" }, { agent = "codex" }]', "personality"),
        ('seats = [{ agent = "opus", wieght = 3 }, { agent = "codex" }]', "wieght"),
    ],
)
def test_bad_panels_are_errors_naming_the_key(tmp_path, table, key):
    """Each mistake in a panel is an error that names the key it is about."""
    message = error(tmp_path, f"[council.panels.default]\n{table}\n")
    assert key in message
    assert "council" in message


def test_ten_seats_are_too_many(tmp_path):
    """A panel has at most nine seats."""
    seats = ", ".join('{ agent = "opus" }' for _ in range(10))
    assert "seats" in error(tmp_path, f"[council.panels.default]\nseats = [{seats}]\n")


def test_the_chosen_panel_must_exist(tmp_path):
    """council.panel naming no declared panel is an error naming council.panel."""
    message = error(
        tmp_path,
        '[council]\npanel = "big"\n[council.panels.small]\n'
        'seats = [{ agent = "opus" }, { agent = "codex" }]\n',
    )
    assert "council.panel" in message


def test_the_catalogue_ships_six_personalities_and_can_be_extended(tmp_path):
    """The shipped catalogue holds the six perspectives; config may add or replace one."""
    assert set(PERSONALITIES) == {
        "security",
        "reliability",
        "maintainability",
        "accessibility",
        "product",
        "skeptic",
    }
    c = council(
        tmp_path,
        '[council.personalities]\nlawyer = "You read as counsel."\n'
        'security = "Only threats."\n'
        "[council.panels.default]\n"
        'seats = [{ agent = "opus", personality = "lawyer" }, { agent = "codex" }]\n',
    )
    assert c.catalogue()["lawyer"] == "You read as counsel."
    assert c.catalogue()["security"] == "Only threats."


def test_every_shipped_personality_has_a_japanese_text():
    """The Japanese catalogue covers the same six names."""
    from magi.model.council import PERSONALITIES_JA

    assert set(PERSONALITIES_JA) == set(PERSONALITIES)


def test_review_quorum_defaults_to_three_readable_votes_at_high_and_critical(tmp_path):
    """Seed 004's 3:0: high and critical need three readable votes unless the config says."""
    q = council(tmp_path, "").review_quorum
    assert [q.of(t) for t in ("low", "medium", "high", "critical")] == [2, 2, 3, 3]
    q = council(tmp_path, "[council]\nreview_quorum = { high = 2, critical = 4 }\n").review_quorum
    assert (q.of("high"), q.of("critical"), q.of("low")) == (2, 4, 2)


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ("review_quorum = { high = 1 }", "review_quorum.high"),
        ("review_quorum = { critical = 10 }", "review_quorum.critical"),
        ("review_quorum = { extreme = 3 }", "review_quorum.extreme"),
        ("review_quorum = 3", "review_quorum"),
    ],
)
def test_a_bad_review_quorum_is_an_error_naming_the_key(tmp_path, table, key):
    """Below two, above nine, an unknown tier or a bare number: refused, naming the key."""
    assert key in error(tmp_path, f"[council]\n{table}\n")
