"""Cleaning text before it leaves the machine: hidden characters, HTML comments, secrets.

A task may come from a GitHub issue written by anyone. Text a person reviewing the task
cannot see (zero-width and bidi characters, Unicode tags, HTML comments that Markdown
hides) is exactly where an instruction to an agent would be smuggled, so it is removed
and the removal is described. Secrets are replaced by ``[REDACTED:<kind>]`` because every
prompt goes to a third-party model; a ``Redaction`` records the kind and count, never the
secret. The credential formats come from detect-secrets (``core.text.secrets_scan`` says why
that scanner and how it is kept cheap); this module adds what it lacks: whole key blocks,
newer token formats, passwords and tokens in assignments, and a council's personal data.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from magi.core.text.secrets_scan import (
    Rule,
    Span,
    is_high_entropy,
    redact_lines,
    redact_text,
    scanner_rules,
    value_rule,
)
from magi.model.run import Redaction

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


# Values that are not secrets: empty, templated, language keywords, type names.
_LITERALS = {"none", "null", "nil", "true", "false", "undefined"}
_TYPES = {"str", "string", "int", "bytes", "bool", "any", "optional", "required", "secretstr"}
_NOT_SECRETS = frozenset(_LITERALS | _TYPES)
_PLACEHOLDER = re.compile(r"^(?:\$|\{|<|%|\[REDACTED|\*+$|x+$|\.\.\.$)", re.IGNORECASE)
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


def _is_placeholder(value: str) -> bool:
    return not value or value.casefold() in _NOT_SECRETS or bool(_PLACEHOLDER.match(value))


# Secrets that span lines: a key block goes from its BEGIN line through its END (to the
# end of the text when the END is missing). detect-secrets' private-key plugin flags
# these BEGIN lines and the PuTTY header only, not what follows them.
_BLOCKS: tuple[Rule, ...] = (
    value_rule(
        "private_key",
        r"(?P<s>-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}.*?"
        r"(?:-{4,5} ?END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|\Z))",
        ("private key",),
        re.DOTALL,
    ),
    value_rule(
        "private_key",
        r"(?P<s>PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z))",
        ("putty-user-key-file-",),
        re.DOTALL,
    ),
)

# magi's own patterns, after the scanner's, for formats it lacks or matches too narrowly.
# Each pattern's group "s" is the secret; everything outside it is kept.
_TOKEN_RULES: tuple[Rule, ...] = (
    # Fine-grained PATs, and classic tokens of other lengths than the scanner's 36.
    value_rule(
        "github_token",
        r"\b(?P<s>gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    # The scanner wants digits between the dashes; app-level (xapp-) tokens too.
    value_rule(
        "slack_token",
        r"\b(?P<s>xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,})",
        ("xox", "xapp-"),
    ),
    # sk-..., sk-proj-..., sk-ant-... (the scanner knows only OpenAI's older T3BlbkFJ keys);
    # a digit is required so CSS-ish names do not match.
    value_rule("api_key", r"\b(?P<s>sk-(?=[\w-]*\d)[\w-]{20,})", ("sk-",)),
    value_rule("google_api_key", r"\b(?P<s>AIza[\w-]{35})(?![\w-])", ("aiza",)),
    value_rule("jwt", r"\b(?P<s>eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*)", ("eyj",)),
    # The scanner finds npm tokens only in an .npmrc line.
    value_rule("npm_token", r"\b(?P<s>npm_[A-Za-z0-9]{36})\b", ("npm_",)),
    value_rule("huggingface_token", r"\b(?P<s>hf_[A-Za-z0-9]{34,})\b", ("hf_",)),
    # The scanner knows live keys only.
    value_rule("stripe_key", r"\b(?P<s>[rs]k_test_[0-9a-zA-Z]{24,})", ("k_test_",)),
    value_rule(
        "aws_secret_access_key",
        r"aws_secret_access_key[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})(?![\w/+=])",
        ("aws_secret_access_key",),
        re.IGNORECASE,
    ),
    # The scanner wants exactly 88 characters and knows no Service Bus key or SAS token;
    # GitHub's own log and artifact links are SAS URLs.
    value_rule(
        "azure_storage_key", r"\bAccountKey=(?P<s>[A-Za-z0-9+/]{20,}={0,2})", ("accountkey=",)
    ),
    value_rule(
        "azure_shared_access_key",
        r"\bSharedAccessKey=(?P<s>[A-Za-z0-9+/]{20,}={0,2})",
        ("sharedaccesskey=",),
    ),
    value_rule("azure_sas_token", r"[?&]sig=(?P<s>[A-Za-z0-9%+/=]{20,})", ("sig=",)),
    value_rule(
        "authorization",
        r"authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+(?P<s>[\w.~+/=-]+)",
        ("authorization",),
        re.IGNORECASE,
    ),
    # scheme://user:password@host: the user and host say where, only the password is secret
    # (the scanner's pattern stops at a password with "!$&'()*+,;=" in it).
    value_rule(
        "connection_password",
        r"\b[a-zA-Z][\w+.-]*://[^\s:/@]*:(?P<s>[^\s@/]+)@",
        ("://",),
        keep=_is_placeholder,  # postgres://app:${DB_PASSWORD}@db names no secret
    ),
)


def _aws_secret(match: re.Match[str]) -> Span | None:
    if not is_high_entropy(match.group("s")):
        return None
    line = match.string.lower()
    aws = any(word in line for word in ("aws", "akia", "asia"))
    return *match.span("s"), "aws_secret_access_key" if aws else "secret"


# A bare 40-character base64 value (an AWS secret access key's shape), only on a line
# that names AWS, an AWS key id or a secret: those words are the rule's triggers, so the
# rule never sees another line. Only high entropy counts, which no hex SHA reaches.
_AWS_SECRET = Rule(
    re.compile(r"(?<![A-Za-z0-9+/])(?P<s>[A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=])"),
    _aws_secret,
    ("aws", "akia", "asia", "secret"),
)

# A key whose LAST word is a keyword: password_field and token_count are not secrets.
# An unquoted value ends at a space, so words after it ("password=hunter2 for prod") stay
# and the value goes; one followed by "(" or "[" is code (load(path), os.environ[...]).
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])(?P<q>[\"']?)(?P<key>[\w.-]*?"
    r"(?P<word>password|passwd|passphrase|secret|token|api[_-]?key|apikey"
    r"|(?:secret|private|access)[_-]?key))"
    r"(?![A-Za-z0-9_])(?P=q)(?P<sep>\s*(?:=>|:=|[:=](?![=:]))\s*)"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'"
    r"|(?P<bare>[^\s\"'`,;()\[\]{}<>]++)(?![(\[])(?P<end>[ \t\r]*(?:#.*)?$)?)",
    re.IGNORECASE,
)
_ASSIGNMENT_TRIGGERS = (
    "passw",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "privatekey",
    "private_key",
    "private-key",
    "accesskey",
    "access_key",
    "access-key",
)


def _assignment_kind(word: str) -> str:
    word = word.lower().replace("-", "_")
    if word in ("password", "passwd", "passphrase"):
        return "password"
    if word in ("api_key", "apikey", "token"):
        return word.replace("apikey", "api_key")
    return "secret"


def _bare_is_secret(match: re.Match[str]) -> bool:
    """Whether an unquoted value is a literal secret rather than code referring to one."""
    key, sep, value = match.group("key"), match.group("sep"), match.group("bare")
    if _is_placeholder(value) or _DOTTED.match(value):  # self.token, settings.SECRET
        return False
    if sep == "=" and key.isupper():  # PASSWORD=hunter in a .env file or a shell
        return True
    if value.isdigit() and len(value) < 8:  # "token": 5, max_token = 4096: counts, not keys
        return False
    if re.search(r"[^A-Za-z_.]", value):  # digits or symbols: not an identifier
        return True
    # `password: changeme` closing a line is YAML; `token: Token` is an annotation,
    # `"token": token` a dict entry, `the token: it expires` prose.
    colon = sep.strip() == ":" and not match.group("q")
    return (
        colon
        and match.group("end") is not None
        and value[0].islower()
        and value.casefold() != key.casefold()
    )


def _assignment(match: re.Match[str]) -> Span | None:
    kind = _assignment_kind(match.group("word"))
    for group in ("dq", "sq"):
        value = match.group(group)
        if value is not None:
            return None if _is_placeholder(value) else (*match.span(group), kind)
    return (*match.span("bare"), kind) if _bare_is_secret(match) else None


_ASSIGNMENT_RULE = Rule(_ASSIGNMENT, _assignment, _ASSIGNMENT_TRIGGERS)

# Kinds a council also removes (seed 004): a question put to several vendors at once
# should not carry who asked or where things live. Off for competition prompts, where an
# address in code is usually the point. Connection strings go whole, before the token
# rules, so their passwords are not reported twice.
_PERSONAL_FIRST: tuple[Rule, ...] = (
    value_rule(
        "connection_string",
        r"\b(?P<s>(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|"
        r"sqlserver|jdbc:[a-z0-9]+)://[^\s\"'`<>]+)",
        ("://",),
        re.IGNORECASE,
    ),
    value_rule(
        "connection_string",
        r"(?P<s>\b(?:server|data source|host)\s*=[^;\n]+;(?:[^;\n]+;)*?[^;\n]*"
        r"(?:password|pwd)\s*=[^;\n]*;?)",
        ("password", "pwd"),
        re.IGNORECASE,
    ),
)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
# Addresses that name no machine of anyone's: loopback and "any".
_HARMLESS = frozenset({"127.0.0.1", "0.0.0.0", "::1", "::"})  # noqa: S104 - text, not a bind
_PERSONAL_LAST: tuple[Rule, ...] = (
    value_rule("email", r"(?P<s>\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,})\b", ("@",)),
    value_rule(
        "ip_address",
        rf"(?<![\w.])(?P<s>(?:{_OCTET}\.){{3}}{_OCTET})(?!\w|\.\d)",
        re.compile(r"\d\.\d"),  # five times cheaper to look for than the address
        keep=_HARMLESS.__contains__,
    ),
    value_rule(
        "ip_address",
        r"(?<![\w:])(?P<s>(?=[\w:]*\d)(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|"
        r"(?=[\w:]*\d)(?:[0-9A-Fa-f]{1,4}:){1,7}:(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6})?)"
        r"(?![\w:])",
        re.compile(r"::|:[0-9A-Fa-f]{1,4}:"),  # the compressed form has "::", the full ":h:"
        keep=_HARMLESS.__contains__,
    ),
)


def redact_secrets(text: str, where: str, *, personal: bool = False) -> tuple[str, list[Redaction]]:
    """``text`` with secrets replaced by ``[REDACTED:<kind>]``, and one record per kind.

    In order: key blocks; with ``personal``, whole connection strings; detect-secrets'
    patterns; magi's own; keyword assignments; with ``personal``, email and IP addresses.
    """
    counts: Counter[str] = Counter()
    text = redact_text(text, _BLOCKS, counts)
    rules = (
        *(_PERSONAL_FIRST if personal else ()),
        *scanner_rules(_is_placeholder),
        *_TOKEN_RULES,
        _AWS_SECRET,
        _ASSIGNMENT_RULE,
        *(_PERSONAL_LAST if personal else ()),
    )
    text = redact_lines(text, rules, counts)
    return text, [Redaction(where=where, kind=k, count=n) for k, n in counts.items()]


_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]")


def strip_controls(text: str) -> str:
    """Agent output without NUL and other control characters (tab, newline, CR are kept).

    Agents write what they like; a NUL or an escape sequence relayed into another seat's
    packet would cut a prompt short in some CLIs or repaint a judge's terminal.
    """
    return _CONTROLS.sub("", text)


def stored_original(text: str, cleaned_redacted: str, found: int, where: str, **kw: bool) -> str:
    """What a record may keep of the text as given: it with its secrets redacted, unless a
    secret only showed once invisible characters were gone (``ghp_<ZWSP>...``), in which
    case the raw text would still hold it whole: then the cleaned, redacted text is kept (the
    removed characters are already listed in the record)."""
    as_given, hits = redact_secrets(text, where, **kw)
    if sum(r.count for r in hits) < found:
        return cleaned_redacted
    return as_given
