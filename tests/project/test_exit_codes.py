"""One error tree and one table of exit codes, and README's table is that table."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import magi
from magi import errors
from magi.errors import ExitCode, MagiError

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| (\d+) \| `([a-z_]+)` \| [^|]+ \|$", re.M)


def test_readme_lists_every_exit_code_once_as_the_enum_has_it() -> None:
    rows = ROW.findall(README.read_text(encoding="utf-8"))
    assert rows, "README's exit-code table was not found"
    assert len(rows) == len({code for code, _ in rows}), "a code listed twice"
    assert {(int(code), name) for code, name in rows} == {
        (c.value, c.name.lower()) for c in ExitCode
    }


def test_codes_are_distinct() -> None:
    assert len({c.value for c in ExitCode}) == len(ExitCode)


def _all_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(magi.__path__, "magi."):
        if info.name.startswith("magi.testing") or info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


# Defined beside what it formats (the holder a run's lock file names), drawn in the tree.
ELSEWHERE = {"magi.state.lock.RunLockedError"}


def test_every_error_class_of_magi_is_in_the_one_tree() -> None:
    """A class deriving from MagiError lives in magi.errors, with a code from ExitCode."""
    for name in _all_modules():
        importlib.import_module(name)
    seen: list[type[MagiError]] = []
    todo = [MagiError]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    outside = sorted(
        f"{c.__module__}.{c.__qualname__}" for c in seen if c.__module__ != errors.__name__
    )
    assert [o for o in outside if o not in ELSEWHERE] == []
    for cls in seen:
        if cls is not errors.PreflightError:  # carries the worst code of its problems
            assert isinstance(cls.exit_code, ExitCode), cls
    # The tree drawn in the module's docstring names every class.
    drawn = errors.__doc__ or ""
    assert all(c.__name__ in drawn for c in seen)


def test_a_rebase_conflict_has_a_code_of_its_own() -> None:
    assert ExitCode.REBASE_CONFLICT not in {ExitCode.CONFIG, ExitCode.FAILED}
    assert errors.ConfigError("x").exit_code == ExitCode.CONFIG
