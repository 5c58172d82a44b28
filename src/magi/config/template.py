"""Config templating: strip TOML comments, then render the raw text with sandboxed Jinja2.

A config file is a template first and TOML second: the whole text is rendered, and only the
result is parsed. Two consequences follow.

The single-quote trap. Rendering happens before TOML unescaping, so a template expression
inside a TOML basic string must use single quotes::

    cache = "{{ env.MAGI_CACHE | default('/tmp') }}"     # right
    cache = "{{ env.MAGI_CACHE | default("/tmp") }}"     # wrong: the TOML string ends early

Comments are not templates. ``#`` comments are removed (by a scanner that knows TOML's four
string forms, so a ``#`` inside a string stays) before Jinja sees the text, so a comment may
quote ``{{ ... }}`` or ``{% ... %}`` freely. Each comment is cut up to, not including, its
line break, so every line keeps its number and errors point at the line the author wrote.

Jinja runs in its sandbox with ``StrictUndefined``: a config file is not code, and a variable
nobody defined is a mistake to report rather than an empty string to run with.
"""

from __future__ import annotations

import platform
import socket
import sys
import traceback
from collections.abc import Mapping
from typing import Any

import jinja2
from jinja2 import ChainableUndefined, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

_MISSING = object()


class TemplateFailure(Exception):
    """A template could not be compiled or rendered; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def strip_comments(text: str) -> str:
    """Remove TOML ``#`` comments, keeping strings and every line break intact."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
        elif c in "\"'":
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    """Index just past the TOML string opening at ``start`` (basic or literal, 1 or 3 quotes)."""
    quote = text[start]
    escapes = quote == '"'  # literal strings ('...') have no escapes at all
    n = len(text)
    if text.startswith(quote * 3, start):
        i = start + 3
        while i < n:
            if escapes and text[i] == "\\":
                i += 2
            elif text.startswith(quote * 3, i):
                # TOML lets one or two quotes sit right before the closing delimiter.
                end = i + 3
                while end < n and end < i + 5 and text[end] == quote:
                    end += 1
                return end
            else:
                i += 1
        return n
    i = start + 1
    while i < n:
        ch = text[i]
        if escapes and ch == "\\":
            i += 2
        elif ch == quote:
            return i + 1
        elif ch in "\r\n":
            # Unterminated single-line string: stop here so tomllib reports this very line.
            return i
        else:
            i += 1
    return n


def _default(value: Any, /, default_value: Any = "", boolean: bool = False, **kw: Any) -> Any:
    """Jinja's ``default`` filter, also accepting Tera's spelling ``default(value='/tmp')``.

    The documented examples (and configs written for teravars) use the Tera keyword, which
    Jinja's own filter would reject because its first parameter is also named ``value``.
    """
    fallback = kw.pop("value", _MISSING)
    if kw:
        raise TypeError(f"default() got unexpected arguments: {', '.join(kw)}")
    if fallback is not _MISSING:
        default_value = fallback
    if isinstance(value, jinja2.Undefined) or (boolean and not value):
        return default_value
    return value


def _environment() -> SandboxedEnvironment:
    # autoescape stays off: the output is TOML, not HTML, and escaping would corrupt it.
    env = SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters["default"] = _default
    env.filters["d"] = _default
    return env


_ENV = _environment()


class _Placeholder(ChainableUndefined):
    """An unknown ``vars.*`` during the first pass; renders as ``0`` to keep the TOML valid.

    ``0`` parses wherever a value, a key or a piece of a string may stand, so the first pass
    can still read ``[vars]`` from a file whose other tables use ``{{ vars.n }}`` bare.
    """

    def __str__(self) -> str:
        return "0"


class _LenientVars(dict[str, Any]):
    """The ``vars`` seen by the first pass: known names resolve, unknown ones are placeholders."""

    def __missing__(self, key: str) -> Any:
        return _Placeholder(name=key)


def lenient_vars(known: Mapping[str, Any]) -> dict[str, Any]:
    """``known`` wrapped so that any other ``vars.NAME`` renders instead of failing."""
    return _LenientVars(known)


def render(text: str, context: Mapping[str, Any]) -> str:
    """Render ``text`` (comments already stripped) in the sandbox; raise ``TemplateFailure``."""
    try:
        template = _ENV.from_string(text)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateFailure(f"template syntax error: {exc.message}", exc.lineno) from exc
    try:
        return template.render(context)
    except jinja2.TemplateError as exc:
        raise TemplateFailure(f"template error: {exc}", _template_line(exc)) from exc
    except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
        # Filters raise plain Python errors (int('x'), a bad format string); they are still
        # the config author's mistake, so they are reported with a line, not a traceback.
        raise TemplateFailure(f"template error: {exc}", _template_line(exc)) from exc


def _template_line(exc: BaseException) -> int | None:
    # Jinja rewrites tracebacks so that template frames carry the template's own line numbers.
    lines = [
        f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<template>"
    ]
    return lines[-1] if lines else None


def system_facts() -> dict[str, str]:
    """``system.os``, ``system.arch``, ``system.hostname`` spelled as Rust's std names them."""
    os_name = {"darwin": "macos", "win32": "windows"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return {"os": os_name, "arch": arch, "hostname": socket.gethostname()}
