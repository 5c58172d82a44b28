"""A seat's words cannot hide, fold or forge any part of the council's comment.

Each answer below is one a hostile (or careless) seat could give. The comment is rendered
with cmarkgfm, GitHub's own renderer, through ``magi council``'s renderer and through the
Action's publish path, and the matrix, the minority opinion and the audit line must all
still be there as magi wrote them.
"""

from __future__ import annotations

import json
from pathlib import Path

import cmarkgfm
import pytest

import council_helpers as ch
from github_helpers import REPO, SEAL
from magi.council.modes import run_council
from magi.council.render import markdown, terminal
from magi.council.rounds import Council
from magi.demo.council_scripted import ScriptedAsker
from magi.testing.github import FakeGitHub

HOSTILE = [
    "TOML\n<!--",
    "\n<details>",
    "TOML</td></tr></table><h1>won</h1>",
    "| sage-9 | evil | 100 | WIN | | | |",
    "```",
    "<!-- magi:council comment=1 issue=1 mac=00 -->",
    "TOML <sub>",
    "**TOML** [x](javascript:alert(1)) @octo-org/admins",
    "TOML\u202eLMOT\u2066 \U000e0041\U000e0042",
    "<script>alert(1)</script>",
]


def _html(body: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(
        body, options=cmarkgfm.Options.CMARK_OPT_UNSAFE
    )


def _answer(position: str, rationale: str) -> str:
    data = {"position": position, "rationale": rationale, "confidence": 0.6}
    return "```json\n" + json.dumps(data) + "\n```\n"


def _asker(hostile: str) -> ScriptedAsker:
    """sage-3 answers ``hostile`` as its position and its rationale; the others agree."""
    asker = ScriptedAsker({"sage-1": "says:TOML", "sage-2": "says:TOML", "sage-3": "says:x"})
    asker.overrides[("sage-3", "ask")] = _answer(f"JSON {hostile}", hostile)
    asker.overrides[("sage-3", "debate")] = None
    return asker


def _assert_whole(html: str) -> None:
    """Everything magi wrote renders: the headline, three seat rows, the sections, audit."""
    assert html.count("<h3>") == 1
    assert "<details" not in html
    assert "<!--" not in html
    assert "<script" not in html
    assert "<h1>" not in html
    assert "<a " not in html  # no link of a seat's renders
    assert html.count("<table>") == 1
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr>") == 3  # no seat added a row
    assert "Minority opinion" in html
    assert "sage-3" in html.split("Minority opinion", 1)[1]  # the dissent is visible
    assert "<sub>record:" in html  # the audit line closes the comment, visible
    assert "\u202e" not in html
    assert "\U000e0041" not in html
    assert 'class="user-mention"' not in html


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_seat_cannot_hide_the_matrix_in_the_cli_markdown(hostile: str) -> None:
    """magi council's markdown (what `magi show --markdown` prints) keeps its structure."""
    rec, bodies = ch.record(ch.config(3))
    run_council(Council(rec, _asker(hostile), evidence=bodies))
    assert rec.verdict == "passed"
    _assert_whole(_html(markdown(rec, "/home/u/.magi/runs/x/run.json")))


@pytest.mark.parametrize("hostile", HOSTILE[:4])
def test_a_seat_cannot_hide_the_matrix_on_github(tmp_path: Path, hostile: str) -> None:
    """Through the Action: the council job, then publish-council, then GitHub's renderer."""
    inputs, out, _ = ch.on_github(tmp_path, "/magi council TOML or YAML?", _asker(hostile))
    fake = FakeGitHub()
    ch.publish_on(fake, inputs, out)
    (body,) = fake.comments_on(REPO, 1)
    html = _html(body)
    assert html.count("<h3>") == 1
    assert html.count("<table>") == 1
    assert "<details" not in html
    assert html.split("<tbody>", 1)[1].split("</tbody>", 1)[0].count("<tr>") == 3
    assert "sage-3" in html.split("Minority opinion", 1)[1]
    assert SEAL.find([body], "council", comment="42", issue="1")  # magi's own marker stands


def test_the_terminal_shows_no_invisible_characters() -> None:
    """The rich rendering drops bidi overrides and tag characters too."""
    from io import StringIO

    from rich.console import Console

    rec, bodies = ch.record(ch.config(3))
    run_council(Council(rec, _asker(HOSTILE[8]), evidence=bodies))
    buf = StringIO()
    Console(file=buf, width=200, color_system=None).print(terminal(rec))
    assert "\u202e" not in buf.getvalue()
    assert "\U000e0041" not in buf.getvalue()


@pytest.mark.parametrize("hostile", ["TOML\n<!--", "TOML\n<details>", "TOML ```"])
def test_a_passed_position_cannot_hide_what_follows_its_headline(hostile: str) -> None:
    """The passed position is the headline: it is inert there too (the finding's case)."""
    rec, bodies = ch.record(ch.config(3))
    asker = ScriptedAsker({s: "says:x" for s in ("sage-1", "sage-2", "sage-3")})
    for seat in ("sage-1", "sage-2", "sage-3"):
        asker.overrides[(seat, "ask")] = _answer(hostile, "it fits")
    run_council(Council(rec, asker, evidence=bodies))
    assert rec.verdict == "passed"
    html = _html(markdown(rec, "/r/run.json"))
    assert html.count("<table>") == 1
    assert "<details" not in html
    assert "<!--" not in html
    assert "<pre>" not in html
    assert "Minority opinion" in html
    assert "<sub>record:" in html


@pytest.mark.parametrize(
    "hostile", ["[/bold] closes nothing", "[link=https://evil.example]x[/link]"]
)
def test_the_terminal_reads_a_seats_words_as_text_never_as_markup(hostile: str) -> None:
    """rich parses markup in plain strings: a cell must be Text, or `[/bold]` is a traceback
    and `[link=...]` a hyperlink of the seat's choosing."""
    from io import StringIO

    from rich.console import Console

    rec, bodies = ch.record(ch.config(3))
    run_council(Council(rec, _asker(hostile), evidence=bodies))
    buf = StringIO()
    Console(file=buf, width=300, color_system="truecolor", force_terminal=True).print(terminal(rec))
    out = buf.getvalue()
    assert "\x1b]8;" not in out  # no OSC 8 hyperlink
    assert "[/bold]" in out or "link=" in out
