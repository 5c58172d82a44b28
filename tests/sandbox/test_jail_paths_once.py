"""A seat's jail gathers what does not change between turns once a process, and what can
change every turn: a jailed turn paid some thirty path resolutions for the home's
toolchains, most of them absent, every time."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from magi.sandbox import bwrap
from magi.sandbox.bwrap import Decision, seat_spec

JAILED = Decision("bwrap", "bwrap", "test", bwrap="/usr/bin/bwrap")  # seat_spec runs nothing


def test_the_home_toolchains_are_looked_for_once_and_checked_each_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    for tool in (".cargo/bin", ".rustup"):
        (home / tool).mkdir(parents=True)
    tree = tmp_path / "tree"
    tree.mkdir()
    environ = {"HOME": str(home), "PATH": f"/usr/bin:{home / '.cargo/bin'}"}
    searched: list[list[str]] = []
    real = bwrap._real

    def counting(paths: Iterable[Path | str]) -> list[str]:
        paths = [str(p) for p in paths]
        searched.append(paths)
        return real(paths)

    monkeypatch.setattr(bwrap, "_real", counting)

    def turn() -> tuple[str, ...]:
        spec = seat_spec(JAILED, cwd=tree, writable=True, hide=[], environ=environ)
        assert spec is not None
        return spec.read

    first = turn()
    assert str(home / ".rustup") in first
    assert str(home / ".cargo/bin") in first
    assert turn() == first
    volta = str(home / ".volta")  # an absent toolchain: asked for by the search alone
    assert sum(volta in paths for paths in searched) == 1
    # A toolchain gone under a run is not bound (bwrap cannot bind what is not there)
    (home / ".rustup").rmdir()
    assert str(home / ".rustup") not in turn()


def test_the_runner_above_a_seat_s_tree_is_hidden_and_each_folder_asked_once(
    tmp_path: Path,
) -> None:
    """Every folder above a seat's tree was asked whether it is a runner's install (two
    lookups each) every turn; the trees of a run share those folders."""
    install = tmp_path / "actions-runner"
    (install / "_work/p").mkdir(parents=True)
    (install / ".runner").write_text("{}")
    environ = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin"}
    hidden = []
    for seat in ("impl-A", "impl-B"):
        tree = install / "_work/p" / seat
        tree.mkdir()
        asked = bwrap._is_runner.cache_info()
        spec = seat_spec(JAILED, cwd=tree, writable=True, hide=[], environ=environ)
        assert spec is not None
        hidden.append(str(install) in spec.hide)
        now = bwrap._is_runner.cache_info()
        new = now.misses - asked.misses
    assert hidden == [True, True]
    assert new == 1  # the second tree's own folder; its parents were answered already
