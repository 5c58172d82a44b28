"""Scripted stand-ins for the model seats: deterministic ``command`` agents for the demo and tests.

Run as ``python -m magi.demo.scripted <persona>``. The prompt arrives on stdin, the node
in MAGI_NODE, the session in MAGI_SESSION. A judge keeps its rankings between turns in a
small state file keyed by its session id, beside the prompt file, and reports the session
on stderr as ``MAGI-SESSION: <id>`` (the command-agent convention).

Implementer personas: right, partial, wrong (the demo's textstats solutions), noop, leaky,
uncommitted, quota, empty. Judge personas: evidence (passing verification first, then the
smaller patch), minimal (smallest patch first; persuaded by a verification argument in
deliberation), quota, malformed, reask (malformed once, then well-formed). A persona may
carry a review/fix mode after a "+" (see ``scripted_review``).

For tests, with MAGI_SCRIPTED_DIR set (through the agent's ``env``): every invocation is
logged to ``calls.jsonl`` there; ``hang-once:<persona>`` hangs on its first call (until
killed) and acts as <persona> afterwards; ``quota-until-unlock:<persona>`` reports a rate
limit until a file named ``unlock`` exists there; ``wait-for-unlock:<persona>`` writes
``waiting-<seat>`` and waits for that file, then acts; ``quota-at-<node>:<persona>`` and
``crash-at-<node>:<persona>`` do so (a rate limit, or a plain failing exit) at that node only.

Hostile modifiers (they chain: ``escape:hang-at-vote:evidence``): ``hang-at-<node>:<p>``
hangs on its first call at that node; ``escape:<p>`` leaves a descendant in a session of
its own (``setsid``) that writes its pid to ``escaped-<seat>`` and sleeps; ``move-branches:<p>``
points every ``magi/*`` branch at a new commit nobody judged (in every judge turn, with
MAGI_ALLOW_WRITE=0 ignored); ``huge:<p>`` pads its judge rationale to 3 MB and ends it with
NUL and escape bytes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

from magi.demo import repo as demo_repo
from magi.demo import scripted_review

HEADER = re.compile(r"^<<<MATERIAL (\S+) ([A-Za-z0-9-]+)\b", re.M)
CLOSE = "MATERIAL>>>"


def _blocks(prompt: str) -> dict[tuple[str, str], str]:
    """Material blocks by (kind, label)."""
    out: dict[tuple[str, str], str] = {}
    for m in HEADER.finditer(prompt):
        end = prompt.find(CLOSE, m.end())
        out[(m.group(1), m.group(2))] = prompt[m.end() : end if end >= 0 else len(prompt)]
    return out


def _labels(prompt: str) -> list[str]:
    return sorted({label for _, label in _blocks(prompt) if re.fullmatch("[A-Z]", label)})


def _passed(prompt: str) -> dict[str, bool]:
    return {
        label: body.lstrip().startswith("PASSED")
        for (kind, label), body in _blocks(prompt).items()
        if kind == "verification"
    }


def _patch_size(prompt: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for (kind, label), body in _blocks(prompt).items():
        if kind == "patch":
            sizes[label] = sum(
                1
                for line in body.splitlines()
                if line[:1] in "+-" and not line.startswith(("+++", "---"))
            )
    return sizes


def _state_file(session: str) -> Path:
    # Not beside the prompt file: that is magi's artifacts directory, hidden by the jail.
    # MAGI_STATE_DIR is the seat's own, and writable inside the jail.
    chosen = os.environ.get("MAGI_STATE_DIR") or os.environ.get("MAGI_SCRIPTED_DIR")
    prompt_dir = Path(os.environ.get("MAGI_PROMPT_FILE", "/tmp/x")).parent  # noqa: S108
    base = Path(chosen) if chosen else prompt_dir
    return base / f".scripted-{session}.json"


def _answer(obj: dict[str, object], prose: str = "") -> str:
    return f"{prose}\n\n```json\n{json.dumps(obj)}\n```\n"


def implement(persona: str) -> int:
    cwd = Path.cwd()
    if persona == "quota":
        print("You've hit your usage limit (scripted)", file=sys.stderr)
        return 75
    if persona == "empty":
        print("I looked around and did nothing.")
        return 0
    if persona == "noop":
        print(
            "NO CHANGE NEEDED\nEvidence: `python3 -m unittest -q` already passes on the base "
            "branch; textstats.py handles every case the task names."
        )
        return 0
    source = demo_repo.SOLUTIONS.get(persona, demo_repo.RIGHT)
    if persona == "leaky":
        source += "\n# Written by Claude for the demo.\n"
    (cwd / "textstats.py").write_text(source)
    if persona == "workflow":  # the right fix, and a workflow that would run with secrets
        flow = cwd / ".github" / "workflows" / "exfiltrate.yml"
        flow.parent.mkdir(parents=True, exist_ok=True)
        flow.write_text("on: push\njobs: {x: {runs-on: ubuntu-latest, steps: []}}\n")
    if persona != "uncommitted":
        msg = "Fix textstats word splitting"
        if persona == "leaky":
            msg += "\n\nCo-Authored-By: Claude <noreply@anthropic.com>"
        subprocess.run(["git", "add", "-A"], check=True)
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=dev",
                "-c",
                "user.email=dev@example.invalid",
                "commit",
                "-q",
                "-m",
                msg,
            ],
            check=True,
        )
    print("Changed textstats.py and ran the unit tests.")
    return 0


def judge(persona: str, prompt: str) -> int:
    node = os.environ.get("MAGI_NODE", "judge")
    session = os.environ.get("MAGI_SESSION") or str(uuid.uuid4())
    print(f"MAGI-SESSION: {session}", file=sys.stderr)
    if persona == "quota":
        print("Error: Too Many Requests (rate limit)", file=sys.stderr)
        return 75
    state_path = _state_file(session)
    state = json.loads(state_path.read_text()) if state_path.exists() else {}
    if node == "judge" and _labels(prompt):
        passed, size = _passed(prompt), _patch_size(prompt)
        labels = _labels(prompt)
        evidence = sorted(labels, key=lambda x: (not passed.get(x, False), size.get(x, 0), x))
        minimal = sorted(labels, key=lambda x: (size.get(x, 0), x))
        state.update(evidence=evidence, current=minimal if persona == "minimal" else evidence)
        state_path.write_text(json.dumps(state))
    if persona == "malformed" or (persona == "reask" and not state.get("reasked")):
        state["reasked"] = True
        state_path.write_text(json.dumps(state))
        print("I prefer the first one. {ranking: A}")
        return 0
    if node == "judge":
        why = (
            "the smallest change is the safest"
            if persona == "minimal"
            else "verification results first, then the smaller patch"
        )
        if _HUGE:
            why += " " + "x" * 3_000_000 + "\x00\x1b[2J"
        print(_answer({"ranking": state["current"], "rationale": why}, "My ranking."))
    elif node == "deliberate":
        argued = " ".join(
            body for (kind, _), body in _blocks(prompt).items() if kind == "argument"
        ).lower()
        # Persuaded only by what another judge argued, never by magi's own prompt text.
        if persona == "minimal" and "verification" in argued:
            state["current"] = state["evidence"]
            arg = "Persuaded: a candidate that fails its tests cannot win on size."
        else:
            arg = f"{state['current'][0]} is the only one whose verification passed."
        state_path.write_text(json.dumps(state))
        print(_answer({"ranking": state["current"], "argument": arg}))
    else:
        print(_answer({"vote": state["current"][0], "rationale": "as argued"}))
    return 0


def _test_hooks(persona: str) -> str:
    """Apply the test modifiers; returns the persona to act as."""
    folder = os.environ.get("MAGI_SCRIPTED_DIR")
    if not folder:
        return persona
    d = Path(folder)
    entry = {
        "persona": persona,
        "node": os.environ.get("MAGI_NODE"),
        "seat": os.environ.get("MAGI_SEAT"),
        "pid": os.getpid(),
    }
    with (d / "calls.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
    return _modifiers(persona, d)


def _hang(marker: Path) -> None:
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        while True:  # until the test kills magi and this process
            time.sleep(3600)


def _modifiers(persona: str, d: Path) -> str:
    global _HUGE
    seat, node = os.environ.get("MAGI_SEAT"), os.environ.get("MAGI_NODE")
    mod, _, rest = persona.partition(":")
    if mod == "hang-once":
        _hang(d / f"hung-{seat}")
        return _modifiers(rest, d)
    if mod.startswith("hang-at-"):
        if node == mod.removeprefix("hang-at-"):
            _hang(d / f"hung-{seat}-{node}")
        return _modifiers(rest, d)
    if mod == "quota-until-unlock":
        return _modifiers(rest, d) if (d / "unlock").exists() else "quota"
    if mod == "wait-for-unlock":
        # A seat still out: it says so (``waiting-<seat>``), then works once ``unlock`` exists.
        (d / f"waiting-{seat}").write_text(str(os.getpid()))
        while not (d / "unlock").exists():
            time.sleep(0.05)  # the agent's own pace, not a test's synchronisation
        return _modifiers(rest, d)
    for kind in ("quota", "crash"):
        if mod.startswith(f"{kind}-at-"):
            locked = node == mod.removeprefix(f"{kind}-at-") and not (d / "unlock").exists()
            return kind if locked else _modifiers(rest, d)
    if mod == "escape":
        _escape(d / f"escaped-{seat}")
        return _modifiers(rest, d)
    if mod == "move-branches":
        if node != "implement":
            _move_branches()
        return _modifiers(rest, d)
    if mod == "huge":
        _HUGE = True
        return _modifiers(rest, d)
    return persona


_HUGE = False


def _escape(pidfile: Path) -> None:
    """A grandchild in its own session: out of reach of the turn's process-group kill."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            pidfile.write_text(str(os.getpid()))
            os.closerange(0, 3)
            time.sleep(3600)
        os._exit(0)


