"""Scripted stand-ins for the model seats: deterministic ``command`` agents for the demo and tests.

Run as ``python -m magi.demo.scripted <persona>``. The prompt arrives on stdin, the node
in MAGI_NODE, the session in MAGI_SESSION. A judge keeps its rankings between turns in a
small state file keyed by its session id, beside the prompt file, and reports the session
on stderr as ``MAGI-SESSION: <id>`` (the command-agent convention).

Implementer personas: right, partial, wrong (the demo's textstats solutions), noop, leaky,
uncommitted, quota, empty. Judge personas: evidence (passing verification first, then the
smaller patch), minimal (smallest patch first; persuaded by a verification argument in
deliberation), contrary (the evidence's order reversed, so it splits any panel of evidence
judges; persuaded as minimal is), quota, malformed, reask (malformed once, then
well-formed). A judge with no live session ranks anew from the context it is re-sent. A persona may
carry a review/fix mode after a "+" (see ``scripted_review``).

For tests, with MAGI_SCRIPTED_DIR set (through the agent's ``env``): every invocation is
logged to ``calls.jsonl`` there; ``hang-once:<persona>`` hangs on its first call (until
killed) and acts as <persona> afterwards; ``quota-until-unlock:<persona>`` reports a rate
limit until a file named ``unlock`` exists there; ``wait-for-unlock:<persona>`` writes
``waiting-<seat>`` and waits for that file, then acts; ``quota-at-<node>:<persona>`` and
``crash-at-<node>:<persona>`` do so (a rate limit, or a plain failing exit) at that node only;
``ask:<persona>`` asks a person (``magi ask``) which storage backend before it works.

Hostile modifiers (they chain: ``escape:hang-at-vote:evidence``): ``hang-at-<node>:<p>``
hangs on its first call at that node; ``escape:<p>`` leaves a descendant in a session of
its own (``setsid``) that writes its pid to ``escaped-<seat>`` and sleeps; ``move-branches:<p>``
points every ``magi/*`` branch at a new commit nobody judged (in every judge turn, with
MAGI_ALLOW_WRITE=0 ignored); ``huge:<p>`` pads its judge rationale to 3 MB and ends it with
NUL and escape bytes.

A persona acts on a ``Turn``: the environment, working directory and prompt a process would
have, and where it writes. ``main`` makes one from the process; ``magi.testing.inprocess``
makes one for a seat in the test process, so a whole competition needs no process a turn.
The hang, escape and wait modifiers act on a process and are for processes only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from magi.demo import repo as demo_repo
from magi.demo import scripted_review


@dataclass
class Turn:
    """What a persona sees of its turn, and where it answers."""

    env: Mapping[str, str]
    cwd: Path
    prompt: str
    out: TextIO
    err: TextIO
    huge: bool = False  # ``huge:`` pads the judge's rationale
    # The git a persona runs gets this environment (None: the process's own).
    child_env: Mapping[str, str] | None = field(default=None, repr=False)

    @classmethod
    def of_process(cls) -> Turn:
        return cls(os.environ, Path.cwd(), sys.stdin.read(), sys.stdout, sys.stderr)

    def say(self, text: str) -> None:
        print(text, file=self.out)

    def warn(self, text: str) -> None:
        print(text, file=self.err)

    def run(self, argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        env = dict(self.child_env) if self.child_env is not None else None
        return subprocess.run(argv, cwd=self.cwd, env=env, text=True, **kw)


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


def _state_file(turn: Turn, session: str) -> Path:
    # Not beside the prompt file: that is magi's artifacts directory, hidden by the jail.
    # MAGI_STATE_DIR is the seat's own, and writable inside the jail.
    chosen = turn.env.get("MAGI_STATE_DIR") or turn.env.get("MAGI_SCRIPTED_DIR")
    prompt_dir = Path(turn.env.get("MAGI_PROMPT_FILE", "/tmp/x")).parent  # noqa: S108
    base = Path(chosen) if chosen else prompt_dir
    return base / f".scripted-{session}.json"


def _answer(obj: dict[str, object], prose: str = "") -> str:
    return f"{prose}\n\n```json\n{json.dumps(obj)}\n```\n"


def implement(turn: Turn, persona: str) -> int:
    cwd = turn.cwd
    if persona == "quota":
        turn.warn("You've hit your usage limit (scripted)")
        return 75
    if persona == "empty":
        turn.say("I looked around and did nothing.")
        return 0
    if persona == "asked":  # ``ask:``: magi parks the run on the question; stop here
        turn.say("I asked which storage backend to use and stopped, as magi said to.")
        return 0
    if persona == "noop":
        turn.say(
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
    if persona == "secret":  # the right fix, and a token committed beside it (added then
        # deleted: the history a push publishes still holds it)
        token = "ghp_" + "Zq8vR2mN4kT7wY1xC5bH9jL3pD6fS0aE2gU4"  # made up; shaped like one
        (cwd / "deploy.env").write_text(f"GITHUB_TOKEN={token}\n")
        turn.run(["git", "add", "-A"], check=True)
        turn.run(["git", "-c", "user.name=dev", "-c", "user.email=dev@example.invalid",
                  "commit", "-q", "-m", "deploy settings"], check=True)  # fmt: skip
        (cwd / "deploy.env").unlink()
    if persona != "uncommitted":
        msg = "Fix textstats word splitting"
        if persona == "leaky":
            msg += "\n\nCo-Authored-By: Claude <noreply@anthropic.com>"
        turn.run(["git", "add", "-A"], check=True)
        turn.run(
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
    turn.say("Changed textstats.py and ran the unit tests.")
    return 0


def judge(turn: Turn, persona: str) -> int:
    prompt = turn.prompt
    node = turn.env.get("MAGI_NODE", "judge")
    session = turn.env.get("MAGI_SESSION") or str(uuid.uuid4())
    turn.warn(f"MAGI-SESSION: {session}")
    if persona == "quota":
        turn.warn("Error: Too Many Requests (rate limit)")
        return 75
    state_path = _state_file(turn, session)
    state = json.loads(state_path.read_text()) if state_path.exists() else {}
    # A judge with no live conversation is sent its judging context again: it ranks anew.
    if (node == "judge" or "evidence" not in state) and _labels(prompt):
        passed, size = _passed(prompt), _patch_size(prompt)
        labels = _labels(prompt)
        evidence = sorted(labels, key=lambda x: (not passed.get(x, False), size.get(x, 0), x))
        minimal = sorted(labels, key=lambda x: (size.get(x, 0), x))
        # contrary: the candidates the evidence puts last, first (a judge that splits the
        # panel whatever the seed drew), until an argument about verification persuades it.
        current = {"minimal": minimal, "contrary": evidence[::-1]}.get(persona, evidence)
        state.update(evidence=evidence, current=current)
        state_path.write_text(json.dumps(state))
    if persona == "malformed" or (persona == "reask" and not state.get("reasked")):
        state["reasked"] = True
        state_path.write_text(json.dumps(state))
        turn.say("I prefer the first one. {ranking: A}")
        return 0
    if node == "judge":
        why = (
            "the smallest change is the safest"
            if persona == "minimal"
            else "verification results first, then the smaller patch"
        )
        if turn.huge:
            why += " " + "x" * 3_000_000 + "\x00\x1b[2J"
        turn.say(_answer({"ranking": state["current"], "rationale": why}, "My ranking."))
    elif node == "deliberate":
        argued = " ".join(
            body for (kind, _), body in _blocks(prompt).items() if kind == "argument"
        ).lower()
        # Persuaded only by what another judge argued, never by magi's own prompt text.
        if persona in ("minimal", "contrary") and "verification" in argued:
            state["current"] = state["evidence"]
            arg = "Persuaded: a candidate that fails its tests cannot win on size."
        else:
            arg = f"{state['current'][0]} is the only one whose verification passed."
        state_path.write_text(json.dumps(state))
        turn.say(_answer({"ranking": state["current"], "argument": arg}))
    else:
        turn.say(_answer({"vote": state["current"][0], "rationale": "as argued"}))
    return 0


def _test_hooks(turn: Turn, persona: str) -> str:
    """Apply the test modifiers; returns the persona to act as."""
    folder = turn.env.get("MAGI_SCRIPTED_DIR")
    if not folder:
        return persona
    d = Path(folder)
    entry = {
        "persona": persona,
        "node": turn.env.get("MAGI_NODE"),
        "seat": turn.env.get("MAGI_SEAT"),
        "pid": os.getpid(),
    }
    with (d / "calls.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
    return _modifiers(turn, persona, d)


def _hang(marker: Path) -> None:
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        while True:  # until the test kills magi and this process
            time.sleep(3600)


def _modifiers(turn: Turn, persona: str, d: Path) -> str:
    seat, node = turn.env.get("MAGI_SEAT"), turn.env.get("MAGI_NODE")
    mod, _, rest = persona.partition(":")
    if mod == "hang-once":
        _hang(d / f"hung-{seat}")
        return _modifiers(turn, rest, d)
    if mod.startswith("hang-at-"):
        if node == mod.removeprefix("hang-at-"):
            _hang(d / f"hung-{seat}-{node}")
        return _modifiers(turn, rest, d)
    if mod == "quota-until-unlock":
        return _modifiers(turn, rest, d) if (d / "unlock").exists() else "quota"
    if mod == "wait-for-unlock":
        # A seat still out: it says so (``waiting-<seat>``), then works once ``unlock`` exists.
        (d / f"waiting-{seat}").write_text(str(os.getpid()))
        while not (d / "unlock").exists():
            time.sleep(0.05)  # the agent's own pace, not a test's synchronisation
        return _modifiers(turn, rest, d)
    for kind in ("quota", "crash"):
        if mod.startswith(f"{kind}-at-"):
            locked = node == mod.removeprefix(f"{kind}-at-") and not (d / "unlock").exists()
            return kind if locked else _modifiers(turn, rest, d)
    if mod == "escape":
        _escape(d / f"escaped-{seat}")
        return _modifiers(turn, rest, d)
    if mod == "move-branches":
        if node != "implement":
            _move_branches(turn)
        return _modifiers(turn, rest, d)
    if mod == "huge":
        turn.huge = True
        return _modifiers(turn, rest, d)
    if mod == "ask" and node == "implement":
        return _ask(turn) or _modifiers(turn, rest, d)
    return persona


ANSWERED = "# The answer to your question"


def _ask(turn: Turn) -> str:
    """``ask:<p>``: asks a person which backend (``magi ask``) before any work; a turn that
    brings the answer writes it to ``backend.txt`` and acts as <p>. Returns "asked" (end the
    turn) when ``magi ask`` said to stop, else "" (act on)."""
    if ANSWERED in turn.prompt:
        quoted = [ln[2:] for ln in turn.prompt.splitlines() if ln.startswith("> ")]
        (turn.cwd / "backend.txt").write_text("\n".join(quoted) + "\n")
        return ""
    argv = ["magi", "ask", "--summary", "Which storage backend?", "--choice", "SQLite"]
    got = turn.run([*argv, "--choice", "Redis"], capture_output=True)
    (turn.cwd / "asked.txt").write_text(got.stdout)
    if "end your turn here" in got.stdout:
        return "asked"
    (turn.cwd / "backend.txt").write_text(got.stdout)
    return ""


def _escape(pidfile: Path) -> None:
    """A grandchild in its own session: out of reach of the turn's process-group kill."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            pidfile.write_text(str(os.getpid()))
            os.closerange(0, 3)
            time.sleep(3600)
        os._exit(0)


