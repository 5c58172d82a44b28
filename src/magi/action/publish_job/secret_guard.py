"""A candidate that would publish a secret is not pushed.

Every commit a candidate branch would bring to GitHub is read, line by line, before any
push: each line it adds, in any of its commits (a key added in one commit and deleted in
the next is still in the history the push publishes), through the scanner magi redacts
its posts with (``magi.core.text.sanitize.redact_secrets``: detect-secrets' patterns and
magi's own). A hit holds that branch back; the run says which kind of secret, in which
file, and never the value (the scanner's records carry only the kind and a count).

The commits read are those of the candidate that the default branch's head does not
hold (``<default>..<head>``), so what is already public is not read again.
"""

from __future__ import annotations

from magi.core.text.sanitize import redact_secrets
from magi.core.threads.posting import code
from magi.git.repo import Git

__all__ = ["Leak", "added_lines", "leaks_in", "secret_leaks", "secrets_note"]

Leak = tuple[str, str]  # (kind, file)


def added_lines(patch: str) -> dict[str, list[str]]:
    """{file: the lines the patch adds to it}, from ``git log -p`` output."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in patch.splitlines():
        if line.startswith("+++ "):
            # A name git quotes (a tab, a quote, a byte it escapes) is read all the same:
            # an unusual name must not be a way past the scan.
            name = line[4:].removeprefix('"').removesuffix('"')
            current = None if name == "/dev/null" else name.removeprefix("b/")  # deleted
        elif line.startswith("diff --git "):
            current = None
        elif current is not None and line.startswith("+"):
            out.setdefault(current, []).append(line[1:])
    return out


def leaks_in(patch: str) -> list[Leak]:
    """Each (kind, file) the scanner finds in what ``patch`` adds, sorted, once each."""
    found: set[Leak] = set()
    for name, lines in added_lines(patch).items():
        _, records = redact_secrets("\n".join(lines), name)
        found.update((r.kind, name) for r in records if r.count)
    return sorted(found)


MESSAGES = "(a commit message)"


def secret_leaks(git: Git, default_head: str, head: str) -> list[Leak]:
    """The secrets the commits of ``head`` not on the default branch would publish, in
    what they add to files and in their messages."""
    span = f"{default_head}..{head}"
    patch = git.run(
        "log", "-p", "--format=", "--no-color", "--no-renames", "--no-ext-diff",
        "--no-textconv", "-U0", span,
    )  # fmt: skip
    found = set(leaks_in(patch))
    _, records = redact_secrets(git.run("log", "--format=%B", span), MESSAGES)
    found.update((r.kind, MESSAGES) for r in records if r.count)
    return sorted(found)


def secrets_note(held: dict[str, list[Leak]], winner: str | None) -> str:
    """What the tracking comment says of candidates held back for a secret: kind and file."""
    lines = []
    for label, leaks in sorted(held.items()):
        who = f"Candidate {label}" + (" (the winner)" if label == winner else "")
        found = ", ".join(f"{kind} in {code(name)}" for kind, name in leaks[:5])
        more = f" and {len(leaks) - 5} more" if len(leaks) > 5 else ""
        lines.append(f"{who} adds what looks like a secret ({found}{more}): not pushed.")
    return (
        " ".join(lines) + " magi pushes no branch that would publish a secret; the value is "
        "not repeated here. Remove it from the candidate's history, or take the change by hand."
    )
