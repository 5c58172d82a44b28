"""The workflow ``magi init --github`` writes: magi's template, every ``uses:`` pinned.

The template (``magi/templates/workflow.yml``, which is also ``workflows/magi.yml`` in magi's
tree) names ``MAGI_SOURCE/magi@000...0`` where the action is used: no repository can have
that name (a GitHub owner has no ``_``), so an unrendered copy fails loudly instead of
running somebody else's code. Rendering replaces each with ``OWNER/REPO@SHA`` and says so
in the header.

The agents jobs run on ``inputs.runner-labels``, which the App fills from the repository's
config. A dispatch without it (a person's "Run workflow", a run no App started) falls back
to the labels written here: rendering puts the repository's own there, so the config is
the one place they are named: a competition's first stage on ``[github] runner_labels``
(its seats whose agents are logged in elsewhere are handed on), a council's, a review's
and a landing's where every agent of the roster can run.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from importlib.resources import files

from magi.config.source import Source
from magi.model.config import RUNNER_LABEL  # nothing that could leave the quoted JSON

__all__ = [
    "DEFAULT_LABELS",
    "PLACEHOLDER",
    "declared_inputs",
    "edited",
    "expression_string",
    "magi_pins",
    "refused_inputs",
    "render_workflow",
    "serverless",
    "stamp",
    "template",
    "workflow_problems",
]

PLACEHOLDER = "MAGI_SOURCE/magi@" + "0" * 40
DEFAULT_LABELS = ("self-hosted", "magi")
# The fallback of every agents job's runs-on, as the template writes it.
_FALLBACK = "inputs.runner-labels || '" + json.dumps(list(DEFAULT_LABELS)) + "'"
# ... and the competition's (its first stage), spelled apart so that each is replaced alone.
_FIRST = "inputs.runner-labels || '" + json.dumps(list(DEFAULT_LABELS), separators=(",", ":")) + "'"
_DEFAULT_INPUT = "default: '" + json.dumps(list(DEFAULT_LABELS)) + "'"
_PIN_LINES = re.compile(r"^# PIN: .*\n", re.M)
# The triggers the receive job runs on (``  #| issues:``): on without a receiver.
_SERVERLESS = re.compile(r"^(\s*)#\| ", re.M)
# The ``workflow_run`` trigger on the repository's CI (``  #~ workflow_run:``): on without a
# receiver when there is CI to name, its ``workflows: [CI]`` the names given.
_CI = re.compile(r"^(\s*)#~ ", re.M)
_CI_NAMES = "  #~   workflows: [CI]\n"
# The receive job's label events: the `magi` label's alone, or ``[github] label``'s.
_LABEL = "github.event.label.name == 'magi'"
# The last line of a workflow magi wrote: the digest of every line above it, so that
# `magi init --github --force` can tell a file magi wrote from one a person edited since.
_STAMP = re.compile(
    r"^# magi init --github wrote this file; sha256 of the lines above: ([0-9a-f]{64})\n?\Z", re.M
)


def template() -> str:
    """The workflow as magi ships it."""
    return files("magi").joinpath("templates/workflow.yml").read_text(encoding="utf-8")


def render_workflow(
    source: Source,
    runner_labels: Sequence[str] = DEFAULT_LABELS,
    first_stage: Sequence[str] | None = None,
    *,
    receiver: bool = False,
    label: str = "magi",
    ci: Sequence[str] = (),
) -> str:
    """The template with every ``uses:`` of the magi action pinned to ``source``, and
    ``runner_labels`` as the agents jobs' labels when a dispatch names none (``first_stage``
    the competition's, by default the same). Without a ``receiver`` the workflow's own
    triggers are on (its receive job runs the App's handlers, on ``label``'s events, and
    on each of the ``ci`` workflows completing); with one they stay commented, since the
    receiver hears the same events."""
    pin = source.pin
    if pin is None:
        raise ValueError("the source names no repository: pass --source OWNER/REPO@SHA")
    first = list(runner_labels if first_stage is None else first_stage)
    for labels in (runner_labels, first):
        bad = [label for label in labels if not RUNNER_LABEL.fullmatch(label)]
        if not labels or bad:
            raise ValueError(f"[github] runner_labels: not runner labels: {bad or 'none given'}")
    text = template()
    given = "'" + json.dumps(list(runner_labels)) + "'"
    text = text.replace(_FALLBACK, "inputs.runner-labels || " + given)
    text = text.replace(_FIRST, "inputs.runner-labels || '" + json.dumps(first) + "'")
    text = text.replace(_DEFAULT_INPUT, "default: " + given)
    header = (
        f"# Written by `magi init --github`: every `uses:` of magi's action below is pinned to\n"
        f"# {pin} (the magi that wrote it). To move to another magi, run it again.\n"
    )
    text = _PIN_LINES.sub("", text, count=0)
    text = _SERVERLESS.sub(r"\1" if not receiver else r"\1# ", text)
    text = text.replace(_LABEL, f"github.event.label.name == {expression_string(label)}")
    text = _triggered_by(text, [] if receiver else list(ci))
    text = text.replace("\nname: magi\n", "\n" + header + "name: magi\n", 1)
    return stamp(text.replace(PLACEHOLDER, pin))


def expression_string(value: str) -> str:
    """``value`` as a string literal of a GitHub expression (a quote doubled), refused when
    it could leave the line it is written on or the expression it is written in.
    https://docs.github.com/en/actions/reference/workflows-and-actions/expressions#literals"""
    if not value.strip() or any(c in value for c in "\n\r\t\0"):
        raise ValueError(f"[github] label: not a label name: {value!r}")
    if "${{" in value or "}}" in value:
        # inside an `if:`, either turns the expression into a template string (always true)
        raise ValueError(f"[github] label: {value!r} must not contain '${{{{' or '}}}}'")
    return "'" + value.replace("'", "''") + "'"