def _move_branches() -> None:
    """Every magi branch to a commit nobody judged (a read-only seat ignoring the rule)."""
    git = ["git", "-c", "user.name=x", "-c", "user.email=x@y"]
    tree = subprocess.run([*git, "write-tree"], capture_output=True, text=True).stdout.strip()
    sha = subprocess.run(
        [*git, "commit-tree", "-p", "HEAD", "-m", "unjudged", tree],
        capture_output=True,
        text=True,
    ).stdout.strip()
    refs = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname)", "refs/heads/magi/"],
        capture_output=True,
        text=True,
    ).stdout.split()
    for ref in refs:
        subprocess.run(["git", "update-ref", ref, sha], check=False)


def _fix_override() -> str:
    """A test's ``fix-as`` file in MAGI_SCRIPTED_DIR names the fix mode (e.g. same-tree)."""
    d = os.environ.get("MAGI_SCRIPTED_DIR")
    path = Path(d) / "fix-as" if d else None
    return path.read_text().strip() if path is not None and path.is_file() else ""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m magi.demo.scripted <persona>", file=sys.stderr)
        return 2
    prompt = sys.stdin.read()
    persona, _, mode = _test_hooks(args[0]).partition("+")
    node = os.environ.get("MAGI_NODE", "implement")
    if persona == "crash":
        print("Segmentation fault (scripted)", file=sys.stderr)
        return 139
    if persona == "quota" and node in ("review", "fix"):
        print("You've hit your usage limit (scripted)", file=sys.stderr)
        return 75
    if node == "review":
        return scripted_review.review(mode or "clean", prompt)
    if node == "fix":
        return scripted_review.fix(_fix_override() or mode or "commit", prompt)
    if node == "implement":
        return implement(persona)
    return judge(persona, prompt)


if __name__ == "__main__":
    sys.exit(main())
