"""On a runner, no jail is no run: the Action refuses to seat agents unjailed unless the
repository's config says ``[sandbox] mode = "off"`` on purpose, and says so on the issue."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from action_helpers import ISSUE, REPO, make_world
from magi.action.artifact import read_refusal
from magi.errors import ConfigError
from magi.sandbox.bwrap import Decision
from magi.seats.jailing import refuse_unjailed

BLOCKED = Decision("off", "auto", "/usr/bin/bwrap is installed but blocked", fix="sysctl x=1")
RUNNER = {"GITHUB_ACTIONS": "true"}


def test_a_runner_without_a_usable_jail_refuses_unless_off_on_purpose() -> None:
    """Blocked or missing bwrap on a runner: refused with the fix; `mode = "off"` and a
    laptop (no GITHUB_ACTIONS) go on; a jailed runner goes on."""
    with pytest.raises(ConfigError) as refused:
        refuse_unjailed(BLOCKED, RUNNER)
    assert "sysctl x=1" in refused.value.message
    assert '[sandbox] mode = "off"' in refused.value.message
    assert "registration key" in refused.value.message
    refuse_unjailed(Decision("off", "off", "asked"), RUNNER)
    refuse_unjailed(BLOCKED, {})
    refuse_unjailed(Decision("bwrap", "auto", "works", bwrap="/usr/bin/bwrap"), RUNNER)


def test_the_agents_job_refuses_an_unjailed_runner_and_the_issue_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bwrap that cannot run (as under Ubuntu's AppArmor rule) seats no agent: compete
    exits non-zero having run no seat, and publish says why on the issue, with the fix."""
    world = make_world(tmp_path)
    fake = tmp_path / "blocked-bin"
    fake.mkdir()
    script = "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    (fake / "bwrap").write_text(script)
    (fake / "bwrap").chmod(0o755)
    res = world.compete(env={"PATH": f"{fake}:{os.environ['PATH']}"})
    assert res.returncode != 0, res.stdout + res.stderr
    assert world.spied() == [], "an agent was seated unjailed"
    said = read_refusal(world.artifact, ISSUE)
    assert said is not None, res.stderr
    assert "unjailed on this runner" in said
    assert 'mode = "off"' in said
    published = world.publish(monkeypatch)
    assert published.exit_code != 0  # the job fails too, for whoever reads the Actions tab
    comments = world.github.comments_on(REPO, ISSUE)
    assert any("unjailed on this runner" in body for body in comments), comments
