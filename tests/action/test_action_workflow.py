"""workflows/magi.yml and action.yml keep the rules actionlint and zizmor cannot see."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from action_workflow_helpers import jobs as _jobs
from action_workflow_helpers import run_blocks as _run_blocks
from magi.model.config import Github

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = (ROOT / "workflows" / "magi.yml").read_text()
ACTION = (ROOT / "action.yml").read_text()


@pytest.mark.parametrize("text", [WORKFLOW, ACTION], ids=["workflow", "action"])
def test_no_expression_is_spliced_into_a_script(text):
    """Inputs reach scripts only through env: a `${{ }}` in run: is script injection."""
    blocks = _run_blocks(text)
    assert blocks
    assert [b for b in blocks if "${{" in b] == []


def test_every_action_is_pinned_by_a_full_commit_sha():
    """A tag can be moved; a 40-hex SHA cannot."""
    uses = re.findall(r"^\s*(?:- )?uses: (\S+)", WORKFLOW, re.M)
    assert uses
    assert [u for u in uses if not re.search(r"@[0-9a-f]{40}$", u)] == []


def test_every_job_states_its_permissions_and_none_asks_for_id_token():
    """Explicit, minimal permissions per job; no OIDC token anywhere."""
    jobs = _jobs(WORKFLOW)
    assert set(jobs) == {
        "task",
        "compete",
        "publish",
        "council-task",
        "council",
        "council-publish",
        "land-read",
        "land",
        "land-publish",
        "rebase",
        "receive",
    }
    for name, block in jobs.items():
        assert "    permissions:" in block, name
    assert "id-token:" not in WORKFLOW
    assert "permissions: {}" in WORKFLOW.split("\njobs:\n")[0]


@pytest.mark.parametrize("job", ["compete", "council", "land"])
def test_the_agents_job_holds_no_credential(job):
    """compete and council read contents only, keep no checkout credential, get no secret."""
    compete = _jobs(WORKFLOW)[job]
    perms = re.search(r"    permissions:\n((?:      .*\n)+)", compete)
    assert perms
    assert [ln.split("#")[0].strip() for ln in perms.group(1).splitlines()] == ["contents: read"]
    assert "secrets." not in compete
    # The job's read token reaches one step of compete, the one that fetches the day's run
    # records for [budget] day_usd (as actions/checkout uses it for the checkout): in that
    # step's env alone, never in magi's step, never persisted.
    uses = compete.count("github.token")
    assert uses == (1 if job == "compete" else 0)
    if uses:
        step = compete[compete.index("- name: The run records") :]
        step = step[: step.index("\n      - ")]
        assert "GH_TOKEN: ${{ github.token }}" in step
        assert "uses:" not in step
        assert "git config" not in step
        assert "--global" not in step
    assert not re.search(r"^\s+token:", compete, re.M)  # no step is given a token input
    assert compete.count("persist-credentials: false") == compete.count("actions/checkout@")


def test_publish_writes_with_an_app_token_scoped_to_this_repository():
    """The App token, never GITHUB_TOKEN, so magi's pushes and PR trigger the repo's CI."""
    publish = _jobs(WORKFLOW)["publish"]
    assert "actions/create-github-app-token@" in publish
    assert "repositories: ${{ github.event.repository.name }}" in publish
    assert "token: ${{ steps.app-token.outputs.token }}" in publish
    assert "needs: [task, compete]" in publish
    assert "persist-credentials: false" in publish


def test_the_default_runner_labels_are_the_configs():
    """runs-on falls back to [github] runner_labels' default."""
    m = re.search(r"fromJSON\(inputs\.runner-labels \|\| '(\[.*?\])'\)", WORKFLOW)
    assert m
    assert json.loads(m.group(1)) == Github().runner_labels


