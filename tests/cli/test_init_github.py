"""`magi init --github`: the workflow, every `uses:` of magi's action pinned; no placeholder."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from magi.config.source import Source, from_checkout, github_repository, parse_source
from magi.config.workflow import PLACEHOLDER, expression_string, render_workflow, template
from magi.testing.cli import invoke

SHA = "1234567890abcdef1234567890abcdef12345678"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no agent CLI: the config is the starter
    return root


def _magi_uses(text: str) -> list[str]:
    found = re.findall(r"^\s*(?:- )?uses: (\S+)", text, re.M)
    return [u for u in found if not u.startswith("actions/")]


def test_the_template_names_no_repository() -> None:
    """magi's own workflow carries the placeholder only, and no real repository's name."""
    text = template()
    assert set(_magi_uses(text)) == {PLACEHOLDER}
    assert "magi-dev" not in text


def test_init_github_pins_every_use_to_the_source(repo: Path) -> None:
    """--source OWNER/REPO@SHA: every `uses:` of the action is that, nothing else changed."""
    res = invoke(["init", "--github", "--source", f"acme/magi@{SHA}"])
    assert res.exit_code == 0, res.output
    flow = (repo / ".github" / "workflows" / "magi.yml").read_text()
    assert PLACEHOLDER not in flow
    assert set(_magi_uses(flow)) == {f"acme/magi@{SHA}"}
    assert len(_magi_uses(flow)) == len(_magi_uses(template()))
    assert "PIN:" not in flow
    assert f"pinned to\n# acme/magi@{SHA}" in flow
    assert (repo / ".magi" / "config.toml").is_file()
    assert "MAGI_APP_PRIVATE_KEY" in res.output  # what to do next


def test_init_github_uses_the_installed_magis_own_source(repo, monkeypatch) -> None:
    """Without --source: the repository and commit this magi was built from."""
    monkeypatch.setattr("magi.config.source.installed_source", lambda: Source("acme/magi", SHA))
    assert invoke(["init", "--github"]).exit_code == 0
    flow = (repo / ".github" / "workflows" / "magi.yml").read_text()
    assert set(_magi_uses(flow)) == {f"acme/magi@{SHA}"}


def test_a_magi_that_does_not_know_its_repository_asks_for_source(repo, monkeypatch) -> None:
    """Built from a clone whose origin is not on github.com: said, with what to pass."""
    monkeypatch.setattr("magi.config.source.installed_source", lambda: Source(None, SHA))
    res = invoke(["init", "--github"])
    assert res.exit_code != 0
    assert "--source MAGI_REPO@SHA" in res.output
    assert not (repo / ".github").exists()


@pytest.mark.parametrize("bad", ["acme/magi@main", "acme/magi", f"not a repo@{SHA}", "a@b"])
def test_a_source_that_is_not_a_full_pin_is_refused(repo: Path, bad: str) -> None:
    """A branch or a tag moves; only a full commit pins."""
    res = invoke(["init", "--github", "--source", bad])
    assert res.exit_code != 0
    assert "--source" in res.output


def test_an_existing_workflow_is_kept_without_force(repo: Path) -> None:
    """Never overwritten silently; the config an earlier init wrote is kept."""
    assert invoke(["init", "--github", "--source", f"acme/magi@{SHA}"]).exit_code == 0
    again = invoke(["init", "--github", "--source", f"acme/magi@{'a' * 40}"])
    assert again.exit_code != 0
    assert "already exists" in again.output
    forced = invoke(["init", "--github", "--force", "--source", f"acme/magi@{'a' * 40}"])
    assert forced.exit_code == 0


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("https://github.com/acme/magi.git", "acme/magi"),
        ("https://x-access-token:ghs_secret@github.com/acme/magi", "acme/magi"),
        ("git@github.com:acme/magi.git", "acme/magi"),
        ("ssh://git@github.com/acme/magi", "acme/magi"),
        ("https://gitlab.com/acme/magi.git", None),
        ("/srv/git/magi.git", None),
    ],
)
def test_the_repository_of_a_remote(url: str, repo: str | None) -> None:
    """Only github.com names one; a URL's credentials never reach the record."""
    assert github_repository(url) == repo


def test_a_checkout_gives_its_head_and_origin(tmp_path: Path) -> None:
    """What setup.py records at build time, and an editable install reads."""
    root = tmp_path / "c"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(
        ["git", *ident, "-C", str(root), "commit", "-q", "--allow-empty", "-m", "x"], check=True
    )
    url = "https://x:ghs_tok@github.com/acme/magi.git"
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", url], check=True)
    src = from_checkout(root)
    assert src is not None
    assert src.repository == "acme/magi"
    assert len(src.commit) == 40
    assert "ghs_tok" not in repr(src)


