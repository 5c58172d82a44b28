"""magi council as a person types it: real command agents, exit codes by verdict, --json, show."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from magi.testing.cli import Result, invoke

MODULE = [sys.executable, "-m", "magi.demo.council_scripted"]


def write_config(where: Path, personas: list[str], *, extra: str = "") -> None:
    lines = []
    for i, persona in enumerate([*personas, "clerk"]):
        name = "clerk" if persona == "clerk" and i == len(personas) else f"a{i + 1}"
        lines += [
            "[[agents]]",
            f'id = "{name}"',
            'kind = "command"',
            f"command = {json.dumps([*MODULE, persona])}",
            "",
        ]
    seats = ", ".join(f'{{ agent = "a{i + 1}" }}' for i in range(len(personas)))
    lines += [
        "[graph]",
        "sessions = false",
        "",
        "[council]",
        'clerk = "clerk"',
        extra,
        "",
        "[council.panels.default]",
        "rounds = 2",
        f"seats = [{seats}]",
    ]
    (where / "magi.toml").write_text("\n".join(lines) + "\n")


def council(*args: str) -> Result:
    # A scratch directory is no repository, so the config is named rather than discovered.
    return invoke(["council", "--config", "magi.toml", *args])


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MAGI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MAGI_CONFIG_DIR", str(tmp_path / "no-user-config"))
    return tmp_path


def test_a_passed_council_exits_0_and_prints_the_matrix(here):
    """A split that a debate resolves: exit 0, the matrix with its minority."""
    write_config(here, ["says:TOML", "switch:YAML:TOML", "says:JSON"])
    r = council("Which config format?")
    assert r.exit_code == 0, r.output
    assert "passed — TOML" in r.stdout
    assert "Minority opinion" in r.stdout
    assert "sage-3: JSON" in r.stdout


def test_json_output_and_show(here):
    """--json prints the record's matrix; magi show renders the same council later."""
    write_config(here, ["says:A", "says:A", "says:B"])
    r = council("--json", "A or B?")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["kind"] == "council"
    assert out["verdict"] == "passed"
    again = invoke(["show", "--json", out["id"]])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["verdict"] == "passed"


def test_show_markdown_prints_the_comment_github_gets(here):
    """`magi show --markdown` on a council: the matrix comment as posted, not the table."""
    write_config(here, ["says:A", "says:A", "says:B"])
    out = json.loads(council("--json", "A or B?").stdout)
    shown = invoke(["show", "--markdown", out["id"]])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("### magi council: passed")
    assert "| Seat | Agent | Weight |" in shown.stdout
    assert "`<magi home>/runs/" in shown.stdout  # where the record is, scrubbed
    assert str(here / "home") not in shown.stdout  # a local path is not posted


def test_no_consensus_exits_13(here):
    """Three seats that never move: exit 13."""
    write_config(here, ["says:A", "says:B", "says:C"])
    r = council("A, B or C?")
    assert r.exit_code == 13, r.output
    assert "no consensus" in r.stdout


def test_a_rejected_review_exits_1(here):
    """Review mode with two rejections of three: exit 1."""
    write_config(here, ["reject", "reject", "approve"])
    diff = here / "pr.diff"
    diff.write_text("-a\n+b\n")
    r = council("--mode", "review", "--evidence", str(diff), "Merge this?")
    assert r.exit_code == 1, r.output
    assert "rejected" in r.stdout


def review(here: Path, *args: str) -> Result:
    diff = here / "pr.diff"
    diff.write_text("-a\n+b\n")
    return council("--mode", "review", "--evidence", str(diff), *args, "Merge this?")


def test_two_approvals_and_an_unreadable_third_do_not_pass_a_high_risk_review(here):
    """Seed 004's 3:0: 2:0 beside an unreadable answer is inconclusive at high risk, exit 13."""
    write_config(here, ["approve", "approve", "garbage"])
    r = review(here, "--risk", "high")
    assert r.exit_code == 13, r.output
    assert "no quorum" in r.stdout


def test_a_rejection_in_seed_004s_format_rejects(here):
    """`**VOTE:** REJECT` in seed 004's plain block is a rejection, not an abstention: exit 1."""
    write_config(here, ["approve", "approve", "plain:REJECT"])
    r = review(here, "--risk", "high", "--json")
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    assert out["verdict"] == "rejected"
    assert out["review"]["counted"] == ["sage-1", "sage-2", "sage-3"]


def test_a_conditional_review_exits_14_and_lists_its_conditions(here):
    """CONDITIONAL: approved with conditions, not passing: exit 14, the conditions shown."""
    write_config(here, ["approve", "conditional:add a test for empty input", "approve"])
    r = review(here)
    assert r.exit_code == 14, r.output
    assert "approved with conditions" in r.stdout
    assert "add a test for empty input (sage-2)" in r.stdout
    assert "CONDITIONAL" in r.stdout


def test_a_config_that_cannot_seat_exits_3(here):
    """Two of three CLIs missing: no council, exit 3, naming what is missing."""
    lines = ["[[agents]]", 'id = "a1"', 'kind = "command"', f"command = {json.dumps(MODULE)}", ""]
    for i in (2, 3):
        lines += [
            "[[agents]]",
            f'id = "a{i}"',
            'kind = "command"',
            f'command = ["no-such-cli-{i}"]',
            "",
        ]
    (here / "magi.toml").write_text("\n".join(lines))
    r = council("anything?")
    assert r.exit_code == 3, r.output
    assert "no-such-cli-2" in r.stdout


def test_an_unknown_panel_is_a_config_error(here):
    """--panel naming nothing declared exits 3 naming the key."""
    write_config(here, ["says:A", "says:A"])
    r = council("--panel", "nope", "q?")
    assert r.exit_code == 3
    assert "council.panels" in r.stderr


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["council"], "no question"),
        (["council", "--mode", "vote", "q"], "--mode"),
        (["council", "--risk", "huge", "q"], "--risk"),
    ],
)
def test_usage_errors(here, args, why):
    """A command line that cannot mean anything exits 2 and says why."""
    write_config(here, ["says:A", "says:A"])
    r = invoke(args)
    assert r.exit_code == 2
    assert why in r.stderr


def test_demo_council_runs_offline(here):
    """magi demo council: a split, a debate round, a passed position with a minority."""
    # Wide: the matrix must not wrap where the tmp path (longer under xdist) would.
    r = invoke(["demo", "council", "--dir", str(here / "demo")], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    assert "passed — TOML" in r.stdout
    assert "switch: YAML → TOML" in r.stdout
    assert "sage-3: JSON" in r.stdout


def test_list_and_bare_magi_show_a_council(here):
    """magi list names the council's verdict; bare magi prints its matrix."""
    write_config(here, ["says:A", "says:A", "says:B"])
    assert council("A or B?").exit_code == 0
    listed = invoke(["list", "--json"])
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.stdout)
    assert row["winner"] == "passed"
    bare = invoke([])
    assert bare.exit_code == 0, bare.output
    assert "magi council: passed" in bare.stdout
