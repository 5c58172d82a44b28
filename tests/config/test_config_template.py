"""Templating: the context a config file sees, the two-pass [vars], and comment stripping."""

from __future__ import annotations

from pathlib import Path

import pytest

from config_helpers import FIXTURES, load, write
from magi.config.template import TemplateFailure, render, strip_comments
from magi.errors import ConfigError


def test_env_system_repo_and_repo_name_are_in_scope(tmp_path: Path) -> None:
    """{{ env.X }}, {{ system.* }}, {{ repo }} and {{ repo_name }} render from what was passed."""
    repo = tmp_path / "checkout" / "widget"
    write(
        repo / "magi.toml",
        """
        [graph]
        language = "{{ env.LANG_FOR_AGENTS }}"
        worktree_root = "{{ repo }}/../wt/{{ repo_name }}-{{ system.os }}-{{ system.arch }}"

        [github]
        label = "magi-{{ system.hostname }}"
        """,
    )
    config = load(repo, tmp_path / "home", environ={"LANG_FOR_AGENTS": "ja"}).config
    assert config.graph.language == "ja"
    assert config.graph.worktree_root == f"{repo}/../wt/widget-linux-x86_64"
    assert config.github.label == "magi-box"


def test_env_is_the_mapping_passed_not_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variable only in os.environ is invisible when an environ mapping is passed."""
    monkeypatch.setenv("ONLY_IN_PROCESS", "leak")
    write(
        tmp_path / "magi.toml",
        "[graph]\nlanguage = \"{{ env.ONLY_IN_PROCESS | default('en') }}\"\n",
    )
    assert load(tmp_path, tmp_path / "home").config.graph.language == "en"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [({}, "/tmp/magi-target make"), ({"MAGI_CACHE": "/var/c"}, "/var/c/magi-target make")],
)
def test_a_var_built_from_env_with_a_default(
    tmp_path: Path, environ: dict[str, str], expected: str
) -> None:
    """[vars] may use templates, and the rest of the file sees the rendered var."""
    write(
        tmp_path / "magi.toml",
        """
        [vars]
        cache = "{{ env.MAGI_CACHE | default('/tmp') }}"

        [verify]
        e2e = ["{{ vars.cache }}/magi-target make"]
        """,
    )
    assert load(tmp_path, tmp_path / "home", environ=environ).config.verify.e2e == [expected]


def test_tera_spelling_of_default_is_accepted(tmp_path: Path) -> None:
    """default(value='x'), as the README and teravars configs write it, works too."""
    write(tmp_path / "magi.toml", "[graph]\nlanguage = \"{{ env.NOPE | default(value='fr') }}\"\n")
    assert load(tmp_path, tmp_path / "home").config.graph.language == "fr"


def test_a_bare_var_in_another_table_still_reads(tmp_path: Path) -> None:
    """A var used unquoted (a number) does not stop the first pass from reading [vars]."""
    write(tmp_path / "magi.toml", "[vars]\nn = 5\n\n[graph]\ncandidates = {{ vars.n }}\n")
    assert load(tmp_path, tmp_path / "home").config.graph.candidates == 5


def test_lower_layer_vars_are_visible_higher_up(tmp_path: Path) -> None:
    """A var set on the machine can be used by a repository's file, and overridden by it."""
    home = tmp_path / "home"
    write(home / "config.toml", "[vars]\nroot = '/srv'\nsuffix = 'x'\n")
    write(
        tmp_path / "magi.toml",
        "[vars]\nsuffix = 'y'\n[graph]\nworktree_root = '{{ vars.root }}/{{ vars.suffix }}'\n",
    )
    resolved = load(tmp_path, home)
    assert resolved.config.graph.worktree_root == "/srv/y"
    assert resolved.config.vars == {"root": "/srv", "suffix": "y"}


def test_comments_may_quote_braces(tmp_path: Path) -> None:
    """Comments are stripped before rendering; strings keep their '#' and their text."""
    config = load(None, tmp_path, config_path=FIXTURES / "comments.toml").config
    assert config.graph.language == "ja#not-a-comment"
    assert config.graph.worktree_root == "C:\\wt#1"
    assert config.prompts.all == (
        'A multi-line string keeps its # hash and its "quotes" """ and {{ braces.\n'
    )
    assert config.prompts.judge == "# this line is string content, not a comment\n"


def test_strip_comments_keeps_every_line() -> None:
    """Stripping never joins or drops lines, so later errors still point at the right line."""
    text = 'a = 1 # one\n# two\nb = "#" # {{ x }}\r\nc = 3\n'
    stripped = strip_comments(text)
    assert stripped == 'a = 1 \n\nb = "#" \r\nc = 3\n'
    assert stripped.count("\n") == text.count("\n")


def test_strip_comments_stops_an_unterminated_string_at_its_line() -> None:
    """A string left open does not swallow the comments of the lines after it."""
    assert strip_comments('a = "open\nb = 1 # gone\n') == 'a = "open\nb = 1 \n'


def test_unknown_variable_is_an_error_at_file_and_line(tmp_path: Path) -> None:
    """StrictUndefined: a variable nobody defined names the file and the line."""
    path = write(tmp_path / "magi.toml", "[graph]\n\nlanguage = '{{ env.NOT_SET }}'\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path, tmp_path / "home")
    assert info.value.path == path
    assert info.value.line == 3
    assert str(info.value).startswith(f"{path}:3: template error:")
    assert "NOT_SET" in str(info.value)


def test_template_syntax_error_is_reported_at_file_and_line(tmp_path: Path) -> None:
    """A broken tag is reported where it sits, not as a traceback."""
    path = write(tmp_path / "magi.toml", "[graph]\nlanguage = 'en'\n{% if %}\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path, tmp_path / "home")
    assert (info.value.path, info.value.line) == (path, 3)
    assert "template syntax error" in str(info.value)


def test_the_sandbox_refuses_python_internals() -> None:
    """Config files cannot reach Python internals through the template."""
    with pytest.raises(TemplateFailure):
        render("{{ ''.__class__.__mro__[1].__subclasses__() }}", {})
