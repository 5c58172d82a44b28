"""Why compete did not start reaches the issue in magi's own words, fix included."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from action_helpers import ISSUE, REPO, make_world

NOT_LOGGED_IN = """#!/bin/sh
# claude's `auth status` when nobody logged in (docs/agents-verified.md)
echo '{"loggedIn": false}'
exit 1
"""


def _claude_not_logged_in(world, tmp: Path) -> dict[str, str]:
    """The first implementer becomes a `claude` agent whose CLI says nobody logged in."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(NOT_LOGGED_IN)
    claude.chmod(0o755)
    config = world.repo / "magi.toml"
    text = config.read_text()
    start = text.index('[[agents]]\nid = "alphaimpl"')
    end = text.index("[[agents]]", start + 1)
    config.write_text(
        text[:start] + '[[agents]]\nid = "alphaimpl"\nkind = "claude"\n\n' + text[end:]
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "commit", "-qam", "claude"], cwd=world.repo, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=world.repo, check=True)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_a_cli_not_logged_in_is_named_in_the_fix_on_the_issue(tmp_path, monkeypatch):
    """`run \\`claude auth login\\``, never `[redacted] auth login`; and it is compete that
    refused, not "the council job"."""
    world = make_world(tmp_path)
    res = world.compete(env=_claude_not_logged_in(world, tmp_path))
    assert res.returncode != 0, res.stdout + res.stderr
    out = world.publish(monkeypatch)
    assert out.exit_code == 20, out.output
    said = world.github.comments_on(REPO, ISSUE)[-1]
    assert "run `claude auth login`" in said, said
    assert "[redacted]" not in said, said
    assert "compete refused to start" in said, said
    assert "council" not in said, said


def test_a_refusal_after_seating_still_hides_authors(tmp_path):
    """Only a run that seated nobody names agents: any other refusal is gated as before."""
    from magi.action.artifact import read_refusal, write_refusal

    write_refusal(tmp_path, ISSUE, "claude stopped mid-run")
    assert read_refusal(tmp_path, ISSUE) == "compete refused to start: [redacted] stopped mid-run"
    write_refusal(tmp_path, ISSUE, "run `claude auth login`", named=True)
    said = read_refusal(tmp_path, ISSUE, "the council job")
    assert said == "the council job refused to start: run `claude auth login`"
