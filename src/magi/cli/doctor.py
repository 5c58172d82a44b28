"""``magi doctor``: print what resolved and everything that would stop a run, all at once."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from magi.agents import census
from magi.cli.app import ConfigOption, app, config_path, emit
from magi.engine.diagnose import Diagnosis, diagnose
from magi.report import cells

if TYPE_CHECKING:
    from magi.core.seats.seating import Seating
    from magi.engine.runner_check import RunnerFacts

SEAT_FIELDS = ("implementers", "judges", "reviewers", "fixer", "planner")
SLOT_NOTE = "labels are drawn per run by seeded shuffle: implementer slot 1 is not label A"


def _fmt(value: Any, width: int = 70) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def config_values(d: Diagnosis) -> dict[str, dict[str, Any]]:
    """Each resolved key (dotted, one per table entry) with its value and the layer it came from."""
    if d.resolved is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for table, body in d.resolved.config.model_dump(mode="json").items():
        if isinstance(body, dict):
            for key, value in body.items():
                dotted = f"{table}.{key}"
                out[dotted] = {"value": value, "source": d.resolved.provenance(dotted)}
        else:
            out[table] = {"value": body, "source": d.resolved.provenance(table)}
    return out


def _agent_line(agent: dict[str, Any]) -> str:
    """An agent's settings on one line, leaving out what is unset."""
    parts = []
    for key, value in agent.items():
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if v is not None}
        if key != "id" and value not in (None, [], {}):
            parts.append(f"{key}={_fmt(value, 60)}")
    return "  ".join(parts)


def _source(d: Diagnosis, source: str) -> str:
    """A layer file, relative to the repository when it lives there (shorter, and greppable)."""
    if d.repo is not None and source != "default":
        path = Path(source)
        if path.is_relative_to(d.repo["root"]):
            return str(path.relative_to(d.repo["root"]))
    return source


def _seating_rows(seating: Seating) -> list[tuple[str, str]]:
    rows = []
    for name in SEAT_FIELDS:
        value = getattr(seating, name, None)
        if isinstance(value, tuple | list):
            shown = "  ".join(f"{i}:{agent}" for i, agent in enumerate(value, 1)) or "-"
        elif value is None:
            shown = "the winner's own author" if name == "fixer" else "-"
        else:
            shown = str(value)
        rows.append((name, shown))
    return rows


def _grid(rows: Sequence[tuple[str | Text, ...]], indent: int = 2) -> Padding:
    grid = Table.grid(padding=(0, 2))
    for i in range(max((len(r) for r in rows), default=1)):
        grid.add_column(no_wrap=i == 0)
    for row in rows:
        grid.add_row(*cells(*row))
    return Padding(grid, (0, 0, 0, indent))


def _heading(title: str, note: str = "") -> Text:
    text = Text(f"\n{title}", style="bold")
    if note:
        text.append(f"  ({note})", style="dim")
    return text


def _config_section(d: Diagnosis) -> list[RenderableType]:
    out: list[RenderableType] = [_heading("config")]
    if d.resolved is None:
        return [*out, Text("  not loaded: see problems below", style="dim")]
    files = [(str(i), str(p)) for i, p in enumerate(d.resolved.files, 1)]
    out.append(
        Text(
            "  files read, lowest precedence first:"
            if files
            else "  no config file found: every value is a default"
        )
    )
    if files:
        out.append(_grid(files, indent=4))
    tables: dict[str, list[tuple[str | Text, ...]]] = {}
    for dotted, entry in config_values(d).items():
        table, _, key = dotted.partition(".")
        source = _source(d, entry["source"])
        # Defaults recede so the values someone actually set stand out.
        style = "dim" if source == "default" else ""
        if table == "agents":
            for agent in entry["value"]:
                line = Text(_agent_line(agent), style=style)
                tables.setdefault("[[agents]]", []).append((agent["id"], line, f"← {source}"))
            continue
        row = (Text(f"{key} =", style=style), Text(_fmt(entry["value"]), style=style))
        tables.setdefault(f"[{table}]", []).append((*row, Text(f"← {source}", style=style)))
    for name, rows in tables.items():
        out += [Text(f"  {name}"), _grid(rows, indent=4)]
    return out


def _clis_section(d: Diagnosis) -> list[RenderableType]:
    rows = [(c.kind, c.version or "?", str(c.executable_path)) for c in d.clis]
    body: RenderableType = _grid(rows) if rows else Text("  none found", style="dim")
    return [_heading("agent CLIs on PATH"), body]


