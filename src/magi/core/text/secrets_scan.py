"""Finding secrets line by line: detect-secrets' patterns, tried only where a line can match.

Why detect-secrets (Yelp, Apache-2.0, pinned in constraints.txt). It is the most used
offline secret scanner in pure Python: it needs no network (only its verifiers call
out, and magi never calls one) and no config file. Of its 27 plugins magi runs the 22
for credential formats (``_plugins``) and leaves five out (``LEFT_OUT``, below). It is
maintained but slow: 1.5.0 (May 2024) is its latest release, with two commits since.
The pin, a test that fingerprints its patterns and magi's own patterns for newer formats
(``core.text.sanitize``) make up for that. The one peer weighed was bc-detect-secrets,
Bridgecrew's fork: it releases monthly, but it dropped the GitLab, OpenAI, PyPI and
Telegram plugins and adds a dependency. Both install the same ``detect_secrets``.

How it is used. Not through its scan functions: those go through global settings, a
logger and the verification hooks. They also report what each pattern's ``findall``
returns, which for the GitHub and GitLab patterns is only the prefix ("ghp"), so the
value they report cannot be what gets replaced. magi runs each plugin's own ``denylist``
patterns with ``finditer`` and lets the plugin confirm the match (``analyze_string``:
the JWT plugin decodes the token). It then replaces a span: the captured value where a
pattern captures one after a keyword, else the whole token, widened to its end (Stripe's
pattern stops 24 characters into a longer key).

Cost. Redaction runs on every prompt. Taken line by line as detect-secrets scans, 100 KB
of Python (2,500 lines) through every plugin costs 175 ms, half of that in the keyword
plugin. So each rule names lower-case strings one of which a line must contain for its
pattern to match (``Rule.triggers``). One ``str.find`` pass per string picks those lines,
and only they are searched. The three patterns with no such literal (Discord, Telegram,
Twilio) search the whole text once. The same 100 KB of Python now takes 15 ms for a
prompt and 16 ms for a council; magi's own regexes, before the scanner, took 48 and
84 ms. The scanner is imported on first use: that costs 150 ms, most of it ``requests``,
which its verifiers need.

Left out. The keyword plugin: magi's assignment rule is the keyword layer, and the
plugin redacts ``secretary = 'Jane'``. The two high-entropy plugins: they flag commit
SHAs, digests and UUIDs, which code prompts are full of; their entropy measure is used
only for a 40-character value on a line that names AWS or a secret (a hex SHA never
passes it). The private-key plugin: it flags the BEGIN line, while magi removes the
block through its END. The public-IP plugin: personal mode has its own IPv4 and IPv6
rules, which also keep loopback.
"""

from __future__ import annotations

import re
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

__all__ = [
    "Rule",
    "Span",
    "is_high_entropy",
    "redact_lines",
    "redact_text",
    "scanner_kinds",
    "scanner_plugins",
    "scanner_rules",
    "value_rule",
]

Span = tuple[int, int, str]  # start, end, kind: where in a string a secret is


@dataclass(frozen=True)
class Rule:
    """A pattern, where the secret sits in one of its matches, and the lines worth trying."""

    pattern: re.Pattern[str]
    pick: Callable[[re.Match[str]], Span | None]  # None: this match is no secret
    # Lower-case strings, one of which is in every line the pattern can match; or a
    # cheaper pattern that matches in every such line. None: the lines are those the
    # pattern itself matches in the whole text (it has nothing cheaper to look for).
    triggers: tuple[str, ...] | re.Pattern[str] | None


def value_rule(
    kind: str,
    pattern: str,
    triggers: tuple[str, ...] | re.Pattern[str] | None,
    flags: int = 0,
    *,
    keep: Callable[[str], bool] | None = None,
) -> Rule:
    """A rule whose pattern's group ``s`` is the secret, unless ``keep(value)``."""

    def pick(match: re.Match[str]) -> Span | None:
        if keep is not None and keep(match.group("s")):
            return None
        return *match.span("s"), kind

    return Rule(re.compile(pattern, flags), pick, triggers)


def _redact(rule: Rule, text: str, counts: Counter[str]) -> str:
    out: list[str] = []
    pos = 0
    for match in rule.pattern.finditer(text):
        span = rule.pick(match)
        if span is None or span[1] <= pos:  # a widened token already covered this match
            continue
        start, end, kind = max(span[0], pos), span[1], span[2]
        out += (text[pos:start], f"[REDACTED:{kind}]")
        counts[kind] += 1
        pos = end
    return "".join((*out, text[pos:])) if out else text


def redact_text(text: str, rules: Sequence[Rule], counts: Counter[str]) -> str:
    """``text`` with each rule applied to it whole (for secrets that span lines)."""
    low = text.lower()
    for rule in rules:
        triggers = rule.triggers
        if isinstance(triggers, re.Pattern):
            triggers = None if triggers.search(text) else ()
        if triggers is None or any(t in low for t in triggers):
            text = _redact(rule, text, counts)
    return text