def test_render_refuses_a_source_without_a_repository() -> None:
    with pytest.raises(ValueError, match="--source"):
        render_workflow(Source(None, SHA))
    assert parse_source(f"Acme/Magi.py@{SHA.upper()}").commit == SHA


def test_the_agents_jobs_fall_back_to_the_repositorys_runner_labels(repo: Path) -> None:
    """A dispatch that names no labels (Run workflow by hand, no App) still lands on the
    runners the config names: they are rendered into every agents job, not hard-coded."""
    (repo / "magi.toml").write_text('[github]\nrunner_labels = ["self-hosted", "gpu-box"]\n')
    assert invoke(["init", "--github", "--source", f"acme/magi@{SHA}"]).exit_code == 0
    flow = (repo / ".github" / "workflows" / "magi.yml").read_text()
    fallbacks = re.findall(
        r"runs-on: \$\{\{ fromJSON\(inputs\.runner-labels \|\| '(.*)'\) \}\}", flow
    )
    assert fallbacks == ['["self-hosted", "gpu-box"]'] * 3
    assert 'default: \'["self-hosted", "gpu-box"]\'' in flow
    assert '"magi"]' not in flow
    # And an agent's own labels, as the App would send them.
    (repo / "magi.toml").write_text(
        '[[agents]]\nid = "boxed"\nkind = "command"\ncommand = ["true"]\n'
        'runner_labels = ["self-hosted", "gpu"]\n'
    )
    assert invoke(["init", "--github", "--force", "--source", f"acme/magi@{SHA}"]).exit_code == 0
    flow = (repo / ".github" / "workflows" / "magi.yml").read_text()
    assert 'default: \'["self-hosted", "magi", "gpu"]\'' in flow
    # The competition starts on the pool's labels and hands the GPU seat on; a council's
    # and a landing's jobs run where every agent can.
    fallbacks = re.findall(
        r"runs-on: \$\{\{ fromJSON\(inputs\.runner-labels \|\| '(.*)'\) \}\}", flow
    )
    assert fallbacks == [
        '["self-hosted", "magi"]',
        '["self-hosted", "magi", "gpu"]',
        '["self-hosted", "magi", "gpu"]',
    ]
    assert 'MAGI_JOB_LABELS: ${{ inputs.runner-labels || \'["self-hosted", "magi"]\' }}' in flow


def test_runner_labels_that_could_leave_the_json_are_refused(repo: Path) -> None:
    """A label is a runner label: a quote would end the expression's string."""
    (repo / "magi.toml").write_text("[github]\nrunner_labels = [\"x') || 'y\"]\n")
    res = invoke(["init", "--github", "--source", f"acme/magi@{SHA}"])
    assert res.exit_code != 0
    assert "runner_labels" in res.output
    assert not (repo / ".github").exists()
    assert not (repo / ".magi").exists()  # nothing written when the workflow cannot be


@pytest.mark.parametrize("label", ["x ${{ true }}", "x }} || 'y", "a${{b"])
def test_an_issue_label_that_could_leave_the_if_expression_is_refused(
    repo: Path, label: str
) -> None:
    """`[github] label` goes into the receive job's `if:`; `${{` or `}}` would make that
    `if:` a template string (always true): refused by the config, naming the key."""
    # a config file is a Jinja template first: raw, so the label reaches TOML as written
    (repo / "magi.toml").write_text(f'[github]\nlabel = "{{% raw %}}{label}{{% endraw %}}"\n')
    res = invoke(["init", "--github", "--source", f"acme/magi@{SHA}"])
    assert res.exit_code != 0
    assert "github.label" in res.output
    assert "must not contain '${{' or '}}'" in res.output
    assert not (repo / ".github").exists()


@pytest.mark.parametrize("label", ["x ${{ true }}", "x }} || 'y"])
def test_the_workflow_refuses_such_a_label_itself(label: str) -> None:
    """expression_string refuses it too, whoever calls it (not only through the config)."""
    with pytest.raises(ValueError, match=r"\[github\] label: .* must not contain"):
        expression_string(label)
    assert expression_string("it's") == "'it''s'"


def test_the_default_labels_are_the_configs_default() -> None:
    """The template's fallback and the config's default are one pair of labels."""
    from magi.config.workflow import DEFAULT_LABELS
    from magi.model.config import Github

    assert list(DEFAULT_LABELS) == Github().runner_labels
    assert (
        render_workflow(Source("acme/magi", SHA)).count(str(list(DEFAULT_LABELS)).replace("'", '"'))
        == 5  # three runs-on, the first stage's MAGI_JOB_LABELS, the input's default
    )


