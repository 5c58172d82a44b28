"""Cleaning text before it leaves the machine: hidden characters, HTML comments, secrets.

A task may come from a GitHub issue written by anyone. Text a person reviewing the task
cannot see (zero-width and bidi characters, Unicode tags, HTML comments that Markdown
hides) is exactly where an instruction to an agent would be smuggled, so it is removed
and the removal is described. Secrets are replaced by ``[REDACTED:<kind>]`` because every
prompt goes to a third-party model; a ``Redaction`` records the kind and count, never the
secret.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import partial

from magi.state.model import Redaction

# Classes of removed characters, in the order they are reported.
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Blank "letters" that render as nothing and are used to pad or spoof identifiers.
_FILLERS = frozenset("\u034f\u115f\u1160\u3164\uffa0")
# Arabic "prepended concatenation marks" are Cf but visible: they draw a sign over the
# digits that follow, so deleting them would change legitimate text and hide nothing.
_VISIBLE_FORMAT = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u08e2\U000110bd")
_ORDINARY_CONTROLS = frozenset("\t\n\r")


def _is_variation_selector(ch: str) -> bool:
    return "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef"


def _char_class(ch: str, previous: str) -> str | None:
    """The description of ``ch`` if it is to be removed, else None."""
    if ch in _ZERO_WIDTH:
        # ZWJ goes too, even inside emoji sequences: a family emoji degrades to its members,
        # which is harmless, and telling a real sequence from a smuggled joiner is not.
        return "zero-width character"
    if ch in _BIDI:
        return "bidirectional control character"
    if "\U000e0000" <= ch <= "\U000e007f":
        return "Unicode tag character"
    if ch == "\u00ad":
        return "soft hyphen"
    if ch in _FILLERS:
        return "invisible filler character"
    if _is_variation_selector(ch) and (_is_variation_selector(previous) or not previous):
        # One selector after a character picks its glyph (emoji vs text style); a run of
        # them encodes bytes that no reader sees.
        return "stacked variation selector"
    category = unicodedata.category(ch)
    if category == "Cf" and ch not in _VISIBLE_FORMAT:
        return "invisible formatting character"
    if category == "Cc" and ch not in _ORDINARY_CONTROLS:
        return "control character"
    return None


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


def clean_task(text: str) -> tuple[str, list[str]]:
    """``text`` without invisible characters and HTML comments, and what was removed."""
    removed: Counter[str] = Counter()
    kept: list[str] = []
    previous = ""
    for ch in text:
        what = _char_class(ch, previous)
        if what is None:
            kept.append(ch)
        else:
            removed[what] += 1
        previous = ch
    cleaned = "".join(kept)

    # Characters first: "<\u200b!--" would otherwise hide a comment from this pass and
    # become one once the zero-width space is gone. Repeated, because removing
    # "<!<!-- x -->-- y -->"'s inner comment assembles an outer one.
    comments = unterminated = chars = 0
    while (match := _COMMENT.search(cleaned)) is not None:
        comments += 1
        unterminated += not match.group(0).endswith("-->")
        chars += len(match.group(0))
        cleaned = cleaned[: match.start()] + cleaned[match.end() :]

    notes = [_plural(n, what) for what, n in removed.items()]
    if comments:
        note = f"{_plural(comments, 'HTML comment')} ({chars} chars)"
        if unterminated:
            note += f", {unterminated} unterminated (removed to the end of the text)"
        notes.append(note)
    return cleaned, notes


_Rule = tuple[str, re.Pattern[str]]
# Order matters: whole-token kinds first, so that "token = ghp_..." is reported as a
# GitHub token; the generic assignment rule then sees a placeholder and leaves it alone.
# Each pattern's group "s" is the secret; everything outside it is kept.
_TOKEN_RULES: tuple[_Rule, ...] = (
    (
        "private_key",
        re.compile(
            r"(?P<s>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z))",
            re.DOTALL,
        ),
    ),
    ("github_token", re.compile(r"\b(?P<s>gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})")),
    ("slack_token", re.compile(r"\b(?P<s>xox[abposr]-[A-Za-z0-9-]{10,})")),
    ("aws_access_key_id", re.compile(r"\b(?P<s>(?:AKIA|ASIA)[A-Z0-9]{16})\b")),
    (
        "aws_secret_access_key",
        re.compile(
            r"aws_secret_access_key[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})(?![\w/+=])",
            re.IGNORECASE,
        ),
    ),
    # sk-..., sk-proj-..., sk-ant-...; a digit is required so CSS-ish names do not match.
    ("api_key", re.compile(r"\b(?P<s>sk-(?=[\w-]*\d)[\w-]{20,})")),
    ("google_api_key", re.compile(r"\b(?P<s>AIza[\w-]{35})(?![\w-])")),
    ("jwt", re.compile(r"\b(?P<s>eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*)")),
    (
        "authorization",
        re.compile(
            r"authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+(?P<s>[\w.~+/=-]+)",
            re.IGNORECASE,
        ),
    ),
    # scheme://user:password@host: the user and host say where, only the password is secret.
    ("connection_password", re.compile(r"\b[a-zA-Z][\w+.-]*://[^\s:/@]*:(?P<s>[^\s@/]+)@")),
)

# A key whose LAST word is a keyword: password_field and token_count are not secrets.
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])(?P<q>[\"']?)(?P<key>[\w.-]*?"
    r"(?P<word>password|passwd|secret|token|api[_-]?key|apikey|(?:secret|private|access)[_-]?key))"
    r"(?![A-Za-z0-9_])(?P=q)(?P<sep>\s*(?:=>|:=|[:=](?![=:]))\s*)"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s\"'`,;()\[\]{}<>]+)[ \t]*(?:#.*)?$)",
    re.IGNORECASE | re.MULTILINE,
)


def _assignment_kind(word: str) -> str:
    word = word.lower().replace("-", "_")
    if word in ("password", "passwd"):
        return "password"
    if word in ("api_key", "apikey", "token"):
        return word.replace("apikey", "api_key")
    return "secret"


# Values that are not secrets: empty, templated, language keywords, type names.
_LITERALS = {"none", "null", "nil", "true", "false", "undefined"}
_TYPES = {"str", "string", "int", "bytes", "bool", "any", "optional", "required", "secretstr"}
_NOT_SECRETS = frozenset(_LITERALS | _TYPES)
_PLACEHOLDER = re.compile(r"^(?:\$|\{|<|%|\[REDACTED|\*+$|x+$|\.\.\.$)", re.IGNORECASE)
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


def _is_placeholder(value: str) -> bool:
    return not value or value.casefold() in _NOT_SECRETS or bool(_PLACEHOLDER.match(value))


def _bare_is_secret(match: re.Match[str]) -> bool:
    """Whether an unquoted value is a literal secret rather than code referring to one."""
    key, sep, value = match.group("key"), match.group("sep"), match.group("bare")
    if _is_placeholder(value) or _DOTTED.match(value):  # self.token, settings.SECRET
        return False
    if sep == "=" and key.isupper():  # PASSWORD=hunter in a .env file or a shell
        return True
    if re.search(r"[^A-Za-z_.]", value):  # digits or symbols: not an identifier
        return True
    # `password: changeme` is YAML; `token: Token` is an annotation and `"token": token`
    # a dict entry, both code.
    colon = sep.strip() == ":" and not match.group("q")
    return colon and value[0].islower() and value.casefold() != key.casefold()


# Kinds a council also removes (seed 004): a question put to several vendors at once
# should not carry who asked or where things live. Off for competition prompts, where an
# address in code is usually the point. Connection strings go whole, before the token
# rules, so their passwords are not reported twice.
_CONNECTION = re.compile(
    r"\b(?P<s>(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|"
    r"sqlserver|jdbc:[a-z0-9]+)://[^\s\"'`<>]+)",
    re.IGNORECASE,
)
_ADO = re.compile(
    r"(?P<s>\b(?:server|data source|host)\s*=[^;\n]+;(?:[^;\n]+;)*?[^;\n]*"
    r"(?:password|pwd)\s*=[^;\n]*;?)",
    re.IGNORECASE,
)
_PERSONAL_FIRST: tuple[_Rule, ...] = (
    ("connection_string", _CONNECTION),
    ("connection_string", _ADO),
)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_PERSONAL_LAST: tuple[_Rule, ...] = (
    ("email", re.compile(r"(?P<s>\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,})\b")),
    ("ip_address", re.compile(rf"(?<![\w.])(?P<s>(?:{_OCTET}\.){{3}}{_OCTET})(?!\w|\.\d)")),
    (
        "ip_address",
        re.compile(
            r"(?<![\w:])(?P<s>(?=[\w:]*\d)(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|"
            r"(?=[\w:]*\d)(?:[0-9A-Fa-f]{1,4}:){1,7}:(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6})?)"
            r"(?![\w:])"
        ),
    ),
)
# Addresses that name no machine of anyone's: loopback and "any".
_HARMLESS = frozenset({"127.0.0.1", "0.0.0.0", "::1", "::"})  # noqa: S104 - text, not a bind


def redact_secrets(text: str, where: str, *, personal: bool = False) -> tuple[str, list[Redaction]]:
    """``text`` with secrets replaced by ``[REDACTED:<kind>]``, and one record per kind.

    ``personal`` also replaces email addresses, IP addresses and whole connection strings.
    """
    counts: Counter[str] = Counter()

    def replace(kind: str, match: re.Match[str], group: str) -> str:
        counts[kind] += 1
        offset = match.start()
        whole, start, end = match.group(0), match.start(group) - offset, match.end(group) - offset
        return f"{whole[:start]}[REDACTED:{kind}]{whole[end:]}"

    def token(kind: str, match: re.Match[str]) -> str:
        if kind == "connection_password" and _is_placeholder(match.group("s")):
            return match.group(0)  # postgres://app:${DB_PASSWORD}@db names no secret
        if kind == "ip_address" and match.group("s") in _HARMLESS:
            return match.group(0)
        return replace(kind, match, "s")

    def assignment(match: re.Match[str]) -> str:
        kind = _assignment_kind(match.group("word"))
        for group in ("dq", "sq"):
            value = match.group(group)
            if value is not None:
                return match.group(0) if _is_placeholder(value) else replace(kind, match, group)
        return replace(kind, match, "bare") if _bare_is_secret(match) else match.group(0)

    first = _PERSONAL_FIRST if personal else ()
    for kind, pattern in (*first, *_TOKEN_RULES):
        text = pattern.sub(partial(token, kind), text)
    text = _ASSIGNMENT.sub(assignment, text)
    for kind, pattern in _PERSONAL_LAST if personal else ():
        text = pattern.sub(partial(token, kind), text)
    return text, [Redaction(where=where, kind=k, count=n) for k, n in counts.items()]


_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]")


def strip_controls(text: str) -> str:
    """Agent output without NUL and other control characters (tab, newline, CR are kept).

    Agents write what they like; a NUL or an escape sequence relayed into another seat's
    packet would cut a prompt short in some CLIs or repaint a judge's terminal.
    """
    return _CONTROLS.sub("", text)