def _starts(text: str) -> list[int]:
    return list(accumulate((len(line) + 1 for line in text.split("\n")[:-1]), initial=0))


class _Lines:
    """Which lines of a text each rule can match, found once per text and trigger set."""

    def __init__(self, text: str) -> None:
        self.text, self.low = text, text.lower()
        # lower() keeps every newline but may change a line's length ("İ" becomes two
        # characters), so positions in each string are mapped with its own line starts.
        self.starts, self.low_starts = _starts(text), _starts(self.low)
        self.seen: dict[tuple[str, ...], list[int]] = {}

    def of(self, rule: Rule) -> list[int]:
        if not isinstance(rule.triggers, tuple):
            pattern = rule.pattern if rule.triggers is None else rule.triggers
            starts = self.starts
            return sorted(
                {bisect_right(starts, m.start()) - 1 for m in pattern.finditer(self.text)}
            )
        if rule.triggers not in self.seen:
            self.seen[rule.triggers] = self._containing(rule.triggers)
        return self.seen[rule.triggers]

    def _containing(self, triggers: tuple[str, ...]) -> list[int]:
        starts, found = self.low_starts, set()
        for trigger in triggers:
            pos = self.low.find(trigger)
            while pos != -1:
                line = bisect_right(starts, pos) - 1
                found.add(line)
                pos = self.low.find(trigger, starts[line + 1]) if line + 1 < len(starts) else -1
        return sorted(found)


def redact_lines(text: str, rules: Sequence[Rule], counts: Counter[str]) -> str:
    """``text`` with each rule applied, in order, to the lines it can match.

    The lines are chosen from ``text`` as given. A rule that runs later sees the markers
    that earlier rules left, and those are no secrets, so it cannot lose a match by that.
    """
    lines_of = _Lines(text)
    chosen = [(rule, lines_of.of(rule)) for rule in rules]
    lines = text.split("\n")
    for rule, numbers in chosen:
        for n in numbers:
            lines[n] = _redact(rule, lines[n], counts)
    return "\n".join(lines)


@dataclass(frozen=True)
class _Plugin:
    detector: type[RegexBasedDetector]
    kind: str
    triggers: tuple[str, ...] | None
    prefix_group: bool = False  # its pattern's group captures the prefix ("ghp"), not the value
    digit: bool = False  # its pattern also matches words and dotted names, which have no digit


_GITHUB = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_GITLAB = ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-", "glimt-")
_GITLAB_MORE = ("glptt-", "glagent-", "gloas-")
_KEYWORDS = ("key", "pw", "pass", "token")  # the assignment plugins' key|pwd|password|token
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_DELIMITERS = " \t\"':="  # Artifactory's patterns take the character on either side
_NAME = re.compile(r"[A-Za-z]+=")  # Azure's pattern takes "AccountKey=": the name stays
_AWS_KEY_ID = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")


@contextmanager
def _warnings_kept() -> Iterator[None]:
    # detect_secrets.core.log calls logging.captureWarnings(True) when it is imported,
    # which would route every later warning of the process to logging.
    shown = warnings.showwarning
    try:
        yield
    finally:
        warnings.showwarning = shown


@cache
def _plugins() -> tuple[_Plugin, ...]:
    with _warnings_kept():
        from detect_secrets.plugins import (
            artifactory,
            aws,
            azure_storage_key,
            basic_auth,
            cloudant,
            discord,
            github_token,
            gitlab_token,
            ibm_cloud_iam,
            ibm_cos_hmac,
            jwt,
            mailchimp,
            npm,
            openai,
            pypi_token,
            sendgrid,
            slack,
            softlayer,
            square_oauth,
            stripe,
            telegram_token,
            twilio,
        )
    return (
        _Plugin(artifactory.ArtifactoryDetector, "artifactory_token", ("akc", "ap"), digit=True),
        _Plugin(
            aws.AWSKeyDetector, "aws_access_key_id", ("akia", "asia", "abia", "acca", "a3t", "aws")
        ),
        _Plugin(azure_storage_key.AzureStorageKeyDetector, "azure_storage_key", ("accountkey=",)),
        # The same kind as magi's own rule for scheme://user:password@host.
        _Plugin(basic_auth.BasicAuthDetector, "connection_password", ("://",)),
        _Plugin(cloudant.CloudantDetector, "cloudant_key", (*_KEYWORDS, "cloudant")),
        _Plugin(discord.DiscordBotTokenDetector, "discord_token", None, digit=True),
        _Plugin(github_token.GitHubTokenDetector, "github_token", _GITHUB, prefix_group=True),
        _Plugin(
            gitlab_token.GitLabTokenDetector,
            "gitlab_token",
            (*_GITLAB, *_GITLAB_MORE),
            prefix_group=True,
        ),
        _Plugin(ibm_cloud_iam.IbmCloudIamDetector, "ibm_cloud_iam_key", _KEYWORDS),
        _Plugin(ibm_cos_hmac.IbmCosHmacDetector, "ibm_cos_hmac_key", ("secret",)),
        _Plugin(jwt.JwtTokenDetector, "jwt", ("eyj",)),
        _Plugin(mailchimp.MailchimpDetector, "mailchimp_key", ("-us",)),
        _Plugin(npm.NpmDetector, "npm_token", ("_authtoken",)),
        _Plugin(openai.OpenAIDetector, "openai_api_key", ("t3blbkfj",)),
        _Plugin(pypi_token.PypiTokenDetector, "pypi_token", ("pypi-",)),
        _Plugin(sendgrid.SendGridDetector, "sendgrid_key", ("sg.",)),
        _Plugin(slack.SlackDetector, "slack_token", ("xox", "hooks.slack.com")),
        _Plugin(softlayer.SoftlayerDetector, "softlayer_key", (*_KEYWORDS, "softlayer")),
        _Plugin(square_oauth.SquareOAuthDetector, "square_oauth_secret", ("sq0csp-",)),
        _Plugin(stripe.StripeDetector, "stripe_key", ("k_live_",)),
        _Plugin(telegram_token.TelegramBotTokenDetector, "telegram_token", None),
        _Plugin(twilio.TwilioKeyDetector, "twilio_key", None, digit=True),
    )


