"""The candidate branches as a git bundle: written by compete, checked by publish.

The bundle crosses from the agents job (where agents ran as the runner's user and could
have rewritten anything on disk) to the publish job (which holds a write token), so publish
trusts nothing in it: every ref must be ``refs/heads/magi/<run>/<label>`` for a label of the
run, appear once, match the manifest, and every commit it brings must descend from the
recorded base (``git rev-list --ancestry-path``), which must itself be in the checkout.
Anything else refuses the whole artifact.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from magi.errors import TamperedArtifact
from magi.git.repo import Git
from magi.model.run import Run

__all__ = ["INCOMING", "check_bundle", "create_bundle", "viable"]

INCOMING = "refs/magi-incoming"  # where publish fetches a checked bundle's heads
_SHA = re.compile(r"^[0-9a-f]{40}$")


def viable(run: Run) -> list[str]:
    """Labels whose branch is worth pushing: produced, not disqualified, with a head."""
    return [
        c.label
        for c in run.candidates
        if c.produced and c.head and not c.disqualified and not c.verified_noop
    ]


def create_bundle(git: Git, run: Run, path: Path) -> dict[str, str]:
    """Bundle the viable branches (base excluded); {label: head}. Nothing viable: no file."""
    heads: dict[str, str] = {}
    for label in viable(run):
        branch = f"magi/{run.id}/{label}"
        if git.ref_exists(f"refs/heads/{branch}"):
            heads[label] = git.rev_parse(f"refs/heads/{branch}")
    if not heads or not run.base_sha:
        return {}
    refs = [f"refs/heads/magi/{run.id}/{label}" for label in heads]
    git.run("bundle", "create", "--quiet", str(path), *refs, f"^{run.base_sha}")
    return heads


def _heads(git: Git, bundle: Path) -> list[tuple[str, str]]:
    out = git.run("bundle", "list-heads", str(bundle))
    pairs: list[tuple[str, str]] = []
    for line in out.splitlines():
        sha, _, ref = line.strip().partition(" ")
        pairs.append((sha, ref))
    return pairs


def _prerequisites(bundle: Path) -> list[str]:
    # The header is text up to the first blank line: "-<sha> <comment>" lines are what
    # the receiving repository must already have.
    data = bundle.read_bytes()
    header = data.split(b"\n\n", 1)[0].decode("utf-8", "replace")
    return [line[1:41] for line in header.splitlines()[1:] if line.startswith("-")]


def check_bundle(git: Git, run: Run, bundle: Path, manifest: Mapping[str, str]) -> dict[str, str]:
    """Fetch a checked bundle's heads under ``INCOMING``; {label: head}, or TamperedArtifact."""
    base = run.base_sha or ""
    if not _SHA.match(base) or not git.ref_exists(f"{base}^{{commit}}"):
        raise TamperedArtifact(f"the recorded base {base[:12] or '(none)'} is not in this checkout")
    allowed = set(viable(run))
    heads: dict[str, str] = {}
    for sha, ref in _heads(git, bundle):
        m = re.fullmatch(rf"refs/heads/magi/{re.escape(run.id)}/([A-Z])", ref)
        if not m or not _SHA.match(sha):
            raise TamperedArtifact(f"the bundle carries {ref!r}, which magi never bundles")
        label = m.group(1)
        if label not in allowed:
            raise TamperedArtifact(f"the bundle carries {ref}, not a viable candidate of the run")
        if label in heads:
            raise TamperedArtifact(f"the bundle carries {ref} twice")
        heads[label] = sha
    if dict(manifest) != heads:
        raise TamperedArtifact("the bundle's branches do not match the artifact's manifest")
    for pre in _prerequisites(bundle):
        if not _SHA.match(pre) or not git.ref_exists(f"{pre}^{{commit}}"):
            raise TamperedArtifact(f"the bundle needs {pre[:12]}, which this checkout lacks")
        if git.run("merge-base", pre, base).strip() != pre:
            raise TamperedArtifact(f"the bundle builds on {pre[:12]}, outside the base's history")
    git.run("bundle", "verify", "--quiet", str(bundle))
    for label, sha in heads.items():
        incoming = f"{INCOMING}/{run.id}/{label}"
        git.run(
            "fetch",
            "--quiet",
            "--no-tags",
            str(bundle),
            f"+refs/heads/magi/{run.id}/{label}:{incoming}",
        )
        if git.rev_parse(incoming) != sha:
            raise TamperedArtifact(f"candidate {label} changed while it was fetched")
        brought = git.run("rev-list", f"{base}..{sha}").split()
        descended = git.run("rev-list", "--ancestry-path", f"{base}..{sha}").split()
        if not brought or set(brought) != set(descended):
            git.run("update-ref", "-d", incoming)
            raise TamperedArtifact(
                f"candidate {label}'s commits do not all descend from the recorded base"
            )
    return heads
