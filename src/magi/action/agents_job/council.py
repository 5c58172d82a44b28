"""``magi action council``: the agents job of ``/magi council`` and ``/magi review``. No credential.

The read-only task job before it wrote the thread into an input directory: ``comment.json``
(the command comment, read by id), ``issue.json``, and for a pull request ``pull.json`` and
``pull.diff``. Here the question is taken from the comment (never from a workflow input),
the council runs (``magi.council.session.start``; a review's evidence is the diff), and the
record, gated, is written with a manifest for the publish job.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from magi.action.agents_job.compete import refuse_tokens
from magi.core.council.surface import (
    command_of,
    mode_of,
    question_of,
    review_question,
    risk_of,
)
from magi.core.threads.commands import Verb
from magi.core.threads.posting import Policy, gate_json
from magi.council.asker import Asker
from magi.council.render import posting_policy
from magi.council.session import start
from magi.errors import ActionError
from magi.model.config import Config
from magi.state.council import CouncilRun
from magi.state.store import Store

__all__ = ["COMMANDS", "RECORD", "Inputs", "Manifest", "convene", "read_inputs"]

COMMANDS = {"council": Verb.COUNCIL, "review": Verb.REVIEW}
RECORD = "council.json"
MANIFEST = "council-manifest.json"


class Manifest(BaseModel):
    """What the agents job says its artifact is: checked against the task job's inputs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = Field(1, alias="schema")
    run: str
    issue: int
    comment: int
    command: str


@dataclass(frozen=True)
class Inputs:
    """The thread as the read-only task job fetched it."""

    issue: int
    comment: int
    command: str
    question: str
    risk: str | None
    diff: str | None  # a pull request's diff (review)
    head_sha: str | None  # a pull request's head: where the check run goes
    mode: str = "decision"  # decision | research (/magi council --research) | review


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ActionError(f"cannot read {path.name} from the task job: {e}") from None


def read_inputs(where: Path, *, issue: int, comment: int, command: str) -> Inputs:
    """The question, the evidence and the head, from the task job's files; refused if amiss."""
    verb = COMMANDS.get(command)
    if verb is None:
        raise ActionError(f"unknown council command {command!r} (council or review)")
    data = _json(where / "comment.json")
    if not isinstance(data, dict) or data.get("id") != comment:
        raise ActionError(f"comment.json is not comment {comment}")
    if not str(data.get("issue_url", "")).endswith(f"/issues/{issue}"):
        raise ActionError(f"comment {comment} is not on #{issue}")
    body = str(data.get("body") or "")
    found = command_of(body, verb)
    if found is None:
        raise ActionError(f"comment {comment} holds no `/magi {command}` command")
    pull = _json(where / "pull.json") if (where / "pull.json").is_file() else None
    if pull is not None and (not isinstance(pull, dict) or pull.get("number") != issue):
        raise ActionError(f"pull.json is not pull request #{issue}")
    head = str(pull["head"]["sha"]) if pull else None
    diff = None
    if verb is Verb.REVIEW:
        if pull is None or not (where / "pull.diff").is_file():
            raise ActionError(f"/magi review needs pull request #{issue}'s diff (pull.diff)")
        diff = (where / "pull.diff").read_text(encoding="utf-8", errors="replace")
        question = review_question(issue, str(pull.get("title") or ""))
    else:
        question = question_of(body)
        if not question.strip():
            raise ActionError(f"comment {comment} asks no question after `/magi council`")
    mode = "review" if verb is Verb.REVIEW else mode_of(body)
    return Inputs(issue, comment, command, question, risk_of(found), diff, head, mode)


def convene(
    *,
    cwd: Path,
    inputs: Inputs,
    store: Store,
    out: Path,
    config: Config,
    environ: Mapping[str, str],
    missing: Mapping[str, str] | None = None,
    asker: Asker | None = None,
) -> CouncilRun:
    """Run the council for ``inputs`` and write the gated record + manifest into ``out``."""
    refuse_tokens(environ)
    review = inputs.command == "review"
    evidence = [("diff", f"pull-{inputs.issue}.diff", inputs.diff or "")] if review else []
    rec = start(
        store,
        question=inputs.question,
        source=f"issue:{inputs.issue}",
        mode=inputs.mode,
        config=config,
        missing=missing,
        evidence=evidence,
        risk=inputs.risk,
        cwd=cwd,
        asker=asker,
        environ=environ,
    )
    write(rec, store, out, inputs)
    return rec


def policy_of(rec: CouncilRun, store: Store | None = None) -> Policy:
    """The posting policy of a council: agents may be named once its verdict exists."""
    roots = ((str(store.home), "<magi home>"),) if store is not None else ()
    return posting_policy(rec, roots)


def write(rec: CouncilRun, store: Store, out: Path, inputs: Inputs) -> None:
    out.mkdir(parents=True, exist_ok=True)
    record = gate_json(rec.model_dump(mode="json", by_alias=True), policy_of(rec, store))
    (out / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    manifest = Manifest(
        run=rec.id, issue=inputs.issue, comment=inputs.comment, command=inputs.command
    )
    (out / MANIFEST).write_text(manifest.model_dump_json(by_alias=True) + "\n", encoding="utf-8")
