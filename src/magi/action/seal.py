"""The runner key: a run stopped before its tally, sealed so any runner of the pool carries it on.

Before the tally everything a runner publishes is readable by the repository's readers, so
the published record ties no candidate to an agent (``magi.report.before_tally``) and no
candidate's code leaves the runner. That is exactly what another runner needs to carry the
run on. So the agents job also seals the run as it holds it (the whole record, its
artifacts, a bundle of the candidates' branches) with a key every runner of the pool holds
and nothing else does: ``$MAGI_HOME/runner.key``, 32 random bytes, mode 0600, hidden from
every jailed seat with the rest of ``$MAGI_HOME``. publish stores the sealed text beside
the public record in ``refs/magi/runs/<id>``; a runner that lacks the run and holds the same
key opens it and goes on from the recorded node (``agents_job.adopt``).

AES-256-GCM, the run id, issue and base bound in as associated data: a sealed copy opens
only as the run it was made for, and any change to it fails the open. What the sealed text
tells a reader without the key: its length.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import secrets
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from magi.errors import ActionError
from magi.git.repo import Git
from magi.model.run import Candidate, Run
from magi.state.runner_key import KEY_FILE, RunnerKey, load_key, new_key, panel_key
from magi.state.store import RECORD, Store

__all__ = [
    "KEY_FILE",
    "PANEL",
    "SEALED",
    "SEALED_MAX",
    "RunnerKey",
    "Sealed",
    "load_key",
    "members_of",
    "new_key",
    "open_sealed",
    "panel_key",
    "parse_sealed",
    "seal",
]

SEALED = "sealed.txt"  # in the artifact and in the record ref
# A judges' wave forked: the panel its seat jobs work from (``agents_job.panel``), sealed
# with the panel key, in the artifact and in the record ref beside SEALED.
PANEL = "panel.sealed"
SEALED_MAX = 64 * 1024 * 1024  # characters of sealed text publish stores
_HEADER = "magi-sealed 1"
_NONCE = 12
_LINE = re.compile(rf"{_HEADER} key=([0-9a-f]{{16}})\n([A-Za-z0-9+/=]+)\n")
# The members a sealed run may hold: its record, its flat artifacts folder, the bundle.
_MEMBER = re.compile(
    r"run\.json|fork\.json|candidates\.bundle|artifacts/[A-Za-z0-9][A-Za-z0-9._-]*"
)
# What a sealed text is, bound in with the run: a whole run (``run.json``), or what a fork's
# seat job did (``fork.json``: agents_job.fork), so that neither can stand for the other.
# A panel (``report.before_tally.panel_copy``) is the run as a judge's seat job on
# another runner may hold it: sealed with the panel key, it opens as nothing else.
KINDS = {"run": "run.json", "fork": "fork.json", "panel": "run.json"}


BUNDLE = "candidates.bundle"


def members_of(run: Run, store: Store, git: Git) -> dict[str, bytes]:
    """What another runner needs of ``run``: its record as this store holds it, its
    artifacts, and every candidate branch that moved off the base, bundled (``^base``)."""
    run_dir = store.run_dir(run.id)
    members = {RECORD: (run_dir / RECORD).read_bytes()}
    for path in sorted((run_dir / "artifacts").glob("*")):
        name = f"artifacts/{path.name}"
        if _MEMBER.fullmatch(name) and path.is_file() and not path.is_symlink():
            members[name] = path.read_bytes()
    bundle = bundle_of(git, run, run.candidates)
    if bundle is not None:
        members[BUNDLE] = bundle
    return members


def bundle_of(git: Git, run: Run, candidates: Sequence[Candidate]) -> bytes | None:
    """The branches of ``candidates`` that moved off the base, bundled (``^base``); None
    when none did."""
    base = run.base_sha or ""
    refs = [
        f"refs/heads/{c.branch}"
        for c in candidates
        if c.head and c.head != base and git.ref_exists(f"refs/heads/{c.branch}")
    ]
    if not refs or not base:
        return None
    with tempfile.TemporaryDirectory(prefix="magi-seal-") as tmp:
        bundle = Path(tmp) / BUNDLE
        git.run("bundle", "create", "--quiet", str(bundle), *refs, f"^{base}")
        return bundle.read_bytes()


def _aad(run_id: str, issue: int, base_sha: str, kind: str = "run") -> bytes:
    return f"magi sealed {kind}\0{run_id}\0{issue}\0{base_sha}".encode()


def seal(
    key: RunnerKey,
    members: dict[str, bytes],
    *,
    run_id: str,
    issue: int,
    base: str,
    kind: str = "run",
) -> str:
    """``members`` (name -> bytes) as sealed text for ``run_id`` (``kind``: see KINDS)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
        for name, data in sorted(members.items()):
            if not _MEMBER.fullmatch(name):
                raise ValueError(f"not a member of a sealed run: {name!r}")
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))
    nonce = secrets.token_bytes(_NONCE)
    sealed = AESGCM(key.secret).encrypt(nonce, buf.getvalue(), _aad(run_id, issue, base, kind))
    body = base64.b64encode(nonce + sealed).decode()
    return f"{_HEADER} key={key.fingerprint}\n{body}\n"


