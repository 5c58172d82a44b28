"""Which jail is in force: bwrap when usable, else off with the reason and what to change."""

from __future__ import annotations

from pathlib import Path

import pytest

from magi.errors import ConfigError
from magi.model.config import Sandbox
from magi.sandbox.bwrap import APPARMOR_USERNS, MAX_USERNS, blocked_hint, decide, seat_spec


def _which(name: str) -> str | None:
    return "/usr/bin/bwrap"


def _none(name: str) -> str | None:
    return None


def _works(path: str) -> tuple[bool, str]:
    return True, ""


def _blocked(path: str) -> tuple[bool, str]:
    return False, "bwrap: setting up uid map: Permission denied"


def test_auto_takes_bwrap_when_it_runs() -> None:
    """auto on Linux with a working bwrap jails the agents."""
    d = decide(Sandbox(), platform="linux", which=_which, run_probe=_works)
    assert (d.mode, d.bwrap, d.fix) == ("bwrap", "/usr/bin/bwrap", None)


def test_auto_without_bwrap_runs_unjailed_and_says_how_to_install_it() -> None:
    """No bwrap on PATH: off, with the package to install."""
    d = decide(Sandbox(), platform="linux", which=_none, run_probe=_works)
    assert d.mode == "off"
    assert "not found" in d.reason
    assert d.fix is not None
    assert "bubblewrap" in d.fix


def test_auto_with_a_blocked_bwrap_names_the_apparmor_knob() -> None:
    """Installed but blocked under Ubuntu's AppArmor rule: off, and the sysctl/profile to change."""

    def hint(stderr: str) -> str:
        return blocked_hint(stderr, read=lambda p: "1" if p == APPARMOR_USERNS else "")

    d = decide(Sandbox(), platform="linux", which=_which, run_probe=_blocked, hint=hint)
    assert d.mode == "off"
    assert "blocked" in d.reason
    assert d.fix is not None
    assert "apparmor_restrict_unprivileged_userns" in d.fix


def test_the_hint_names_disabled_user_namespaces() -> None:
    """max_user_namespaces = 0 is named as such."""
    hint = blocked_hint("", read=lambda p: "0" if p == MAX_USERNS else "")
    assert "max_user_namespaces" in hint


def test_mode_bwrap_that_cannot_be_had_is_a_config_error() -> None:
    """Insisting on bwrap fails loudly: missing, blocked, or not Linux."""
    with pytest.raises(ConfigError, match="not on PATH"):
        decide(Sandbox(mode="bwrap"), platform="linux", which=_none)
    with pytest.raises(ConfigError, match="cannot run"):
        decide(Sandbox(mode="bwrap"), platform="linux", which=_which, run_probe=_blocked)
    with pytest.raises(ConfigError, match="needs Linux"):
        decide(Sandbox(mode="bwrap"), platform="darwin", which=_which, run_probe=_works)


def test_other_systems_run_unjailed_and_say_so() -> None:
    """macOS under auto: off, said plainly."""
    d = decide(Sandbox(), platform="darwin", which=_which, run_probe=_works)
    assert d.mode == "off"
    assert "darwin" in d.reason


def test_mode_off_never_probes() -> None:
    """off is off, whatever this machine could do."""

    def boom(path: str) -> tuple[bool, str]:
        raise AssertionError("probed")

    assert decide(Sandbox(mode="off"), which=_which, run_probe=boom).mode == "off"


def test_an_unjailed_decision_gives_no_spec(tmp_path: Path) -> None:
    """seat_spec is None when agents run unjailed."""
    d = decide(Sandbox(mode="off"))
    assert seat_spec(d, cwd=tmp_path, writable=True, hide=[], environ={}) is None


def test_a_spec_keeps_only_existing_paths_and_the_home_is_a_scratch(tmp_path: Path) -> None:
    """bwrap cannot mount a missing path: hidden paths that do not exist are left out. The
    home is an empty scratch, and nothing of the user's CLI state is made or bound there."""
    d = decide(Sandbox(), platform="linux", which=_which, run_probe=_works)
    home = tmp_path / "home"
    home.mkdir()
    kept = tmp_path / "kept"
    kept.mkdir()
    spec = seat_spec(
        d,
        cwd=tmp_path,
        writable=True,
        hide=[tmp_path / "missing", kept],
        environ={"HOME": str(home)},
    )
    assert spec is not None
    assert str(kept.resolve()) in spec.hide
    assert str(tmp_path / "missing") not in spec.hide
    assert spec.scratch == (str(home.resolve()),)
    assert not (home / ".codex").exists()
    assert not any(".codex" in p for p in (*spec.write, *spec.read))


def test_paths_for_the_jail_are_resolved_through_links_and_missing_ones_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What bwrap mounts: the real path behind each link, once; nothing that is not there."""
    from magi.sandbox import bwrap as jail

    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    monkeypatch.setenv("HOME", str(tmp_path))
    asked = [
        tmp_path / "link" / "sub",
        "~/real",
        real / "sub",
        tmp_path / "missing",
        tmp_path / "dangling",
    ]
    assert jail._real(asked) == [str(real / "sub"), str(real)]
    monkeypatch.setattr(jail, "_FD_LINKS", False)  # the portable way gives the same
    assert jail._real(asked) == [str(real / "sub"), str(real)]