def test_a_concurrency_group_per_issue_and_command_and_per_pr():
    """Two competitions for one issue never overlap; one landing job per PR at a time; a
    council or a review is its comment's own, so it neither waits behind a competition nor
    replaces another pending question."""
    assert "format('magi-pr-{0}', inputs.pr)" in WORKFLOW
    assert "format('magi-{0}-comment-{1}', inputs.command, inputs.comment)" in WORKFLOW
    assert (
        "format('magi-{0}-issue-{1}', inputs.command || (github.event.issue.pull_request "
        "&& 'merge' || 'compete'), inputs.issue || github.event.issue.number)" in WORKFLOW
    )
    assert "cancel-in-progress: false" in WORKFLOW


def test_every_artifact_can_be_uploaded_again_by_a_re_run():
    """`Re-run jobs` uploads under the same name: without overwrite it fails with 409."""
    uploads = re.findall(
        r"uses: actions/upload-artifact@.*?(?=\n      - |\n  \w|\Z)", WORKFLOW, re.S
    )
    assert uploads
    for step in uploads:
        assert "overwrite: true" in step, step


def test_the_action_outputs_what_the_workflow_reads():
    """run-id, status, pr-number come out of the composite action."""
    for name in ("run-id", "status", "pr-number", "artifact-dir"):
        assert re.search(rf"^  {name}:\n", ACTION, re.M), name