def _triggered_by(text: str, ci: list[str]) -> str:
    """The ``workflow_run`` trigger on for the CI workflows ``ci`` (each a JSON string, which
    YAML reads as written), or left commented when there are none."""
    bad = [name for name in ci if not name.strip() or any(c in name for c in "\n\r\0")]
    if bad:
        raise ValueError(f"--ci: not a workflow name: {bad}")
    if not ci:
        return _CI.sub(r"\1# ", text)
    names = "[" + ", ".join(json.dumps(name) for name in ci) + "]"
    return _CI.sub(r"\1", text.replace(_CI_NAMES, f"  #~   workflows: {names}\n"))


def serverless(text: str) -> bool:
    """Whether the workflow ``text`` runs on its own triggers (its receive job in use)."""
    return bool(re.search(r"^  issue_comment:", text, re.M))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stamp(text: str) -> str:
    """``text`` with the line that says magi wrote it, as it is."""
    body = text if text.endswith("\n") else text + "\n"
    return (
        f"{body}# magi init --github wrote this file; sha256 of the lines above: {_digest(body)}\n"
    )


def edited(text: str) -> bool | None:
    """Whether a workflow magi wrote was changed since (None: no stamp, so an older magi
    or a person wrote it, and nobody can say what is whose)."""
    found = _STAMP.search(text)
    if found is None:
        return None
    return _digest(text[: found.start()]) != found.group(1)


def refused_inputs(message: str) -> list[str]:
    """The inputs GitHub's 422 names: ``Unexpected inputs provided: ["a", "b"]``, its answer
    to a dispatch whose inputs the workflow does not declare (an older magi.yml).
    https://docs.github.com/en/rest/actions/workflows#create-a-workflow-dispatch-event"""
    found = re.search(r"Unexpected inputs provided: (\[[^\]]*\])", message)
    if found is None:
        return []
    try:
        names = json.loads(found.group(1))
    except ValueError:
        return []
    return [str(n) for n in names] if isinstance(names, list) else []


_USES = re.compile(r"^\s*(?:- )?uses:\s*(\S+)", re.M)


def magi_pins(text: str) -> set[str]:
    """Every ``OWNER/REPO@REF`` a workflow uses that is not one of GitHub's ``actions/``:
    magi's action, as ``render_workflow`` pins it."""
    return {u for u in _USES.findall(text) if not u.startswith(("actions/", "./"))}


def declared_inputs(text: str) -> set[str] | None:
    """The ``workflow_dispatch`` inputs a workflow declares (None: it has no
    ``workflow_dispatch``, so the App cannot start it). Read as magi's template writes
    YAML (two spaces a level), not as a YAML parser would any file."""
    lines = text.splitlines()
    try:
        start = next(
            i
            for i, line in enumerate(lines)
            if re.fullmatch(r"  workflow_dispatch:\s*(#.*)?", line)
        )
    except StopIteration:
        return None
    found: set[str] = set()
    within = False
    for line in lines[start + 1 :]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= 2:
            break
        if indent == 4:
            within = line.strip().startswith("inputs:")
        elif indent == 6 and within and (m := re.match(r"\s*([A-Za-z_][\w-]*):", line)):
            found.add(m.group(1))
    return found


REWRITE = "run `magi init --github --force` in the repository and commit the workflow"


def _label_problem(text: str, where: str, label: str | None) -> list[tuple[str, str]]:
    """A workflow on its own triggers whose receive job waits for another label than
    ``[github] label``: no label event of the config's would start anything."""
    if label is None or not serverless(text):
        return []
    found = re.search(r"github\.event\.label\.name == '((?:[^']|'')*)'", text)
    if found is None or found.group(1).replace("''", "'") == label:
        return []
    return [
        (
            "error",
            f"{where}'s receive job runs on the label `{found.group(1)}`, and [github] label "
            f"is `{label}`: labeling an issue `{label}` starts nothing; {REWRITE}",
        )
    ]


def workflow_problems(
    text: str, name: str, pin: str | None, label: str | None = None
) -> list[tuple[str, str]]:
    """What stops or misleads a run in the workflow ``text`` (``.github/workflows/name``),
    against this magi's template and its pin (None: unknown), and ``[github] label`` when
    given: ``(severity, message)``."""
    where = f".github/workflows/{name}"
    out: list[tuple[str, str]] = _label_problem(text, where, label)
    pins = magi_pins(text)
    if PLACEHOLDER in pins:
        out.append(
            (
                "error",
                f"{where} is magi's template copied as is: its `uses:` name no "
                f"repository, so every job fails at Set up job; {REWRITE}",
            )
        )
    declared = declared_inputs(text)
    if declared is None:
        out.append(
            ("error", f"{where} has no workflow_dispatch: the App cannot start it; {REWRITE}")
        )
        return out
    missing = sorted((declared_inputs(template()) or set()) - declared)
    if missing:
        names = ", ".join(missing)
        out.append(
            (
                "error",
                f"{where} is older than this magi: it lacks the inputs {names}, "
                "and GitHub refuses a dispatch that sends them (Unexpected inputs provided); "
                + REWRITE,
            )
        )
    others = sorted(pins - {PLACEHOLDER})
    if pin is not None and others and others != [pin]:
        out.append(
            (
                "warning",
                f"{where} runs magi {', '.join(others)}, this magi is {pin}: "
                f"{REWRITE} to run this one",
            )
        )
    if edited(text):
        out.append(
            (
                "warning",
                f"{where} was edited since magi wrote it: "
                "`magi init --github --force` keeps your copy as magi.yml.old",
            )
        )
    return out