def _roster_section(d: Diagnosis) -> list[RenderableType]:
    if not d.roster:
        return []
    note = "built from the CLIs on PATH: no [[agents]] configured" if d.roster_from_path else ""
    rows = [
        (
            e.agent.id,
            e.agent.kind,
            e.path or f"missing: `{e.executable}` is not on PATH",
            _login(d, e.agent.id),
        )
        for e in d.roster
    ]
    out: list[RenderableType] = [_heading("roster", note), _grid(rows)]
    if d.seating is not None:
        out += [_heading("seats", SLOT_NOTE), _grid(_seating_rows(d.seating))]
    return out


def _login(d: Diagnosis, agent_id: str) -> Text:
    status = d.auth.get(agent_id)
    if status is None:
        return Text("")
    style = "green" if status.ok else "red" if status.ok is False else "yellow"
    return Text(f"login: {status.detail}", style=style)


def _repo_section(d: Diagnosis) -> list[RenderableType]:
    if d.repo is None:
        return [_heading("repository"), Text("  not a git repository", style="dim")]
    r = d.repo
    base = r.get("base") or "?"
    sha = r.get("base_sha")
    dirty = r.get("dirty")
    rows = [
        ("root", r["root"]),
        ("branch", r.get("branch") or "?"),
        ("base", f"{base} @ {sha[:12]}" if sha else f"{base} (not found)"),
        (
            "tree",
            "?"
            if dirty is None
            else "dirty (uncommitted work is not part of a run)"
            if dirty
            else "clean",
        ),
        ("agents", f"ended through {census.method()}"),
    ]
    return [_heading("repository"), _grid(rows)]


def _jail_section(d: Diagnosis) -> list[RenderableType]:
    if d.jail is None:
        return []
    j = d.jail
    rows = [
        ("in force", j.mode),
        ("asked", f"[sandbox] mode = {j.configured!r}"),
        ("why", j.reason),
    ]
    if j.fix:
        rows.append(("to change", j.fix))
    for n, (who, where) in enumerate(d.egress.items()):  # checks first, then each agent
        rows.append(("egress" if n == 0 else "", f"{who}: {where}"))
    out: list[RenderableType] = [_heading("jail"), _grid(rows)]
    for kind, found in d.jail_maps.items():
        note = "what one seat sees; the rest of / is never shown"
        cells_ = [(row.access, row.path, row.why) for row in found]
        out += [_heading(f"jail map: {kind}", note), _grid(cells_)]
    return out


def _problems_section(d: Diagnosis) -> list[RenderableType]:
    if not d.problems:
        return [_heading("problems"), Text("  none: a run can start")]
    rows = [
        (Text(p.severity, style="red" if p.severity == "error" else "yellow"), p.message)
        for p in sorted(d.problems, key=lambda p: p.severity != "error")
    ]
    verdict = (
        f"  a run could not start (exit {d.exit_code})"
        if d.exit_code
        else "  warnings only: a run can start"
    )
    return [_heading("problems"), _grid(rows), Text(verdict, style="bold")]


def _no_runner_key(facts: RunnerFacts) -> str:
    return "none" if facts.panel_key else "none (this runner alone resumes its runs)"


def _runner_section(facts: RunnerFacts) -> RenderableType:
    free = "?" if facts.free_bytes is None else f"{facts.free_bytes / 1024**3:.1f} GiB free"
    rows = [
        ("python", facts.python),
        ("git", facts.git or "not found"),
        ("MAGI_HOME", f"{facts.home} ({free})"),
        ("labels", ", ".join(facts.labels) or "not given (--labels)"),
        ("wanted", ", ".join(facts.wanted) or "?"),
        ("runner key", facts.runner_key or _no_runner_key(facts)),
    ]
    if facts.panel_key:
        rows.append(("panel key", f"{facts.panel_key} (it seats judges from their panels)"))
    if facts.labels:
        rows.append(("seats here", ", ".join(facts.serves) or "no agent of the roster"))
        rows += [(f"not {a}", f"lacks {', '.join(m)}") for a, m in facts.lacking.items()]
    return Group(_heading("runner", "run as the runner's service user"), _grid(rows))


def render(d: Diagnosis) -> RenderableType:
    """The doctor report as text."""
    return Group(
        *_config_section(d),
        *_clis_section(d),
        *_roster_section(d),
        *_repo_section(d),
        *_jail_section(d),
        *_problems_section(d),
    )