def test_init_github_force_rewrites_the_workflow_and_keeps_the_config(repo: Path) -> None:
    """What docs/runner.md says to do after changing runner_labels: the config stays, the
    workflow takes its labels."""
    assert invoke(["init", "--github", "--source", f"acme/magi@{SHA}"]).exit_code == 0
    config = repo / ".magi" / "config.toml"
    config.write_text('[github]\nrunner_labels = ["self-hosted", "linux-big"]\n')
    again = invoke(["init", "--github", "--force", "--source", f"acme/magi@{SHA}"])
    assert again.exit_code == 0, again.output
    assert "linux-big" in config.read_text()
    flow = (repo / ".github" / "workflows" / "magi.yml").read_text()
    assert '["self-hosted", "linux-big"]' in flow


def test_force_over_an_untouched_workflow_replaces_it(repo: Path) -> None:
    """magi's own stamp says nothing of a person's is in it: no copy kept."""
    assert invoke(["init", "--github", "--source", f"acme/magi@{SHA}"]).exit_code == 0
    res = invoke(["init", "--github", "--force", "--source", f"acme/magi@{'a' * 40}"])
    assert res.exit_code == 0, res.output
    assert not (repo / ".github" / "workflows" / "magi.yml.old").exists()
    assert f"acme/magi@{'a' * 40}" in (repo / ".github" / "workflows" / "magi.yml").read_text()


@pytest.mark.parametrize("stamped", [True, False], ids=["edited", "unstamped"])
def test_force_keeps_hand_edits_beside_the_new_workflow(repo: Path, stamped: bool) -> None:
    """An edited workflow (or one from before the stamp) is kept as magi.yml.old and said;
    a second --force with that copy still there refuses and changes nothing."""
    assert invoke(["init", "--github", "--source", f"acme/magi@{SHA}"]).exit_code == 0
    flow = repo / ".github" / "workflows" / "magi.yml"
    text = flow.read_text().replace("name: magi\n", "name: magi\n# my own note\n", 1)
    if not stamped:
        text = text[: text.rindex("# magi init --github wrote")]
    flow.write_text(text)
    res = invoke(["init", "--github", "--force", "--source", f"acme/magi@{SHA}"])
    assert res.exit_code == 0, res.output
    kept = flow.with_name("magi.yml.old")
    assert kept.read_text() == text
    assert "# my own note" not in flow.read_text()
    assert "kept the previous workflow as" in res.output
    flow.write_text(text)
    again = invoke(["init", "--github", "--force", "--source", f"acme/magi@{SHA}"])
    assert again.exit_code != 0
    assert "magi.yml.old" in again.output
    assert flow.read_text() == text


def test_init_github_points_doctor_at_the_runner(repo: Path) -> None:
    """A laptop holds no agent logins when the agents live on the runner."""
    res = invoke(["init", "--github", "--source", f"acme/magi@{SHA}"])
    assert "magi doctor --runner" in res.output
    assert "then: magi doctor " not in res.output


def _on(flow: str) -> str:
    return flow.split("\non:\n", 1)[1].split("\npermissions:", 1)[0]


def test_init_github_writes_the_serverless_workflow_its_triggers_on(repo: Path) -> None:
    """Without --receiver the workflow runs on the label and the comments itself (its
    receive job runs the App's handlers); nothing else of the template changes."""
    assert invoke(["init", "--github", "--source", f"acme/magi@{SHA}"]).exit_code == 0
    flow = (repo / ".github" / "workflows" / "magi.yml").read_text()
    on = _on(flow)
    assert "\n  issues:\n    types: [labeled, unlabeled]\n" in on
    assert "\n  issue_comment:" in on
    assert "#|" not in flow
    from magi.config.workflow import serverless

    assert serverless(flow)


def test_init_github_receiver_leaves_the_triggers_off(repo: Path) -> None:
    """--receiver: a receiver hears the same events, so the workflow's own stay commented
    (each event would otherwise be acted on twice)."""
    res = invoke(["init", "--github", "--receiver", "--source", f"acme/magi@{SHA}"])
    assert res.exit_code == 0, res.output
    flow = (repo / ".github" / "workflows" / "magi.yml").read_text()
    assert "\n  issues:" not in _on(flow)
    assert "\n  # issues:" in _on(flow)
    from magi.config.workflow import edited, serverless

    assert not serverless(flow)
    assert edited(flow) is False  # stamped as magi wrote it
