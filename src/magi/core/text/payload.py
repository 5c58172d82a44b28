"""The JSON payload of an agent's reply: fenced blocks found line by line, objects strictly.

Fences follow CommonMark's rules, scanned line by line on purpose: a reply can be
megabytes, and a regex over the whole text that pairs fences can backtrack catastrophically.
Every fence is honoured whatever its info string, so a ```json line (or a marker line)
quoted inside a ```markdown block stays quoted text. Tilde fences are not recognised;
agents asked for backticks use backticks.

JSON is read strictly: duplicate keys and NaN/Infinity make a block not well-formed, since
either would let magi pick one of two readings of the same answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from magi.errors import AnswerError

__all__ = ["Block", "blocks", "find_object", "load_object", "outside", "split_lines"]

_FENCE = "```"


@dataclass(frozen=True)
class Block:
    """One fenced block; ``closed`` is False when the reply ends inside it."""

    line: int  # 1-based line of the opening fence
    info: str  # the info string after the backticks: "json", "python", ""
    body: str
    closed: bool


def split_lines(text: str) -> list[str]:
    # Not str.splitlines(): JSON strings may hold U+2028, U+0085 and friends raw, and those
    # are not line breaks to a JSON parser; cutting there would change the answer.
    return [line.removesuffix("\r") for line in text.split("\n")]


def _opening(line: str) -> tuple[int, str] | None:
    s = line.strip()
    if not s.startswith(_FENCE):
        return None
    ticks = len(s) - len(s.lstrip("`"))
    info = s[ticks:].strip()
    # CommonMark: a backtick fence's info string holds no backtick (```x``` is inline code).
    return None if "`" in info else (ticks, info)


def _closes(line: str, ticks: int) -> bool:
    # A closing fence is backticks only, at least as many as opened it.
    s = line.strip()
    return len(s) >= ticks and not s.lstrip("`")


def blocks(lines: list[str]) -> list[Block]:
    """Every fenced block, in order."""
    out: list[Block] = []
    i = 0
    while i < len(lines):
        opened = _opening(lines[i])
        if opened is None:
            i += 1
            continue
        ticks, info = opened
        j = i + 1
        while j < len(lines) and not _closes(lines[j], ticks):
            j += 1
        out.append(Block(i + 1, info, "\n".join(lines[i + 1 : j]), closed=j < len(lines)))
        i = j + 1
    return out


def outside(lines: list[str]) -> Iterator[tuple[int, str]]:
    """``(index, line)`` for every line that is neither a fence nor inside a block."""
    ticks: int | None = None
    for i, line in enumerate(lines):
        if ticks is not None:
            if _closes(line, ticks):
                ticks = None
            continue
        opened = _opening(line)
        if opened is not None:
            ticks = opened[0]
        else:
            yield i, line


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key[:40]!r}")
        obj[key] = value
    return obj


_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


def load_object(body: str, what: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object in ``body``, or ``None`` and why it is not one."""
    try:
        obj = json.loads(body, parse_constant=_no_constants, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        return None, f"{what} is not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
    except ValueError as exc:
        return None, f"{what} is not valid JSON: {exc}"
    except RecursionError:
        return None, f"{what} is nested too deeply"
    if not isinstance(obj, dict):
        return None, f"{what} holds {_KINDS.get(type(obj), 'null')}, not an object"
    return obj, ""


def find_object(text: str) -> dict[str, Any]:
    """The answer object in ``text``: the last well-formed ```json block, or a bare reply."""
    found = blocks(split_lines(text))
    candidates = [b for b in found if b.info.lower() == "json"]
    if not candidates:
        bare = text.strip()
        if bare.startswith("{"):
            obj, problem = load_object(bare, "the reply (no ```json block)")
            if obj is not None:
                return obj
            raise AnswerError(problem)
        hint = " (a ``` block without the json tag does not count)" if found else ""
        raise AnswerError(f"no ```json block in the reply{hint}")
    last_problem = ""
    for block in reversed(candidates):
        if not block.closed:
            problem = f"the ```json block opened on line {block.line} is never closed"
        else:
            obj, problem = load_object(block.body, "the ```json block")
            if obj is not None:
                return obj
        last_problem = last_problem or problem
    raise AnswerError(last_problem)
