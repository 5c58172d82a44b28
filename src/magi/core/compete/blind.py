"""Blinding: candidate labels, judges' presentation orders, trailer stripping, leak scans.

A judge that knows which model wrote a candidate stops grading the patch and starts voting
on the model's reputation. Everything a judge reads is therefore built so that it cannot
name an author. What must never reach a judge, and what in this module keeps it out:

* **Which agent wrote which candidate.** Candidates are known by a letter only. The
  letters are assigned by a seeded shuffle (``shuffle_labels``), so slot 0 is not always
  ``A`` and the roster order cannot be read back from the labels. The run's seed
  (``[blind] seed`` or ``--seed``) reproduces the assignment exactly; without one, the
  caller draws a seed and records it in the run.
* **A position that means something.** Every judge sees the candidates in its own order
  (``judge_order``): one seeded base order, rotated by the judge's index. With as many
  judges as candidates every candidate is shown first exactly once, so a preference for
  whatever comes first cannot pile up on one label.
* **Authorship trailers.** Agents' CLIs like to sign commits (``Co-Authored-By: ...``,
  ``🤖 Generated with [...]``). ``COMMIT_MSG_HOOK`` deletes them before a commit lands,
  and ``strip_trailers`` deletes them again when commit messages are presented, because
  an agent can bypass a hook (``--no-verify``) and history can be rewritten.
* **Vendor, model and roster names in the material.** A patch that says ``# written by
  <model>`` un-blinds the panel as surely as a trailer. Redacting a patch would corrupt
  the artifact under judgement, so ``scan_leaks`` only reports; ``[blind] on_leak``
  decides whether magi warns, redacts (``redact_terms``) or fails the candidate.

Whole words: a term matches only when no letter or digit touches it on either side. An
underscore counts as a separator, so ``openai_client``, ``gpt_utils.py`` and
``CLAUDE_API_KEY`` name their vendor as plainly as prose does, while ``claudette`` and
``gptq`` are other words. An identifier join is a boundary too: a case change inside a
word (``ClaudeHelper``, ``myOpenCodeThing``, ``GPTClient``) and a letter-digit join
(``claude3``); the join is read case-sensitively, the term itself is not, so ``OpenAI``
still matches ``openai`` whole, while ``Xclaude`` (no join) does not match.

Model names come from the roster's ``model =`` values: the whole value, each segment of
a ``provider/model`` value, and the distinctive words of a hyphenated name (``sonnet`` of
``claude-sonnet-4-5``; generic words such as ``mini`` or ``pro`` are not terms).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from magi.model.config import AgentConfig

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# Names that identify an agent's vendor, product or CLI. "gpt" also catches gpt-4o and
# gpt-5-codex, because the hyphen is a word boundary; the joined spellings are listed.
VENDOR_TERMS: tuple[str, ...] = (
    "claude",
    "anthropic",
    "codex",
    "openai",
    "chatgpt",
    "gpt",
    "gpt3",
    "gpt4",
    "gpt4o",
    "gpt5",
    "opencode",
    "gemini",
    "deepmind",
    "antigravity",
    "agy",
    "copilot",
    "grok",
    "deepseek",
    "qwen",
    "mistral",
    "aider",
)

# Shorter roster ids ("oc", "a1") would match initials and labels all over ordinary text;
# the agent's kind and model, which are scanned too, still identify such an agent.
MIN_ID_LENGTH = 3

# The kind that runs an arbitrary argv names no vendor, and "command" is an everyday word.
_NEUTRAL_KINDS = frozenset({"command"})

# Words of model names that name no vendor or family: not terms on their own.
GENERIC_MODEL_WORDS = frozenset(
    {
        "chat",
        "exp",
        "experimental",
        "fast",
        "flash",
        "high",
        "instruct",
        "large",
        "latest",
        "lite",
        "low",
        "max",
        "medium",
        "mini",
        "nano",
        "preview",
        "small",
        "thinking",
        "turbo",
    }
)
MIN_MODEL_WORD = 4


def shuffle_labels(count: int, seed: int) -> list[str]:
    """Labels for ``count`` implementer slots: element i is the label of slot i."""
    if not 1 <= count <= len(LABELS):
        raise ValueError(f"count must be 1..{len(LABELS)}, got {count}")
    labels = list(LABELS[:count])
    # A string seed derived per purpose keeps this stream independent of the others that
    # share the run's seed (a str seed is hashed with SHA-512, stable across processes).
    random.Random(f"labels:{seed}").shuffle(labels)
    return labels


def judge_order(labels: Sequence[str], seed: int, judge_index: int) -> list[str]:
    """The order in which judge ``judge_index`` (0-based) is shown the candidates.

    Judges 0..n-1 get the n distinct rotations of one seeded order; a larger panel repeats
    them, since there are no more rotations to give.
    """
    if judge_index < 0:
        raise ValueError(f"judge_index must be >= 0, got {judge_index}")
    if len(set(labels)) != len(labels):
        raise ValueError(f"labels must be distinct, got {list(labels)}")
    # Sorted first, so the result depends on the set of labels and the seed, not on the
    # order the caller happened to hold them in.
    base = sorted(labels)
    random.Random(f"order:{seed}").shuffle(base)
    if not base:
        return []
    shift = judge_index % len(base)
    return base[shift:] + base[:shift]


_CO_AUTHORED = re.compile(r"^\s*co[-\s]*authored[-\s]*by\s*:", re.IGNORECASE)
# Any non-alphanumeric prefix (an emoji, a bullet) may precede "Generated with".
_GENERATED = re.compile(r"^[^A-Za-z0-9]*generated\s+with\b", re.IGNORECASE)


def _is_trailer(line: str) -> bool:
    return bool(_CO_AUTHORED.match(line) or _GENERATED.match(line))


def strip_trailers(message: str) -> str:
    """``message`` without Co-Authored-By / Generated-with lines and trailing blank lines."""
    # split("\n"), not splitlines(): a form feed inside a message is not a line break to git.
    kept = [line for line in message.split("\n") if not _is_trailer(line)]
    while kept and not kept[-1].strip():
        kept.pop()
    if not kept:
        return ""
    return "\n".join(kept) + ("\n" if message.endswith("\n") else "")


# The same deletion as strip_trailers, for .git/hooks/commit-msg. POSIX sh and awk only:
# no [[:space:]] classes (old mawk lacks them), and awk reads a last line without a
# newline like any other. A temp file plus `cat >` keeps the message file's inode.
COMMIT_MSG_HOOK = r"""#!/bin/sh
# magi: delete authorship trailers so that no commit can tell a judge who wrote it.
msg="$1"
tmp="$msg.magi-tmp"
awk '
{
    low = tolower($0)
    if (low ~ /^[ \t]*co[- \t]*authored[- \t]*by[ \t]*:/) next
    if (low ~ /^[^a-z0-9]*generated[ \t]+with([^a-z0-9_]|$)/) next
    lines[++n] = $0
}
END {
    while (n > 0 && lines[n] ~ /^[ \t\r]*$/) n--
    for (i = 1; i <= n; i++) print lines[i]
}
' "$msg" > "$tmp" && cat "$tmp" > "$msg"
status=$?
rm -f "$tmp"
exit $status
"""


def leak_terms(agents: Sequence[AgentConfig]) -> list[str]:
    """Terms that would identify an author: vendor names, roster ids, kinds, models."""
    candidates: list[str] = list(VENDOR_TERMS)
    for agent in agents:
        if len(agent.id) >= MIN_ID_LENGTH:
            candidates.append(agent.id)
        if agent.kind not in _NEUTRAL_KINDS:
            candidates.append(agent.kind)
        if agent.model:
            candidates += model_terms(agent.model)
    seen: set[str] = set()
    terms: list[str] = []
    for term in candidates:
        key = term.casefold()
        if key and key not in seen:
            seen.add(key)
            terms.append(term)
    return terms


def model_terms(model: str) -> list[str]:
    """``model`` and the parts of it that still name a model family on their own."""
    out = [model]
    segments = [seg for seg in model.split("/") if seg]
    out += segments
    for seg in segments:
        for word in re.split(r"[-_.:@\s]+", seg):
            low = word.casefold()
            if len(word) >= MIN_MODEL_WORD and word.isalpha() and low not in GENERIC_MODEL_WORDS:
                out.append(word)
    return list(dict.fromkeys(out))


def _pattern(terms: Sequence[str]) -> re.Pattern[str]:
    # Longest first, so "gpt4o" wins over "gpt4" where both could start at one place.
    ordered = sorted({t for t in terms if t}, key=lambda t: (-len(t), t))
    body = "|".join(re.escape(t) for t in ordered)
    # [^\W_] is a letter or digit: the underscore is deliberately a separator.
    return re.compile(rf"(?:(?<![^\W_])|{_JOIN})(?:{body})(?:(?![^\W_])|{_JOIN})", re.IGNORECASE)


# An identifier join, case-sensitively even inside the case-insensitive pattern: aB, the B
# of ABc, a letter before a digit or a digit before a letter.
_JOIN = (
    "(?-i:(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])"
    "|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z]))"
)


def scan_leaks(text: str, terms: Sequence[str]) -> list[str]:
    """The terms found in ``text`` as whole words, case-insensitively, each once, in order."""
    if not any(terms):
        return []
    found = {m.group(0).casefold() for m in _pattern(terms).finditer(text)}
    result: list[str] = []
    for term in terms:
        key = term.casefold()
        if key in found:
            result.append(term)
            found.discard(key)
    return result


def redact_terms(text: str, terms: Sequence[str]) -> str:
    """``text`` with every whole-word hit of ``terms`` replaced by ``[redacted]``."""
    if not any(terms):
        return text
    return _pattern(terms).sub("[redacted]", text)