def _move_branches(turn: Turn) -> None:
    """Every magi branch to a commit nobody judged (a read-only seat ignoring the rule)."""
    git = ["git", "-c", "user.name=x", "-c", "user.email=x@y"]
    tree = turn.run([*git, "write-tree"], capture_output=True).stdout.strip()
    sha = turn.run(
        [*git, "commit-tree", "-p", "HEAD", "-m", "unjudged", tree], capture_output=True
    ).stdout.strip()
    refs = turn.run(
        ["git", "for-each-ref", "--format=%(refname)", "refs/heads/magi/"], capture_output=True
    ).stdout.split()
    for ref in refs:
        turn.run(["git", "update-ref", ref, sha], check=False)


def _fix_override(turn: Turn) -> str:
    """A test's ``fix-as`` file in MAGI_SCRIPTED_DIR names the fix mode (e.g. same-tree)."""
    d = turn.env.get("MAGI_SCRIPTED_DIR")
    path = Path(d) / "fix-as" if d else None
    return path.read_text().strip() if path is not None and path.is_file() else ""


def act(turn: Turn, persona: str) -> int:
    """One turn of ``persona``; the exit code a process would exit with."""
    persona, _, mode = _test_hooks(turn, persona).partition("+")
    node = turn.env.get("MAGI_NODE", "implement")
    if persona == "crash":
        turn.warn("Segmentation fault (scripted)")
        return 139
    if persona == "quota" and node in ("review", "fix"):
        turn.warn("You've hit your usage limit (scripted)")
        return 75
    if node == "review":
        return scripted_review.review(turn, mode or "clean")
    if node == "fix":
        return scripted_review.fix(turn, _fix_override(turn) or mode or "commit")
    if node == "implement":
        return implement(turn, persona)
    return judge(turn, persona)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m magi.demo.scripted <persona>", file=sys.stderr)
        return 2
    return act(Turn.of_process(), args[0])


if __name__ == "__main__":
    sys.exit(main())