def as_json(d: Diagnosis) -> dict[str, Any]:
    """The doctor report as a JSON-ready dict."""
    seating: dict[str, Any] | None = None
    if d.seating is not None:
        seating = {}
        for name in SEAT_FIELDS:
            value = getattr(d.seating, name, None)
            seating[name] = list(value) if isinstance(value, tuple | list) else value
    return {
        "ok": d.exit_code == 0,
        "exit_code": d.exit_code,
        "config": {
            "files": [str(p) for p in d.resolved.files] if d.resolved else None,
            "values": config_values(d),
        },
        "clis": [
            {"kind": c.kind, "version": c.version, "path": str(c.executable_path)} for c in d.clis
        ],
        "roster_from_path": d.roster_from_path,
        "roster": [
            {"id": e.agent.id, "kind": e.agent.kind, "executable": e.executable, "path": e.path}
            for e in d.roster
        ],
        "seating": seating,
        "auth": {
            agent: {"ok": s.ok, "detail": s.detail, "fix": s.fix} for agent, s in d.auth.items()
        },
        "repo": d.repo,
        "jail": None
        if d.jail is None
        else {
            "mode": d.jail.mode,
            "configured": d.jail.configured,
            "reason": d.jail.reason,
            "fix": d.jail.fix,
            "egress": d.egress,
        },
        "jail_maps": {
            kind: [dataclasses.asdict(row) for row in found] for kind, found in d.jail_maps.items()
        },
        "process_census": census.method(),
        "problems": [
            {"severity": p.severity, "message": p.message, "exit_code": p.exit_code}
            for p in d.problems
        ],
    }


@app.command("runner-key")
def runner_key(
    new: Annotated[
        bool, typer.Option("--new", help="Make the key (refused when this runner has one).")
    ] = False,
    panel: Annotated[
        Path | None,
        typer.Option(
            "--panel",
            help="Write the pool's panel key to this new file, for a runner that only "
            "seats judges (its MAGI_HOME/panel.key).",
        ),
    ] = None,
) -> None:
    """Show, or make, the key the runners of a pool share: with it, a run stopped before its
    tally on one runner is carried on by another (docs/runner.md)."""
    import os

    from magi.state.runner_key import KEY_FILE, PANEL_FILE, load_key, new_key, write_panel
    from magi.state.store import magi_home

    home = magi_home(os.environ).expanduser()
    if panel is not None:
        written = write_panel(home, panel.expanduser())  # a MagiError is said on stderr
        emit(Text(f"{written.path}  panel key {written.fingerprint}"))
        emit(
            Text(
                f"Copy it to MAGI_HOME/{PANEL_FILE} of a runner that only seats judges, as its "
                "service user, mode 600, and give that runner no runner key: it can then "
                "open the panels its judges are sent (the candidates by label) and no run "
                "sealed for the pool. Delete this copy once it is there."
            )
        )
        return
    key = new_key(home) if new else load_key(home)  # a MagiError is said on stderr
    if key is None:
        emit(Text(f"no runner key at {home / KEY_FILE}; `magi runner-key --new` makes one"))
        return
    emit(Text(f"{key.path}  key {key.fingerprint}"))
    if new:
        emit(
            Text(
                "Copy it to MAGI_HOME of every other runner of the pool, as their service "
                f"user, mode 600 (scp -p {key.path} runner-2:<MAGI_HOME>/{KEY_FILE}); every "
                "runner's `magi runner-key` then shows the same key. Never put it in a "
                "repository secret or a job's environment: it is the runners' alone."
            )
        )


@app.command()
def doctor(
    ctx: typer.Context,
    config: ConfigOption = None,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
    no_auth_check: Annotated[
        bool,
        typer.Option(
            "--no-auth-check", help="Do not ask the agent CLIs whether they are logged in."
        ),
    ] = False,
    runner: Annotated[
        bool,
        typer.Option(
            "--runner",
            help="Also check this machine as a self-hosted runner (run it as the service user).",
        ),
    ] = False,
    labels: Annotated[
        str | None,
        typer.Option(
            "--labels",
            help="--runner: the runner's labels, comma-separated, to check [github] runner_labels.",
        ),
    ] = None,
) -> None:
    """Check the config, agent CLIs and their logins, roster, seats and repository."""
    import os

    from magi.engine.workflow_check import check_workflow

    d = diagnose(Path.cwd(), config_path(ctx, config), auth_check=not no_auth_check)
    check_workflow(d, runner=runner or labels is not None)
    facts = None
    if runner or labels is not None:
        from magi.engine.runner_check import check_runner

        facts = check_runner(d, os.environ, None if labels is None else labels.split(","))
    if json_:
        out = as_json(d)
        if facts is not None:
            out["runner"] = dataclasses.asdict(facts)
        typer.echo(json.dumps(out, indent=2))
    else:
        emit(render(d) if facts is None else Group(_runner_section(facts), render(d)))
    # Warnings alone exit 0: doctor fails only when `magi run` could not start.
    if d.exit_code:
        raise typer.Exit(d.exit_code)