@dataclass(frozen=True)
class Sealed:
    """Sealed text, its form checked (not opened): which key it needs, and its bytes."""

    fingerprint: str
    data: bytes
    text: str


def parse_sealed(text: str, where: str) -> Sealed:
    """The form of a sealed text; ActionError naming ``where`` when it is not one."""
    if len(text) > SEALED_MAX:
        raise ActionError(f"{where}: a sealed run of {len(text)} characters (at most {SEALED_MAX})")
    m = _LINE.fullmatch(text)
    if m is None:
        raise ActionError(f"{where}: not a sealed run (`{_HEADER} key=<16 hex>` and base64)")
    try:
        data = base64.b64decode(m.group(2), validate=True)
    except binascii.Error:
        raise ActionError(f"{where}: a sealed run's body is not base64") from None
    if len(data) <= _NONCE + 16:
        raise ActionError(f"{where}: a sealed run too short to hold anything")
    return Sealed(m.group(1), data, text)


def open_sealed(
    key: RunnerKey,
    sealed: Sealed,
    *,
    run_id: str,
    issue: int,
    base: str,
    where: str,
    kind: str = "run",
) -> dict[str, bytes]:
    """The members of ``sealed``; ActionError when this key did not seal it for this run, or
    anything in it was changed."""
    if sealed.fingerprint != key.fingerprint:
        raise ActionError(
            f"{where} was sealed with key {sealed.fingerprint}; this runner's {key.what} "
            f"({key.path}) is {key.fingerprint}: "
            + (
                "give this runner the pool's panel key (`magi runner-key --panel` on a "
                "runner of the pool; docs/runner.md)"
                if key.what == "panel key"
                else "give every runner of the pool the same key (docs/runner.md)"
            )
        )
    nonce, body = sealed.data[:_NONCE], sealed.data[_NONCE:]
    try:
        plain = AESGCM(key.secret).decrypt(nonce, body, _aad(run_id, issue, base, kind))
    except InvalidTag:
        raise ActionError(
            f"{where} does not open as run {run_id} of issue #{issue} on base {base[:12]}: "
            "it was changed, or sealed for another run"
        ) from None
    out: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(plain), mode="r:gz") as tar:
            for info in tar:
                if not (info.isreg() and _MEMBER.fullmatch(info.name)) or info.name in out:
                    raise ActionError(f"{where}: holds {info.name!r}, not a sealed run's member")
                got = tar.extractfile(info)
                out[info.name] = got.read() if got is not None else b""
    except (tarfile.TarError, OSError, EOFError) as e:
        raise ActionError(f"{where}: the sealed run does not unpack: {e}") from None
    if KINDS[kind] not in out:
        raise ActionError(f"{where}: the sealed {kind} holds no {KINDS[kind]}")
    return out
