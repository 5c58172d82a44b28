"""The runner key and the sealed run (``magi.action.seal``): what opens, what is refused, and
the error that names the file and the fix."""

from __future__ import annotations

import base64
import io
import tarfile
from pathlib import Path

import pytest

from magi.action.artifact import read_artifact, write_artifact
from magi.action.seal import (
    KEY_FILE,
    load_key,
    new_key,
    open_sealed,
    panel_key,
    parse_sealed,
    seal,
)
from magi.errors import ActionError, TamperedArtifact
from magi.state.runner_key import PANEL_FILE, write_panel
from magi.state.store import Store
from record_helpers import run as fixture_run

RUN = "20261203-120000-abcd"
WHERE = {"run_id": RUN, "issue": 7, "base": "b" * 40}


def test_a_new_key_is_the_owners_alone_and_never_replaced(tmp_path: Path) -> None:
    key = new_key(tmp_path)
    assert (tmp_path / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert load_key(tmp_path) == key
    with pytest.raises(ActionError, match="exists: a runner key is replaced by removing it"):
        new_key(tmp_path)
    assert load_key(tmp_path) == key, "the old key is kept"
    assert load_key(tmp_path / "none") is None


@pytest.mark.parametrize(
    ("content", "mode", "said"),
    [
        (None, 0o644, r"readable by others \(mode 644\); fix: chmod 600"),
        ("c2hvcnQ=\n", 0o600, r"not a runner key \(32 bytes in base64\)"),
        ("not base64 at all\n", 0o600, "not a runner key"),
    ],
)
def test_a_key_file_that_is_not_one_is_named_with_the_fix(
    tmp_path: Path, content: str | None, mode: int, said: str
) -> None:
    new_key(tmp_path)
    path = tmp_path / KEY_FILE
    if content is not None:
        path.write_text(content)
    path.chmod(mode)
    with pytest.raises(ActionError, match=said) as e:
        load_key(tmp_path)
    assert str(path) in e.value.message


def test_what_is_sealed_opens_only_with_its_key_for_its_run(tmp_path: Path) -> None:
    key = new_key(tmp_path / "one")
    members = {"run.json": b'{"id": 1}', "artifacts/a.md": b"x", "candidates.bundle": b"\0pack"}
    text = seal(key, members, **WHERE)
    sealed = parse_sealed(text, "here")
    assert sealed.fingerprint == key.fingerprint
    assert open_sealed(key, sealed, where="here", **WHERE) == members
    for other in ({"run_id": "20261203-120000-ffff"}, {"issue": 8}, {"base": "c" * 40}):
        with pytest.raises(ActionError, match="does not open as run"):
            open_sealed(key, sealed, where="here", **{**WHERE, **other})  # type: ignore[arg-type]
    theirs = new_key(tmp_path / "two")
    with pytest.raises(
        ActionError, match=f"sealed with key {key.fingerprint}; this runner.s runner key"
    ):
        open_sealed(theirs, sealed, where="here", **WHERE)


def test_a_sealed_text_of_another_form_is_refused_before_any_key_is_tried() -> None:
    for text in ("", "magi-sealed 1 key=zz\nAAAA\n", "magi-sealed 1 key=0123456789abcdef\n!!\n"):
        with pytest.raises(ActionError, match="here: not a sealed run"):
            parse_sealed(text, "here")
    with pytest.raises(ActionError, match="too short"):
        parse_sealed("magi-sealed 1 key=0123456789abcdef\nAAAA\n", "here")


def test_only_a_runs_members_are_sealed_or_unsealed(tmp_path: Path) -> None:
    """A name with a path in it (``../``, a folder in artifacts/) is never written out."""
    key = new_key(tmp_path)
    with pytest.raises(ValueError, match="not a member"):
        seal(key, {"../evil": b"x"}, **WHERE)
    # Sealed by hand (the key holder's own mistake, or a forged body with the key):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("artifacts/../../x")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from magi.action import seal as module

    nonce = b"\0" * 12
    body = AESGCM(key.secret).encrypt(nonce, buf.getvalue(), module._aad(RUN, 7, "b" * 40))
    text = f"magi-sealed 1 key={key.fingerprint}\n{base64.b64encode(nonce + body).decode()}\n"
    with pytest.raises(ActionError, match="not a sealed run's member"):
        open_sealed(key, parse_sealed(text, "here"), where="here", **WHERE)


def test_an_artifact_whose_sealed_copy_is_not_one_is_refused_whole(tmp_path: Path) -> None:
    store = Store(tmp_path / "home")
    run = fixture_run(RUN)
    store.create(run)
    out = tmp_path / "artifact"
    write_artifact(run, store, out, {}, 7)
    assert read_artifact(out).sealed is None
    (out / "sealed.txt").write_text("magi-sealed 1 key=0123456789abcdef\n" + "A" * 64 + "\n")
    assert read_artifact(out).sealed is not None, "its form is all publish can check"
    (out / "sealed.txt").write_text("rm -rf /\n")
    with pytest.raises(TamperedArtifact, match="not a sealed run"):
        read_artifact(out)


def test_the_panel_key_is_the_runner_keys_one_way_and_a_judges_runner_holds_it_alone(
    tmp_path: Path,
) -> None:
    """A pool runner derives the panel key from its runner key; `magi runner-key --panel`
    writes it for a runner that only seats judges, which opens a panel with it and never a
    run sealed with the runner key."""
    pool, judges = tmp_path / "pool", tmp_path / "judges"
    with pytest.raises(ActionError, match=r"no runner key at .*run this on a runner of the pool"):
        write_panel(pool, tmp_path / "out.key")
    runner = new_key(pool)
    derived = panel_key(pool)
    assert derived is not None
    assert derived.secret != runner.secret
    judges.mkdir()
    written = write_panel(pool, judges / PANEL_FILE)
    assert (judges / PANEL_FILE).stat().st_mode & 0o777 == 0o600
    with pytest.raises(ActionError, match="exists"):
        write_panel(pool, judges / PANEL_FILE)
    held = panel_key(judges)
    assert held is not None
    assert (held.secret, held.fingerprint) == (derived.secret, written.fingerprint)
    assert load_key(judges) is None
    panel = seal(derived, {"run.json": b"{}"}, **WHERE, kind="panel")
    assert open_sealed(held, parse_sealed(panel, "p"), where="p", **WHERE, kind="panel")
    whole = seal(runner, {"run.json": b"{}"}, **WHERE)
    with pytest.raises(ActionError, match="this runner's panel key"):
        open_sealed(held, parse_sealed(whole, "w"), where="w", **WHERE)
    with pytest.raises(ActionError, match="does not open as run"):
        open_sealed(held, parse_sealed(panel, "p"), where="p", **WHERE, kind="run")
    # A pool runner with a panel.key of another pool is told, naming both files.
    stray = tmp_path / "stray"
    new_key(stray)
    write_panel(stray, pool / PANEL_FILE)
    with pytest.raises(ActionError, match=r"panel\.key is not the panel key of this runner's"):
        panel_key(pool)
