"""Caps on relayed text, and control characters stripped from agent output."""

from __future__ import annotations

import pytest

from magi.core.text.bounds import cap, cap_bytes, check_task, decode_task
from magi.core.text.sanitize import strip_controls
from magi.errors import UsageError


def test_a_long_text_is_cut_to_the_limit_and_the_cut_is_marked() -> None:
    """3 MB in, at most the limit out, with how much was cut."""
    text = "x" * 3_000_000
    out = cap(text, 8000)
    assert len(out) <= 8000
    assert out.startswith("xxx")
    assert "characters cut by magi" in out
    n = int(out.rsplit("[... ", 1)[1].split()[0])
    assert n + out.count("x") == len(text)


def test_a_text_within_the_limit_is_unchanged() -> None:
    """No marker where nothing was cut."""
    assert cap("short", 10) == "short"


def test_tail_keeps_the_end() -> None:
    """A summary keeps its last words (an implementer concludes at the end)."""
    out = cap("a" * 100 + "END", 60, keep="tail")
    assert out.endswith("END")
    assert len(out) <= 60


def test_cap_bytes_never_splits_a_character() -> None:
    """A cut in the middle of a multi-byte character drops that character whole."""
    out, over = cap_bytes("é" * 10, 5)
    assert out == "éé"
    assert over == 15


def test_nul_escape_and_c1_controls_go_newlines_and_tabs_stay() -> None:
    """What a hostile agent prints to cut a prompt or repaint a terminal is removed."""
    assert strip_controls("a\x00b\x1b[31mc\x9bd\te\nf\r\n") == "ab[31mcd\te\nf\r\n"


def test_a_task_file_in_latin1_is_a_usage_error_naming_the_byte() -> None:
    """Invalid UTF-8 is a clear error with where it is, never a traceback."""
    with pytest.raises(UsageError) as err:
        decode_task("line one\ncaf\xe9\n".encode("latin-1"), "task.md")
    assert "task.md is not UTF-8" in err.value.message
    assert "line 2" in err.value.message


def test_a_task_over_the_cap_is_refused_and_says_how_to_raise_it() -> None:
    """64 KB and one byte is too much; exactly the cap is fine."""
    check_task("x" * 65_536, 65_536)
    with pytest.raises(UsageError, match="--task-max-bytes"):
        check_task("x" * 65_537, 65_536)
