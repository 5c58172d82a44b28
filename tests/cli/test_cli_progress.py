"""The live progress: a quiet seat's latest CLI line is shown once, on an injected clock."""

from __future__ import annotations

import io

from rich.console import Console

from magi.cli.progress import QuietLines, TerminalReporter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def reporter(clock: Clock) -> tuple[TerminalReporter, io.StringIO]:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=200)
    return TerminalReporter(console, clock=clock, quiet_after=5, ticker=False), buf


def test_a_quiet_seat_shows_its_latest_line_once() -> None:
    clock = Clock()
    r, buf = reporter(clock)
    r.seat("impl-A", "asked")
    r.output("impl-A", "Reconnecting... 2/5", "codex")
    r.output("impl-A", "Reconnecting... waiting for network", "codex")
    clock.now = 4.9
    r.tick()
    assert "Reconnecting" not in buf.getvalue()
    clock.now = 5.0
    r.tick()
    r.tick()
    shown = [ln for ln in buf.getvalue().splitlines() if "Reconnecting" in ln]
    assert shown == ["00:05   impl-A (codex): Reconnecting... waiting for network"]


def test_a_new_line_is_shown_after_the_next_quiet_spell() -> None:
    clock = Clock()
    lines = QuietLines(5, clock)
    lines.heard("impl-A", "one")
    clock.now = 6
    assert lines.due() == [("impl-A", "", "one")]
    lines.heard("impl-A", "two")
    clock.now = 8
    assert lines.due() == []
    clock.now = 11
    assert lines.due() == [("impl-A", "", "two")]


def test_a_seat_that_answered_shows_nothing_more() -> None:
    clock = Clock()
    r, buf = reporter(clock)
    r.seat("judge-1", "asked")
    r.output("judge-1", "thinking", "claude")
    r.seat("judge-1", "ok")
    r.output("judge-1", "late line after the turn", "claude")
    clock.now = 60
    r.tick()
    assert "thinking" not in buf.getvalue()
    assert "late line" not in buf.getvalue()


def test_output_is_printed_as_text_never_as_markup() -> None:
    clock = Clock()
    r, buf = reporter(clock)
    r.seat("impl-B", "asked")
    r.output("impl-B", "[bold red]not markup[/]")
    clock.now = 10
    r.tick()
    assert "[bold red]not markup[/]" in buf.getvalue()
