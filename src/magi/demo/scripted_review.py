"""Scripted reviewers and fixers: the review-loop half of ``magi.demo.scripted``.

A persona is ``<base>[+<mode>]``: the base acts in implement and judging (see
``scripted``), the mode in review and fix. Review modes: clean (no findings, the default),
blocker (one blocking and one minor finding in round 1, clean after), always (a blocking
finding every round), minor (one minor finding), malformed (never a valid block). Fix modes:
commit (the default: write the right solution, record the ids in REVIEWED.md, commit and
adopt every id), nocommit (adopt everything, change nothing), same-tree (an empty commit:
new commit, identical tree), reject (reject every id with a reason, change nothing),
reject-leaky (the same, the reason naming a vendor, as an author that signs its words),
workflow (the commit fix, plus a workflow file that would run with the repository's secrets),
ours-merge (in a conflict round: back to the head, ``git merge -s ours`` of the base, then the
commit fix: the base's changes thrown away while it shows as merged).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import TYPE_CHECKING

from magi.demo import repo as demo_repo

if TYPE_CHECKING:
    from magi.demo.scripted import Turn

ROUND = re.compile(r"^# Code review, round (\d+) of", re.M)
FINDING = re.compile(r"^### (R\d+-\d+-\d+|L\d+-\d+) ", re.M)
IDENT = ["-c", "user.name=dev", "-c", "user.email=dev@example.invalid"]


def _answer(turn: Turn, obj: dict[str, object]) -> str:
    # A live conversation, as the command-agent convention reports one (on stderr).
    session = turn.env.get("MAGI_SESSION") or str(uuid.uuid4())
    turn.warn(f"MAGI-SESSION: {session}")
    return f"Done.\n\n```json\n{json.dumps(obj)}\n```\n"


def _blocking(title: str) -> dict[str, object]:
    return {
        "severity": "blocking",
        "title": title,
        "file": "textstats.py",
        "line": 2,
        "detail": "word_count miscounts runs of whitespace.",
    }


def review(turn: Turn, mode: str) -> int:
    m = ROUND.search(turn.prompt)
    rnd = int(m.group(1)) if m else 1
    findings: list[dict[str, object]] = []
    if mode == "malformed":
        turn.say("Looks fine to me {findings: none}")
        return 0
    if mode == "blocker" and rnd == 1:
        findings = [
            _blocking("Whitespace runs miscounted"),
            {"severity": "minor", "title": "Docstring is terse", "detail": "Say what counts."},
        ]
    elif mode == "always":
        findings = [_blocking("Still not convinced")]
    elif mode == "minor":
        findings = [{"severity": "minor", "title": "Name the helper", "detail": "Clearer."}]
    turn.say(_answer(turn, {"findings": findings}))
    return 0


def _resolve_ours(turn: Turn) -> list[str]:
    """Every file git left conflict markers in, resolved to this branch's side (a real
    fixer would weigh both; the scripted one keeps its own change); their names."""
    found = turn.run(["git", "grep", "-l", "-e", "^<<<<<<< "], check=False, capture_output=True)
    names = (found.stdout or "").split()
    for name in names:
        path = turn.cwd / name
        out, side = [], "both"
        for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
            if line.startswith("<<<<<<< "):
                side = "ours"
            elif line.startswith(("|||||||", "=======")) and side != "both":
                side = "theirs"
            elif line.startswith(">>>>>>> "):
                side = "both"
            elif side in ("both", "ours"):
                out.append(line)
        path.write_text("".join(out), encoding="utf-8")
    return names


def fix(turn: Turn, mode: str) -> int:
    ids = list(dict.fromkeys(FINDING.findall(turn.prompt)))
    cwd = turn.cwd
    if mode == "keep-markers":  # commits something, leaves git's conflict markers
        (cwd / "REVIEWED.md").write_text("looked\n", encoding="utf-8")
        turn.run(["git", "add", "-A"], check=True)
        turn.run(["git", *IDENT, "commit", "-q", "-m", "Look around"], check=True)
        turn.say(_answer(turn, {"adopted": ids, "rejected": []}))
        return 0
    if mode == "ours-merge":  # throws the base away: its head's tree, the base as history
        base = turn.run(["git", "rev-parse", "HEAD^2"], capture_output=True).stdout.strip()
        turn.run(["git", "reset", "-q", "--hard", "HEAD^1"], check=True)
        turn.run(["git", *IDENT, "merge", "-q", "-s", "ours", "--no-edit", base], check=True)
    resolved = _resolve_ours(turn) if mode not in ("nocommit", "same-tree") else []
    if mode in ("reject", "reject-leaky"):
        why = "The unit tests cover this case."
        if mode == "reject-leaky":
            why = "As Claude, I checked: " + why
        rejected = [{"id": i, "reason": why} for i in ids]
        turn.say(_answer(turn, {"adopted": [], "rejected": rejected}))
        return 0
    if mode == "same-tree":
        turn.run(["git", *IDENT, "commit", "-q", "--allow-empty", "-m", "Tidy"], check=True)
    elif mode != "nocommit":
        (cwd / "textstats.py").write_text(demo_repo.RIGHT)
        if mode == "workflow":
            flow = cwd / ".github" / "workflows" / "exfiltrate.yml"
            flow.parent.mkdir(parents=True, exist_ok=True)
            flow.write_text("on: push\njobs: {x: {runs-on: ubuntu-latest, steps: []}}\n")
        if not resolved:  # a conflict round changes the conflicting paths alone
            with (cwd / "REVIEWED.md").open("a", encoding="utf-8") as f:
                f.write(" ".join(ids or ["e2e"]) + "\n")
        turn.run(["git", "add", "-A"], check=True)
        turn.run(["git", *IDENT, "commit", "-q", "-m", "Address review findings"], check=True)
    turn.say(_answer(turn, {"adopted": ids, "rejected": []}))
    return 0
