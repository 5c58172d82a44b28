"""action/install.sh refuses a Python older than 3.11 in one line that names the fix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

OLD_PYTHON = """#!/bin/sh
# a runner's Python 3.10: answers the version check as 3.10 would
case "$2" in
  *version_info*) exit 1 ;;
  *python_version*) echo 3.10.12 ;;
esac
"""


def test_an_old_python_is_refused_in_one_line_before_pip(tmp_path: Path) -> None:
    python = tmp_path / "python3.10"
    python.write_text(OLD_PYTHON)
    python.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "MAGI_PYTHON": str(python), "RUNNER_TEMP": str(tmp_path)}
    env["GITHUB_ACTION_PATH"] = str(ROOT)
    res = subprocess.run(
        ["bash", str(ROOT / "action" / "install.sh")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "magi needs Python >= 3.11" in lines[0]
    assert "3.10.12" in lines[0]
    assert "runner's PATH as python3" in lines[0]  # the generated workflow sets no input
    assert not (tmp_path / "magi-venv").exists()


def test_the_install_script_says_where_dependencies_come_from() -> None:
    """Not "nothing is fetched by name": pip resolves magi's dependencies from the index."""
    for doc in ("action/install.sh", "docs/action.md"):
        assert "fetched by name" not in (ROOT / doc).read_text(encoding="utf-8"), doc


# A stand-in for the action's checkout: a package with a `github` extra, so that install.sh
# runs pip for real (its build backend from the index, as the real one's) in seconds.
PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tinymagi"
version = "0"

[project.optional-dependencies]
github = []
"""


def _action(tmp_path: Path) -> Path:
    src = tmp_path / "action"
    (src / "tinymagi").mkdir(parents=True)
    (src / "tinymagi" / "__init__.py").write_text("WHO = 'the pinned magi'\n")
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "constraints.txt").write_text("")
    return src


def _install(tmp_path: Path, src: Path, command: str, **env: str) -> tuple[int, str, list[str]]:
    path_file, env_file = tmp_path / "github_path", tmp_path / "github_env"
    path_file.write_text("")
    env_file.write_text("")
    runner_temp = tmp_path / f"temp-{command}"
    runner_temp.mkdir(exist_ok=True)
    base = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "MAGI_PYTHON": sys.executable,
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_ACTION_PATH": str(src),
        "GITHUB_PATH": str(path_file),
        "GITHUB_ENV": str(env_file),
        "MAGI_ACTION_COMMAND": command,
        "MAGI_ACTION_CACHE": str(tmp_path / "cache"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    res = subprocess.run(
        [shutil.which("bash") or "bash", str(ROOT / "action" / "install.sh")],
        env={**base, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    return res.returncode, res.stdout + res.stderr, path_file.read_text().splitlines()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The action installed once by an agents job (pip for real), then found again."""
    tmp = tmp_path_factory.mktemp("built")
    src = _action(tmp)
    code, said, (bin_dir,) = _install(tmp, src, "compete")
    assert code == 0, said
    assert "built the cached environment" in said
    return src, tmp / "cache", bin_dir


def _copy(built: tuple[Path, Path, str], tmp_path: Path) -> Path:
    """The built cache as another runner's home would hold it (same version, same key)."""
    subprocess.run(["cp", "-a", str(built[1]), str(tmp_path / "cache")], check=True)
    return tmp_path / "cache" / Path(built[2]).relative_to(built[1]).parts[0] / "venv"


def test_an_agents_job_builds_the_cache_once_and_checks_it_before_each_use(built, tmp_path):
    src, cache, bin_dir = built
    assert bin_dir.startswith(str(cache))
    venv = _copy(built, tmp_path)
    # No index: a second build would fail, so this one found the first one's.
    code, said, path = _install(tmp_path, src, "compete", PIP_NO_INDEX="1")
    assert code == 0, said
    assert "built" not in said
    assert "every file checked against its digest" in said
    assert path == [str(venv / "bin")]
    assert os.geteuid() == 0 or not os.access(venv / "bin", os.W_OK)  # read-only to its owner
    assert "PYTHONDONTWRITEBYTECODE=1" in (tmp_path / "github_env").read_text()


@pytest.mark.parametrize(
    "how", ["changed", "added", "relinked"], ids=["a-file-changed", "a-file-added", "a-link"]
)
def test_a_tampered_cache_is_refused_before_use(built, tmp_path, how):
    """Whatever wrote to the cached environment (a changed module, a planted .pth, an
    interpreter link pointed elsewhere), the next job refuses it before running it."""
    venv = _copy(built, tmp_path)
    subprocess.run(["chmod", "-R", "u+w", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    if how == "changed":
        (site / "tinymagi" / "__init__.py").write_text("import os  # planted\n")
    elif how == "added":
        (site / "zz-planted.pth").write_text("import os\n")
    else:
        (venv / "bin" / "python").unlink()
        (venv / "bin" / "python").symlink_to("/bin/sh")
    code, said, path = _install(tmp_path, built[0], "compete", PIP_NO_INDEX="1")
    assert code != 0
    assert "refused" in said
    assert path == [], "the tampered environment is never put on PATH"


@pytest.mark.parametrize("command", ["publish", "receive", "merge", "publish-land", "pin"])
def test_a_job_holding_the_apps_token_or_key_never_runs_the_cache(built, tmp_path, command):
    """The agents job's own steps could have written the runner's cache: a job holding the
    App's token or key installs afresh in its RUNNER_TEMP (with no index here, that install
    fails: it never took the cache that is there)."""
    _copy(built, tmp_path)
    code, said, path = _install(tmp_path, built[0], command, PIP_NO_INDEX="1")
    assert code != 0, said
    assert path == []
    assert (tmp_path / f"temp-{command}" / "magi-venv" / "bin" / "python").exists()


def test_a_github_hosted_runner_uses_no_cache(built, tmp_path):
    """A hosted runner is a fresh machine per job: nothing to reuse, nothing written."""
    env = {"RUNNER_ENVIRONMENT": "github-hosted", "PIP_NO_INDEX": "1"}
    code, _, path = _install(tmp_path, built[0], "compete", **env)
    assert (code, path) != (0, [])
    assert path == []
    assert not (tmp_path / "cache").exists()
    assert (tmp_path / "temp-compete" / "magi-venv").exists()


def test_a_runner_without_flock_installs_afresh(built, tmp_path):
    """Two jobs building one version must not race (flock; macOS has none): without it
    the job installs afresh, never half-built or unchecked."""
    _copy(built, tmp_path)
    (tmp_path / "no-flock").mkdir()
    env = {"PATH": str(tmp_path / "no-flock"), "PIP_NO_INDEX": "1"}
    code, _, path = _install(tmp_path, built[0], "compete", **env)
    assert code != 0
    assert path == []
    assert (tmp_path / "temp-compete" / "magi-venv" / "bin" / "python").exists()
