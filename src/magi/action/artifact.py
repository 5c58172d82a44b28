"""The agents job's result, as a directory the workflow uploads and the publish job reads.

    manifest.json      run id, issue, base, {label: head} of the bundled branches
    run.json           the run record, every string through the posting gate
    artifacts/<name>   prompts and replies, gated the same way (each capped)
    candidates.bundle  the viable candidate branches (absent when nothing is viable)
    sealed.txt         stopped before its tally: the run as the runner holds it, sealed
                       with the runner key (``magi.action.seal``); absent otherwise
    panel.sealed       a judges' wave forked: the run with no author in it, sealed with
                       the panel key, for the wave's seat jobs (``agents_job.panel``)

Everything in it is written by magi but lived on a disk the agents could write, so the
reader validates it strictly (``extra="forbid"``) and ``magi.action.bundle`` checks the
bundle against the checkout before anything is pushed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from magi.action.seal import PANEL, SEALED, parse_sealed
from magi.core.threads.posting import Policy, gate, gate_json
from magi.errors import ActionError, TamperedArtifact
from magi.model.config import AgentConfig
from magi.model.run import Run
from magi.report import revealed
from magi.report.before_tally import public_copy, published_before_tally
from magi.state.migrations import migrate
from magi.state.store import Store

__all__ = [
    "Artifact",
    "Manifest",
    "policy_for",
    "read_artifact",
    "read_refusal",
    "write_artifact",
    "write_refusal",
]

MANIFEST = "manifest.json"
FORK_SEALED = "fork.sealed"  # a fork's seat job's result (agents_job.fork), sealed
RUN = "run.json"
BUNDLE = "candidates.bundle"
REFUSAL = "refused.json"
ARTIFACTS = "artifacts"
ARTIFACT_MAX = 1_000_000  # characters kept of one prompt or reply


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = Field(1, alias="schema")
    run: str
    issue: int
    base_sha: str
    heads: dict[str, str] = Field(default_factory=dict)
    # A fork's seat job: the label set it worked for (its result is FORK_SEALED, not the
    # record: publish stores only that). Empty for every other artifact.
    fork: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Artifact:
    manifest: Manifest
    run: Run
    bundle: Path | None
    files: dict[str, str]  # artifacts/<name> -> text, already gated
    sealed: str | None = None  # its form checked; only runners holding the key open it
    panel: str | None = None  # a judges' forked wave's panel (agents_job.panel), the same


def policy_for(
    run: Run, store: Store | None = None, roster: Sequence[AgentConfig] | None = None
) -> Policy:
    """The posting policy of one run: its roster, whether authors are out, its local roots.
    ``roster``: the names to hide in place of the run's own (publish gives the default
    branch's: an artifact's config is not trusted to say which names to hide)."""
    roster = run.config.agents if roster is None else list(roster)
    roots = [(run.repo, ".")]
    if run.worktree_root:
        roots.append((run.worktree_root, "<worktrees>"))
    if store is not None:
        roots.append((str(store.home), "<magi home>"))
    return Policy(roster=roster, revealed=revealed(run), roots=roots)


def write_artifact(
    run: Run,
    store: Store,
    out: Path,
    heads: dict[str, str],
    issue: int,
    fork: list[str] | None = None,
) -> None:
    """Write the gated record, its artifacts and the manifest into ``out`` (bundle apart)."""
    policy = policy_for(run, store)
    out.mkdir(parents=True, exist_ok=True)
    # Before the tally the artifact is public and its record unlinkable from the roster
    # (magi.report.before_tally: why hiding the names is not enough).
    shown = run if policy.revealed else public_copy(run)
    record = gate_json(shown.model_dump(mode="json", by_alias=True), policy)
    (out / RUN).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    src = store.run_dir(run.id) / ARTIFACTS
    dst = out / ARTIFACTS
    dst.mkdir(exist_ok=True)
    if src.is_dir():
        for path in sorted(src.iterdir()):
            if not policy.revealed and not published_before_tally(path.name, run):
                continue
            if path.is_file() and not path.is_symlink():
                text = path.read_text(encoding="utf-8", errors="replace")[:ARTIFACT_MAX]
                unlimited = Policy(policy.roster, policy.revealed, policy.roots, limit=1 << 62)
                (dst / path.name).write_text(gate(text, unlimited).text, encoding="utf-8")
    manifest = Manifest(
        run=run.id, issue=issue, base_sha=run.base_sha or "", heads=heads, fork=fork or []
    )
    (out / MANIFEST).write_text(
        manifest.model_dump_json(by_alias=True, indent=2) + "\n", encoding="utf-8"
    )


def read_artifact(where: Path, run_id: str | None = None) -> Artifact:
    """The artifact in ``where``, validated; TamperedArtifact when it is not compete's."""
    try:
        manifest = Manifest.model_validate_json((where / MANIFEST).read_text(encoding="utf-8"))
        data = json.loads((where / RUN).read_text(encoding="utf-8"))
        run = Run.model_validate(migrate(data))
    except FileNotFoundError as e:
        raise TamperedArtifact(f"the artifact has no {Path(str(e.filename)).name}") from None
    except (ValidationError, ValueError) as e:
        raise TamperedArtifact(f"the artifact's record does not validate: {e}") from None
    if manifest.run != run.id or (run_id and run_id != run.id):
        raise TamperedArtifact(f"the artifact is for run {run.id}, not {run_id or manifest.run}")
    if manifest.base_sha != (run.base_sha or ""):
        raise TamperedArtifact("the manifest's base is not the record's")
    files: dict[str, str] = {}
    art = where / ARTIFACTS
    if art.is_dir():
        for path in sorted(art.iterdir()):
            if path.is_file() and not path.is_symlink() and not path.name.startswith("."):
                files[path.name] = path.read_text(encoding="utf-8", errors="replace")
    bundle = where / BUNDLE
    if bundle.is_symlink():
        raise TamperedArtifact("the bundle is a symbolic link")
    return Artifact(
        manifest,
        run,
        bundle if bundle.is_file() else None,
        files,
        _sealed(where, SEALED),
        _sealed(where, PANEL),
    )


def _sealed(where: Path, name: str) -> str | None:
    path = where / name
    if path.is_symlink():
        raise TamperedArtifact(f"{name} is a symbolic link")
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="ascii")
        return parse_sealed(text, f"the artifact's {name}").text
    except (UnicodeDecodeError, ActionError) as e:
        raise TamperedArtifact(
            e.message if isinstance(e, ActionError) else f"{name} is not text"
        ) from None


def write_refusal(out: Path, issue: int, message: str, *, named: bool = False) -> None:
    """Why compete did not run (its message carries the fix), for publish to say.

    ``named``: nothing was seated yet (preflight refused), so no author can be told from it
    and magi's own fix keeps the CLI it names (`claude auth login`, not `[redacted] auth
    login`); otherwise author names are hidden as in any text before the tally."""
    out.mkdir(parents=True, exist_ok=True)
    text = gate(message, Policy(limit=4000, revealed=named)).text
    (out / REFUSAL).write_text(json.dumps({"issue": issue, "message": text}) + "\n")


def read_refusal(where: Path, issue: int, job: str = "compete") -> str | None:
    """``job``'s refusal for ``issue``, if it left one (already gated when written)."""
    try:
        data = json.loads((where / REFUSAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("issue") != issue:
        return None
    message = data.get("message")
    return f"{job} refused to start: {message}" if isinstance(message, str) else None
