"""A bare or an empty repository is reported as what it is, with what to do."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from magi.errors import RepoError
from magi.git.repo import Git


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global git config of the machine."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def test_a_bare_repository_is_named_bare_with_what_to_do(tmp_path: Path) -> None:
    """Not "not a git repository": it is one, without a working tree."""
    bare = tmp_path / "b.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    with pytest.raises(RepoError) as err:
        Git.discover(bare)
    assert "is a bare repository" in err.value.message
    assert "git clone" in err.value.message


def test_an_empty_repository_says_it_has_no_commits(tmp_path: Path) -> None:
    """Not "unknown revision 'main'": there is nothing to branch from yet."""
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    git = Git.discover(repo)
    with pytest.raises(RepoError) as err:
        git.rev_parse(git.default_base())
    assert "has no commits yet" in err.value.message


def test_an_unknown_branch_in_a_repository_with_commits_is_still_unknown(tmp_path: Path) -> None:
    """The empty-repository message is for empty repositories only."""
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=x",
            "-c",
            "user.email=x@y",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
        cwd=repo,
        check=True,
    )
    with pytest.raises(RepoError, match="unknown revision 'nope'"):
        Git(repo).rev_parse("nope")
