"""The commented starter config that ``magi init`` writes, made for the CLIs found on PATH.

The commented-out keys and their defaults are read from the schema (``model.config``) rather
than typed into the template, so the starter cannot drift from what magi actually accepts.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2
from pydantic import BaseModel

from magi.config.roster import default_agents
from magi.model.config import BUILTIN_KINDS, Config

TEMPLATE = "config.toml.j2"
# Tables the template writes by hand: the roster and the roles need the found ids, and
# [vars] is the user's own.
_HAND_WRITTEN = frozenset({"agents", "roles", "vars"})
_NOTE_COLUMN = 27  # comments line up, as in the README's examples


@dataclass(frozen=True)
class _Key:
    line: str


@dataclass(frozen=True)
class _Section:
    name: str
    doc: str
    keys: list[_Key]


def starter_config(found_kinds: Sequence[str], known_kinds: Sequence[str] = BUILTIN_KINDS) -> str:
    """The text of a starter config seating ``found_kinds``; it loads and validates as is."""
    agents = default_agents(found_kinds)
    ids = [a.id for a in agents] or ["opus", "sonnet"]
    # autoescape stays off: this renders TOML for a person to edit, not HTML.
    env = jinja2.Environment(
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701
    )
    source = resources.files("magi").joinpath("templates", TEMPLATE).read_text("utf-8")
    return env.from_string(source).render(
        agents=agents,
        kinds=[k for k in known_kinds],
        example_ids=toml_value(ids),
        sections=_sections(),
    )


def _sections() -> list[_Section]:
    sections = []
    for name, info in Config.model_fields.items():
        model = info.annotation
        if name in _HAND_WRITTEN or not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue
        doc = (model.__doc__ or "").strip().splitlines()
        # Tables of tables ([council.panels]) have no one-line default: the README shows them.
        keys = [
            _key(key, field)
            for key, field in model.model_fields.items()
            if not isinstance(field.get_default(call_default_factory=True), dict)
        ]
        # Docstrings quote code RST-style (``sh -c``); a TOML comment wants plain backticks.
        sections.append(_Section(name, doc[0].replace("``", "`") if doc else "", keys))
    return sections


def _key(name: str, info: Any) -> _Key:
    default = info.get_default(call_default_factory=True)
    value = _placeholder(info.annotation) if default is None else toml_value(default)
    note = info.description or ""
    choices = _choices(info.annotation)
    if choices:
        note = " | ".join(choices) + (f"; {note}" if note else "")
    line = f"{name} = {value}"
    if note:
        line = f"{line.ljust(_NOTE_COLUMN - 2)} # {note}"
    return _Key(line)


def _choices(annotation: Any) -> list[str]:
    if typing.get_origin(annotation) is typing.Literal:
        return [str(a) for a in typing.get_args(annotation)]
    return []


def _placeholder(annotation: Any) -> str:
    """What an unset optional key looks like in a comment: ``<int>``, ``<string>``, ..."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = args[0] if args else annotation
    names = {int: "int", float: "number", str: "string", bool: "bool"}
    return f"<{names.get(annotation, 'value')}>"


def toml_value(value: object) -> str:
    """A Python value as a TOML literal (strings, numbers, booleans, arrays of those, and a
    small model as an inline table)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        # JSON string escapes are a subset of TOML basic-string escapes.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, BaseModel):  # a small table of its own: an inline table
        items = value.model_dump().items()
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in items) + " }"
    raise TypeError(f"no TOML literal for {type(value).__name__}")