# The detect-secrets plugins magi does not run, and why (the module docstring says more).
LEFT_OUT = {
    "KeywordDetector": "magi's assignment rule is the keyword layer",
    "Base64HighEntropyString": "flags digests; its entropy is used next to aws/secret only",
    "HexHighEntropyString": "flags commit SHAs and digests",
    "PrivateKeyDetector": "flags the BEGIN line; magi removes the block to its END",
    "IPPublicDetector": "personal mode has its own IPv4/IPv6 rules",
}


def scanner_plugins() -> tuple[str, ...]:
    """The detect-secrets plugins magi runs, by class name."""
    return tuple(p.detector.__name__ for p in _plugins())


def scanner_kinds() -> tuple[str, ...]:
    """The kinds those plugins' findings are recorded as."""
    return (*(p.kind for p in _plugins()), "aws_secret_access_key", "slack_webhook")


def _kind(plugin: _Plugin, value: str) -> str:
    if plugin.kind == "aws_access_key_id" and not _AWS_KEY_ID.fullmatch(value):
        return "aws_secret_access_key"  # its second pattern: a quoted 40 characters near "aws"
    if plugin.kind == "slack_token" and value.startswith("https://"):
        return "slack_webhook"
    return plugin.kind


def _picker(
    plugin: _Plugin, detector: RegexBasedDetector, keep: Callable[[str], bool]
) -> Callable[[re.Match[str]], Span | None]:
    def pick(match: re.Match[str]) -> Span | None:
        text = match.string
        groups = () if plugin.prefix_group else range(1, match.re.groups + 1)
        captured = [g for g in groups if match.group(g)]
        if captured:  # the value after a keyword, or a URL's password: delimited already
            start, end = max((match.span(g) for g in captured), key=lambda s: s[1] - s[0])
        else:
            start, end = match.span()
            while start < end and text[start] in _DELIMITERS:
                start += 1
            while end > start and text[end - 1] in _DELIMITERS:
                end -= 1
            if name := _NAME.match(text, start, end):
                start = name.end()
            while start > 0 and text[start - 1] in _TOKEN_CHARS:
                start -= 1
            while end < len(text) and text[end] in _TOKEN_CHARS:
                end += 1
        value = text[start:end]
        if not value or keep(value) or (plugin.digit and not any(c.isdigit() for c in value)):
            return None
        if next(iter(detector.analyze_string(match.group(0))), None) is None:
            return None  # the plugin's own verdict (the JWT plugin decodes the token)
        return start, end, _kind(plugin, value)

    return pick


@cache
def scanner_rules(keep: Callable[[str], bool]) -> tuple[Rule, ...]:
    """One rule per detect-secrets pattern; ``keep(value)`` says a found value is no secret."""
    rules = []
    for plugin in _plugins():
        detector = plugin.detector()
        pick = _picker(plugin, detector, keep)
        rules += [Rule(p, pick, plugin.triggers) for p in detector.denylist]
    return tuple(rules)


@cache
def _entropy() -> tuple[Callable[[str], float], float]:
    with _warnings_kept():
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
    plugin = Base64HighEntropyString()
    return plugin.calculate_shannon_entropy, plugin.entropy_limit


def is_high_entropy(value: str) -> bool:
    """Whether detect-secrets' base64 entropy plugin would flag ``value`` (limit 4.5).

    A 40-character hex SHA scores at most 4.0, a random base64 key of that length ~4.9.
    """
    measure, limit = _entropy()
    return measure(value) > limit