def _run_sh(tmp_path: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    """action/run.sh with a stand-in `magi` on PATH that records its argv."""
    import os
    import subprocess

    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    log = tmp_path / "argv"
    stub = bindir / "magi"
    stub.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{log}"\n')
    stub.chmod(0o755)
    full = {"PATH": f"{bindir}:{os.environ['PATH']}", **env}
    res = subprocess.run(
        ["bash", str(ROOT / "action" / "run.sh")],
        env=full,
        capture_output=True,
        check=False,
        timeout=120,
    )
    return res.returncode, log.read_text().splitlines() if log.exists() else []


def test_run_sh_turns_inputs_into_argv_never_the_token(tmp_path):
    """publish gets its token from the environment, never as an argument."""
    code, argv = _run_sh(
        tmp_path,
        {
            "MAGI_ACTION_COMMAND": "publish",
            "MAGI_ISSUE": "7",
            "MAGI_RUN": "20261201-000000-abcd",
            "MAGI_GITHUB_TOKEN": "ghs_secret",
        },
    )
    assert code == 0
    assert argv == ["action", "publish", "--issue", "7", "--run", "20261201-000000-abcd"]


def test_run_sh_refuses_a_token_for_compete(tmp_path):
    """The agents job's step must not be handed a token at all."""
    code, argv = _run_sh(
        tmp_path,
        {"MAGI_ACTION_COMMAND": "compete", "MAGI_ISSUE": "7", "MAGI_GITHUB_TOKEN": "ghs_x"},
    )
    assert code == 2
    assert argv == []


@pytest.mark.parametrize("command", ["compete", "council", "review", "land"])
def test_run_sh_refuses_the_app_key_for_every_agents_command(tmp_path, command):
    """The key that seals magi's markers never reaches a job whose agents read environs."""
    env = {
        "MAGI_ACTION_COMMAND": command,
        "MAGI_ISSUE": "7",
        "MAGI_COMMENT": "1",
        "MAGI_INPUT_DIR": "in",
        "MAGI_PR": "3",
        "MAGI_INPUT_FILE": "f",
        "MAGI_MARKER_KEY": "-----BEGIN RSA PRIVATE KEY-----",
    }
    code, argv = _run_sh(tmp_path, env)
    assert code == 2
    assert argv == []


def test_no_agents_job_is_given_the_app_key():
    """In the workflow, `app-key` appears only in jobs that run no agent."""
    jobs = re.split(r"\n  (?=[a-z-]+:\n)", WORKFLOW.split("\njobs:\n", 1)[1])
    agents = {j.split(":", 1)[0].strip(): j for j in jobs}
    assert {"compete", "council", "land"} <= set(agents)
    for name in ("compete", "council", "land"):
        assert "app-key" not in agents[name], name
        assert "MAGI_APP_PRIVATE_KEY" not in agents[name], name
    assert "app-key" in agents["publish"]


def test_run_sh_hands_admit_the_event_github_wrote(tmp_path):
    """admit reads GITHUB_EVENT_NAME/PATH and the permission the step looked up."""
    code, argv = _run_sh(
        tmp_path,
        {
            "MAGI_ACTION_COMMAND": "admit",
            "GITHUB_EVENT_NAME": "issues",
            "GITHUB_EVENT_PATH": "/e.json",
            "MAGI_PERMISSION": "write",
            "MAGI_ISSUE_FILE": "issue/comments.json",
        },
    )
    assert code == 0
    assert argv == [
        "action", "admit", "--event-name", "issues", "--event-file", "/e.json",
        "--permission", "write", "--comments-file", "issue/comments.json",
    ]  # fmt: skip


def test_council_publish_writes_with_an_app_token_and_reads_the_comment_by_id():
    """The question reaches the runner as a comment id; only council-publish writes."""
    jobs = _jobs(WORKFLOW)
    assert "issues/comments/$COMMENT" in jobs["council-task"]
    assert "inputs.comment" not in "".join(_run_blocks(WORKFLOW))
    publish = jobs["council-publish"]
    assert "actions/create-github-app-token@" in publish
    assert "permission-checks: write" in publish
    assert "needs: [council-task, council]" in publish
    assert "secrets." not in jobs["council-task"]


def test_run_sh_maps_council_and_publish_council(tmp_path):
    """council/review run `magi action council`; their publish gets the token from env only."""
    base = {"MAGI_ISSUE": "7", "MAGI_COMMENT": "42", "MAGI_INPUT_DIR": "/in"}
    code, argv = _run_sh(tmp_path, {**base, "MAGI_ACTION_COMMAND": "review"})
    assert code == 0
    assert argv == [
        "action", "council", "--command", "review", "--issue", "7",
        "--comment", "42", "--input-dir", "/in",
    ]  # fmt: skip
    code, argv = _run_sh(
        tmp_path, {**base, "MAGI_ACTION_COMMAND": "publish-council", "MAGI_GITHUB_TOKEN": "ghs_s"}
    )
    assert code == 0
    assert "ghs_s" not in argv
    assert argv[:4] == ["action", "publish-council", "--command", "council"]


def test_run_sh_refuses_a_token_for_council(tmp_path):
    """The council job runs agents: no token."""
    env = {"MAGI_ACTION_COMMAND": "council", "MAGI_ISSUE": "7", "MAGI_GITHUB_TOKEN": "ghs_x"}
    code, argv = _run_sh(tmp_path, env)
    assert code == 2
    assert argv == []


def test_run_sh_hands_claim_and_merge_the_event_never_the_token(tmp_path):
    """claim and merge read the event GitHub wrote; the token stays in the environment."""
    event = {"GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": "/e.json"}
    token = {"MAGI_GITHUB_TOKEN": "ghs_secret"}
    code, argv = _run_sh(
        tmp_path, {**event, **token, "MAGI_ACTION_COMMAND": "claim", "MAGI_ISSUE": "7"}
    )
    assert code == 0
    assert argv == ["action", "claim", "--issue", "7", "--event-file", "/e.json"]
    merge = {**event, **token, "MAGI_ACTION_COMMAND": "merge", "MAGI_APP_SLUG": "magi-app"}
    code, argv = _run_sh(tmp_path, merge)
    assert code == 0
    assert argv == [
        "action", "merge", "--event-name", "issue_comment", "--event-file", "/e.json",
    ]  # fmt: skip
    for cmd in ("claim", "merge"):  # without a token, or for merge without the App's slug
        code, _ = _run_sh(tmp_path, {**event, "MAGI_ACTION_COMMAND": cmd, "MAGI_ISSUE": "7"})
        assert code != 0
    code, _ = _run_sh(tmp_path, {**event, **token, "MAGI_ACTION_COMMAND": "merge"})
    assert code != 0


def test_the_task_job_runs_on_a_dispatch_only_and_claims_nothing():
    """The claim is the App's (or the receive job's, which runs the App's handler): the
    task job only reads, for the run that claim dispatched, never on the trigger itself
    (a label read there too would start the issue twice)."""
    task = _jobs(WORKFLOW)["task"]
    perms = re.search(r"    permissions:\n((?:      .*\n)+)", task)
    assert perms
    own = [ln.split("#")[0].strip() for ln in perms.group(1).splitlines()]
    assert own == ["issues: read", "contents: read"]  # contents: the claim's pinned text
    assert "if: github.event_name == 'workflow_dispatch' && inputs.command == 'compete'" in task
    assert "create-github-app-token" not in task
    assert "command: claim" not in task
    pin = task.split("command: pin", 1)[1].split("\n      - ", 1)[0]
    assert "token: ${{ github.token }}" in pin  # the pin is read with the job's read token


def test_without_a_receiver_the_triggers_go_to_the_receive_job_alone():
    """The label, the comments and CI finishing start the receive job (the App's handlers);
    no other job runs on them, and each receive run is a concurrency group of its own."""
    receive = _jobs(WORKFLOW)["receive"]
    assert "command: receive" in receive
    for name, block in _jobs(WORKFLOW).items():
        cond = re.search(r"^    if: (.*?)\n    [a-z-]+:", block, re.M | re.S)
        if name != "receive" and cond:
            assert "github.event_name == 'issue" not in cond.group(1), name
    assert "format('magi-receive-{0}', github.run_id)" in WORKFLOW
    # magi's own comments (its App token starts workflows) start no job: bots are skipped
    # for the label and the comments, as the App's edge skips them.
    cond = receive.split("    if: >-\n", 1)[1].split("\n    runs-on:", 1)[0]
    for event in ("issues", "issue_comment"):
        part = cond.split(f"github.event_name == '{event}'", 1)[1].split("\n      ||", 1)[0]
        assert "github.event.sender.type != 'Bot'" in part, event


def test_the_template_uses_one_placeholder_that_names_no_repository_and_init_replaces():
    """Every use of magi's action in the template is the one placeholder (no GitHub owner
    has a `_`, so it can never run somebody else's code), docs say `magi init --github`
    writes the pinned copy, and nothing names a tag."""
    from magi.config.workflow import PLACEHOLDER

    uses = re.findall(r"^\s*(?:- )?uses: ((?!actions/)\S+)", WORKFLOW, re.M)
    assert len(uses) >= 10
    assert set(uses) == {PLACEHOLDER}
    docs = (ROOT / "docs" / "action.md").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "magi init --github" in docs
    assert "magi init --github" in readme
    for text in (WORKFLOW, docs, readme):
        assert "magi-dev" not in text
        assert not re.search(r"@v\d", text.split("actions/")[0])


def test_every_landing_job_is_named_for_its_pr_so_a_crash_releases_the_lock():
    """The App finds the PR of a failed landing job by `[magi land #<pr>]` in its name."""
    from magi.app.land_lock import JOB_TAG

    jobs = _jobs(WORKFLOW)
    for name in ("land-read", "land", "land-publish", "rebase"):
        title = re.search(r"^    name: (.*)$", jobs[name], re.M)
        assert title, name
        m = JOB_TAG.search(title.group(1).replace("${{ inputs.pr }}", "12"))
        assert m, name
        assert m.group(1) == "12", name


MINTING = ["receive", "publish", "council-publish", "land-publish", "rebase"]
REFUSED = "- name: Say on the thread why GitHub refused magi's App token"
THREADS = {
    "receive": "${{ github.event.issue.number }}",
    "publish": "${{ needs.task.outputs.issue }}",
    "council-publish": "${{ inputs.issue }}",
    "land-publish": "${{ inputs.pr }}",
    "rebase": "${{ inputs.pr }}",
}


def _refusal_step(job: str) -> str:
    block = _jobs(WORKFLOW)[job]
    return block[block.index(REFUSED) :]


@pytest.mark.parametrize("job", MINTING)
def test_a_refused_app_token_is_said_on_the_thread_with_the_jobs_own_token(job):
    """Every job that mints the App's token says on the thread why GitHub refused it
    (``magi action token-refused``, tested in test_action_token_refused.py): its own token
    writes issues for that step alone, and besides it only the artifact downloads see it
    (``actions: read``, to read by run)."""
    block = _jobs(WORKFLOW)[job]
    step = _refusal_step(job)
    assert "if: failure() && steps.app-token.outcome == 'failure'" in step
    downloads = block.count("github-token: ${{ github.token }}")
    assert block.count("github.token") == 1 + downloads
    assert re.search(r"^          token: \$\{\{ github.token \}\}", step, re.M)
    assert "command: token-refused" in step
    assert "client-id: ${{ secrets.MAGI_APP_CLIENT_ID }}" in step
    assert "app-key: ${{ secrets.MAGI_APP_PRIVATE_KEY }}" in step
    assert f"issue: {THREADS[job]}" in step
    perms = re.search(r"    permissions:.*\n((?:      .*\n)+)", block)
    assert perms
    wanted = {ln.split("#")[0].strip() for ln in perms.group(1).splitlines()}
    assert "issues: write" in wanted
    assert wanted <= {"issues: write", "contents: read", "actions: read"}


def test_the_task_job_stays_read_only_and_says_nothing_with_its_token():
    """The job that reads the hostile issue text first keeps a read-only token."""
    assert REFUSED not in _jobs(WORKFLOW)["task"]


def test_the_agents_job_knows_the_labels_it_was_scheduled_with():
    """compete hands a seat whose agent needs other labels on: it must know its own, the
    same expression its runs-on reads (and publish may dispatch the next stage)."""
    block = _jobs(WORKFLOW)["compete"]
    runs_on = re.search(r"^    runs-on: \$\{\{ fromJSON\((.*)\) \}\}$", block, re.M)
    assert runs_on
    assert f"MAGI_JOB_LABELS: ${{{{ {runs_on.group(1)} }}}}" in block
    assert [j for j, b in _jobs(WORKFLOW).items() if "MAGI_JOB_LABELS" in b] == ["compete"]
    assert "permission-actions: write" in _jobs(WORKFLOW)["publish"]


def test_the_park_channel_reaches_compete_and_publish_and_no_other_job():
    """The dispatch's `park` input is what a run asks a `/magi stop` with (compete) and
    hands to its next stage (publish); action.yml hands it to magi as MAGI_PARK."""
    jobs = _jobs(WORKFLOW)
    passing = [j for j, b in jobs.items() if "park: ${{ inputs.park }}" in b]
    assert passing == ["compete", "publish"]
    assert "MAGI_PARK: ${{ inputs.park }}" in ACTION
    assert re.search(r"^      park:\n", WORKFLOW.split("workflow_dispatch:", 1)[1], re.M)


def test_a_job_with_a_token_downloads_by_run_and_an_agents_job_never_with_a_token():
    """GitHub's "Re-run failed jobs" leaves the earlier attempt's artifacts to the re-run job: a job
    that holds a token names the run (the REST path, by run, not by attempt) with its own
    read-only token; an agents job is never given one for it (docs/action.md)."""
    downloads = 0
    for name, block in _jobs(WORKFLOW).items():
        steps = re.findall(
            r"uses: actions/download-artifact@.*?(?=\n      - |\n  \w|\Z)", block, re.S
        )
        downloads += len(steps)
        for step in steps:
            if name in {"compete", "council", "land"}:
                assert "github-token" not in step, name
                assert "run-id" not in step, name
                continue
            assert "run-id: ${{ github.run_id }}" in step, name
            assert "github-token: ${{ github.token }}" in step, name
            perms = re.search(r"    permissions:.*?\n((?:      .*\n)+)", block)
            assert perms, name
            assert "actions: read" in perms.group(1), name
    assert downloads == 7
