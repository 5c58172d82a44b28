"""Every `magi ...` command the setup docs show exists, with the options they give it.

docs/runner.md, app/README.md, docs/receiver.md and docs/action.md are what a new user
follows command by command; a renamed command or option would leave them wrong without
anyone noticing."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from magi.testing.cli import invoke

ROOT = Path(__file__).parents[2]
DOCS = ["docs/runner.md", "app/README.md", "docs/action.md", "README.md", "docs/receiver.md"]
_FENCE = re.compile(r"```(?:sh|console|bash)?\n(.*?)```", re.S)


def _commands() -> list[tuple[str, list[str]]]:
    found = []
    for doc in DOCS:
        for block in _FENCE.findall((ROOT / doc).read_text(encoding="utf-8")):
            for line in block.splitlines():
                line = line.strip().removeprefix("$ ")
                if not line.startswith("magi "):
                    continue
                text = line.split(" #", 1)[0].replace("[", "").replace("]", "")
                try:
                    words = shlex.split(text)
                except ValueError:  # prose quotes in a comment-less example: word by word
                    words = text.split()
                found.append((doc, words[1:]))
    return found


COMMANDS = _commands()


def test_the_docs_show_the_setup_commands() -> None:
    shown = {" ".join(w for w in words if not w.startswith("-"))[:20] for _, words in COMMANDS}
    assert any(s.startswith("app setup") for s in shown)
    assert any(s.startswith("app serve") for s in shown)
    assert any(s.startswith("app check") for s in shown)
    assert any(s.startswith("init") for s in shown)
    assert any(s.startswith("doctor") for s in shown)


@pytest.mark.parametrize(("doc", "words"), COMMANDS, ids=[" ".join(w) for _, w in COMMANDS])
def test_each_documented_command_and_option_exists(doc: str, words: list[str]) -> None:
    path: list[str] = []
    for w in words:
        if w.startswith("-") or "/" in w or " " in w or '"' in w:
            break
        probe = invoke([*path, w, "--help"])
        if probe.exit_code != 0:
            break  # an argument (a task, a run id), not a subcommand
        path.append(w)
    helped = invoke([*path, "--help"])
    assert helped.exit_code == 0, (doc, words, helped.output)
    options = [o for w in words if w.startswith("--") for o in w.split("=", 1)[0].split("|")]
    for option in options:  # `--json|--markdown`: either, as the usage lines write it
        assert option in helped.output, f"{doc}: `magi {' '.join(words)}`: no {option}"


def test_the_github_section_starts_with_app_setup() -> None:
    """README's GitHub section opens with the commands in order, `magi app setup` first."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## GitHub App\n", 1)[1].split("\n## ", 1)[0]
    block = _FENCE.search(section)
    assert block is not None
    assert section.index("```") < section.index("Label an issue")
    assert block.group(1).splitlines()[0].startswith("magi app setup")


def test_the_install_source_is_named_one_way() -> None:
    """magi's own repository is MAGI_REPO@SHA everywhere; OWNER/REPO is the user's."""
    found = set()
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        found |= set(
            re.findall(r"magi-election(?:\[github\])? @\s+git\+https://github\.com/(\S+?)'", text)
        )
    assert found == {"MAGI_REPO@SHA"}, found
