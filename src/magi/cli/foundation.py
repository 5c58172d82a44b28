"""The commands that spend nothing: ``init``, ``config schema``, ``list`` and ``show``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from magi.cli.app import app, emit
from magi.errors import ConfigError, StateError, UsageError
from magi.model.run import Run

if TYPE_CHECKING:
    from magi.state.store import Store

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
config_app = typer.Typer(help="Inspect the config format.", no_args_is_help=True)
app.add_typer(config_app, name="config")


def _store() -> Store:
    # Imported here so `magi --help` never pays for (or trips on) the store's imports.
    from magi.state.store import Store, magi_home

    return Store(magi_home())


def latest_run() -> Run | None:
    """The newest run on disk, or None when there is none."""
    store = _store()
    run_id = store.latest()
    return None if run_id is None else store.load_run(run_id)


@dataclass(frozen=True)
class _FromConfig:
    """What the workflow takes from the repository's config: the agents jobs' labels as the
    App sends them (every agent's; and a competition's first stage, ``[github]
    runner_labels``) and ``[github] label``."""

    runner_labels: list[str]
    first_stage: list[str]
    label: str


def _from_config(root: Path, config_text: str | None) -> _FromConfig:
    """The repository's layers alone, with ``config_text`` as ``.magi/config.toml`` when
    init is about to write that."""
    from magi.config.load import load_repo_dir
    from magi.core.seats.runners import first_stage, job_labels

    given = {".magi/config.toml": config_text} if config_text is not None else None
    try:
        config = load_repo_dir(root, given).config
    except ConfigError as exc:
        raise UsageError(f"the workflow takes its runner labels from the config: {exc}") from None
    return _FromConfig(job_labels(config), first_stage(config), config.github.label)


def _ci_names(root: Path, given: list[str] | None) -> tuple[list[str], list[str]]:
    """The CI workflows the receive job waits for (``--ci``, else those found), and what
    was passed over."""
    if given:
        return given, []
    from magi.config.ci_workflows import ci_workflows

    found = ci_workflows(root)
    return found.names, found.skipped


def _pinned_workflow(
    given: str | None, labels: _FromConfig, receiver: bool = False, ci: Sequence[str] = ()
) -> tuple[str, str]:
    """The workflow to write and the pin it carries; a UsageError saying what to pass."""
    from magi.config.source import installed_source, parse_source
    from magi.config.workflow import render_workflow

    if given is not None:
        try:
            src = parse_source(given)
        except ValueError as exc:
            raise UsageError(f"--source: {exc}") from None
    else:
        found = installed_source()
        if found is None or found.pin is None:
            built = f" (built from commit {found.commit[:12]})" if found else ""
            raise UsageError(
                f"this magi does not know the GitHub repository it was built from{built}: "
                "pass --source MAGI_REPO@SHA, the magi repository and the full commit your "
                "workflow should run (install magi from it with pip install "
                "'magi-election[github] @ git+https://github.com/MAGI_REPO@SHA')"
            )
        src = found
    try:
        text = render_workflow(
            src, labels.runner_labels, labels.first_stage,
            receiver=receiver, label=labels.label, ci=ci,
        )  # fmt: skip
        return text, src.pin or ""
    except ValueError as exc:
        raise UsageError(str(exc)) from None


@app.command()
def init(
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Overwrite an existing file (with --github: the workflow; the config is kept).",
        ),
    ] = False,
    github: Annotated[
        bool,
        typer.Option(
            "--github",
            help="Also write .github/workflows/magi.yml, its magi pinned to this magi's commit.",
        ),
    ] = False,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="--github: pin to MAGI_REPO@SHA (magi's repository and commit) instead of "
            "the magi installed here.",
        ),
    ] = None,
    receiver: Annotated[
        bool,
        typer.Option(
            "--receiver",
            help="--github: you run magi's receiver (docs/receiver.md), so the workflow's "
            "own triggers stay off; without it the workflow runs the App's handlers itself.",
        ),
    ] = False,
    ci: Annotated[
        list[str] | None,
        typer.Option(
            "--ci",
            help="--github: the name of a CI workflow whose completion lets a waiting `merge` "
            "merge (repeatable; default: the named workflows of .github/workflows that run "
            "on pull requests or pushes).",
        ),
    ] = None,
    push: Annotated[
        bool,
        typer.Option(
            "--push",
            help="--github: also commit magi's two files (only them), push the branch to "
            "origin and create the [github] label with the GitHub CLI (gh).",
        ),
    ] = False,
) -> None:
    """Write a commented starter .magi/config.toml for the agent CLIs on PATH."""
    from magi.agents.discover import find_clis
    from magi.config.starter import starter_config
    from magi.git.repo import Git

    root = Git.discover(Path.cwd()).root
    target = root / ".magi" / "config.toml"
    flow = root / ".github" / "workflows" / "magi.yml"
    wants_flow = github or source is not None or receiver
    if (push or ci) and not wants_flow:
        raise UsageError("--push and --ci go with --github (they are about the workflow)")
    if ci and receiver:
        raise UsageError(
            "--ci goes without --receiver: a receiver hears CI finishing itself, and the "
            "workflow's own workflow_run trigger stays off"
        )
    if wants_flow and flow.exists() and not force:
        raise UsageError(
            f"{flow} already exists; pass --force to rewrite it (a copy of it is kept "
            "when it may hold edits of yours)"
        )
    # --github writes the workflow for the config there is: an existing config is kept, even
    # with --force (which then overwrites the workflow alone); `magi init --force` remakes it.
    keep_config = wants_flow and target.exists()
    if target.exists() and not force and not github:
        raise UsageError(f"{target} already exists; pass --force to overwrite it")
    written = []
    starter = None
    if not keep_config:
        found = find_clis()
        starter = starter_config([cli.kind for cli in found])
    # Everything is checked before anything is written: a bad --source or config leaves the
    # repository as it was.
    pinned = replacing = None
    names: list[str] = []
    skipped: list[str] = []
    if wants_flow:
        from magi.cli.workflow_file import plan_replacement

        names, skipped = _ci_names(root, ci)
        settings = _from_config(root, starter)
        pinned = _pinned_workflow(source, settings, receiver, [] if receiver else names)
        replacing = plan_replacement(flow, pinned[0])
    if starter is not None:
        target.parent.mkdir(exist_ok=True)
        target.write_text(starter, encoding="utf-8")
        typer.echo(f"wrote {target}")
        written.append(".magi/config.toml")
        if found:
            for cli in found:
                typer.echo(f"  agent {cli.kind:<12} {cli.version or '?':<12} {cli.executable_path}")
        else:
            typer.echo(
                "  no agent CLI found on PATH: the [[agents]] entries are left commented out"
            )
    if pinned is not None and replacing is not None:
        text, pin = pinned
        kept = replacing.apply(text)
        written.append(".github/workflows/magi.yml")
        typer.echo(f"wrote {flow} (magi's action pinned to {pin})")
        for line in kept:
            typer.echo(f"  {line}")
        _say_ci(receiver, names, skipped)
    if push and pinned is not None:
        _push(root, settings.label)
        return
    # A run branches from the base's tip: an uncommitted config is not in the candidates'
    # trees, and every run would warn about a dirty tree.
    files_ = " ".join(written)
    typer.echo(
        f"next: commit it   (git add {files_} && git commit -m 'magi'):\n"
        "      runs branch from the base's tip, and an uncommitted config makes the tree dirty"
    )
    if pinned is not None:
        typer.echo(
            "then: add the repository secrets MAGI_APP_CLIENT_ID and MAGI_APP_PRIVATE_KEY "
            "(the App's client id and its .pem), install the App on this repository, and "
            "register a runner (docs/runner.md)"
        )
    if pinned is not None:  # the agents live on the runner: doctor here would miss them
        typer.echo(
            "then: on the runner, in a checkout of this repository: magi doctor --runner   "
            "(the CLIs, their logins, the jail and the runner's labels, where they run)"
        )
        return
    typer.echo(
        "then: magi doctor   (checks the CLIs, logins, the roster, the seats and the repository)"
    )


def _say_ci(receiver: bool, names: list[str], skipped: list[str]) -> None:
    if receiver:
        return
    if names:
        typer.echo(f"  a waiting `merge` merges when one of these completes: {', '.join(names)}")
    else:
        typer.echo(
            "  no CI workflow found to wait for: a `merge` said before the checks are green "
            "is said again once they are (or name them: --ci NAME)"
        )
    for line in skipped:
        typer.echo(f"  passed over {line}")


def _push(root: Path, label: str) -> None:
    """``--push``: the commit, the push and the label, then what is left to do."""
    from magi.cli.init_push import create_label, origin_repository, push_files

    files = [f for f in (".magi/config.toml", ".github/workflows/magi.yml") if (root / f).exists()]
    for line in push_files(root, files):
        typer.echo(line)
    typer.echo(create_label(origin_repository(root), label))
    typer.echo(
        f"next: label an issue `{label}` (the App installed on the repository, its two "
        "secrets set, a runner registered: docs/runner.md)"
    )


@config_app.command("schema")
def config_schema() -> None:
    """Print the JSON Schema of the config file."""
    from magi.config.load import config_json_schema

    typer.echo(json.dumps(config_json_schema(), indent=2))


def _summary(store: Store, run_id: str) -> dict[str, Any]:
    from magi.report import first_line
    from magi.state.council import is_council

    if is_council(store, run_id):
        from magi.cli.council import council_summary

        return council_summary(store, run_id)
    try:
        run = store.load_run(run_id)
    except StateError as exc:
        # One unreadable record must not hide the others from the listing.
        return {
            "id": run_id,
            "status": "unreadable",
            "winner": None,
            "created_at": None,
            "task": "",
            "error": exc.message,
        }
    return {
        "id": run.id,
        "status": run.status.value,
        "winner": run.tally.winner if run.tally else None,
        "created_at": run.created_at.isoformat(),
        "task": first_line(run.task.cleaned, 200),
        "waiting_on": [q.id for q in run.questions if q.status == "open" or q.parked_on],
    }


@app.command("list")
def list_runs(json_: JsonFlag = False) -> None:
    """List runs, newest first."""
    from rich.table import Table

    from magi.report import cells, first_line

    store = _store()
    rows = [_summary(store, run_id) for run_id in store.list_ids()]
    if json_:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo(f"no runs yet in {store.runs_dir}")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for col in ("id", "status", "winner", "created", "task"):
        table.add_column(col, no_wrap=col != "task", overflow="ellipsis")
    for row in rows:
        created = (row["created_at"] or "")[:16].replace("T", " ")
        task = row.get("error") or first_line(row["task"], 50)
        if row.get("waiting_on"):
            task = f"WAITING ON YOU: magi answer {row['waiting_on'][0]} · {task}"
        table.add_row(*cells(row["id"], row["status"], row["winner"] or "-", created, task))
    emit(table)


@app.command()
def show(
    run: Annotated[
        str | None, typer.Argument(help="Run id or a unique prefix of its 4-hex suffix.")
    ] = None,
    json_: JsonFlag = False,
    markdown: Annotated[
        bool,
        typer.Option(
            "--markdown",
            help="Print the GitHub comments a PR would carry (tally, transcripts), or a "
            "council's matrix comment.",
        ),
    ] = False,
) -> None:
    """Print the full report of a run (the latest when RUN is omitted)."""
    from magi.report import render, render_markdown, report_json

    if json_ and markdown:
        raise UsageError("--json and --markdown are two formats: pick one")
    store = _store()
    run_id = store.resolve(run) if run else store.latest()
    if run_id is None:
        raise StateError(f"no runs yet in {store.runs_dir}")
    from magi.state.council import is_council

    if is_council(store, run_id):
        from magi.cli.council import show_council

        show_council(store, run_id, json_=json_, markdown=markdown)
        return
    record = store.load_run(run_id)
    # A blocked or failed run still exits 0: this is a report, not the run itself.
    if json_:
        typer.echo(json.dumps(report_json(record), indent=2))
    elif markdown:
        typer.echo(render_markdown(record), nl=False)
    else:
        emit(render(record))
