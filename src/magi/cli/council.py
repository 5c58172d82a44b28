"""``magi council``: one question to a weighted, blind panel; the matrix; exit code by verdict.

Exit codes: 0 passed, 1 rejected (or the council failed), 13 no consensus or
inconclusive, 14 a review approved with conditions, 3 a config that cannot seat a council
(no council), 130 interrupted (the record stays resumable with ``--resume``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from magi.cli.app import app, config_path, console, emit
from magi.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from magi.model.config import Config
    from magi.state.council import CouncilRun
    from magi.state.store import Store

MODES = ("decision", "research", "review")


def _store() -> Store:
    from magi.state.store import Store, magi_home

    return Store(magi_home())


def _print(store: Store, rec: CouncilRun, *, json_: bool, markdown: bool = False) -> None:
    from magi.council.matrix import to_json
    from magi.council.render import comment_text, posting_policy, terminal
    from magi.council.session import record_path

    path = record_path(store, rec)
    if json_:
        typer.echo(json.dumps(to_json(rec, path), indent=2, ensure_ascii=False))
    elif markdown:
        # What GitHub would get: the same text through the same posting gate.
        from magi.core.threads.posting import gate

        policy = posting_policy(rec, ((str(store.home), "<magi home>"),))
        typer.echo(gate(comment_text(rec, path), policy).text, nl=False)
    else:
        emit(terminal(rec, path))


def show_council(store: Store, run_id: str, *, json_: bool, markdown: bool = False) -> None:
    """``magi show`` for a council record (``--markdown``: the comment GitHub would get)."""
    from magi.state.council import load_council

    _print(store, load_council(store, run_id), json_=json_, markdown=markdown)


def latest_council() -> bool:
    """Show the newest record when it is a council's (bare ``magi``); whether it was."""
    from magi.state.council import is_council

    store = _store()
    run_id = store.latest()
    if run_id is None or not is_council(store, run_id):
        return False
    show_council(store, run_id, json_=False)
    return True


def council_summary(store: Store, run_id: str) -> dict[str, object]:
    """A council's line in ``magi list``: its verdict stands where a winner would."""
    from magi.report import first_line
    from magi.state.council import load_council

    rec = load_council(store, run_id)
    return {
        "id": rec.id,
        "kind": rec.kind,
        "status": rec.status.value,
        "winner": rec.verdict,
        "created_at": rec.created_at.isoformat(),
        "task": first_line(rec.question.cleaned, 200),
    }


def _finish(store: Store, rec: CouncilRun, *, json_: bool) -> None:
    from magi.core.council.rules import exit_code

    _print(store, rec, json_=json_)
    code = exit_code(rec.verdict) if rec.verdict is not None else 1
    if code:
        raise typer.Exit(code)


def _setup(explicit: Path | None) -> tuple[Config, dict[str, str]]:
    """The config (with its roster) and the agents that cannot sit, with why."""
    from magi.engine.diagnose import diagnose

    d = diagnose(Path.cwd(), explicit, os.environ)
    if d.config is None:
        config_problems = [p.message for p in d.problems if p.exit_code == 3]
        lines = "\n".join(f"  {m}" for m in config_problems or [p.message for p in d.problems])
        raise ConfigError(f"no council can be seated:\n{lines}")
    missing = {e.agent.id: f"`{e.executable}` is not on PATH" for e in d.roster if e.path is None}
    return d.config, missing


@app.command("council")
def council(
    ctx: typer.Context,
    question: Annotated[list[str] | None, typer.Argument(help="The question.")] = None,
    file: Annotated[
        Path | None, typer.Option("--file", help="Read the question from a file.", dir_okay=False)
    ] = None,
    mode: Annotated[str, typer.Option("--mode", help="decision | research | review")] = "decision",
    panel: Annotated[str | None, typer.Option("--panel", help="A [council.panels] name.")] = None,
    evidence: Annotated[
        list[Path] | None,
        typer.Option(
            "--evidence", help="A file every seat gets byte for byte (repeatable).", dir_okay=False
        ),
    ] = None,
    risk: Annotated[
        str | None, typer.Option("--risk", help="Review tier: low | medium | high | critical.")
    ] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue a council.")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the matrix as JSON.")] = False,
    config: Annotated[
        Path | None, typer.Option("--config", help="Use this config file alone.", dir_okay=False)
    ] = None,
) -> None:
    """Put one question to a weighted, blind panel; code counts; the matrix shows who said what."""
    from magi.agents.base import CancelToken
    from magi.cli.progress import TerminalReporter
    from magi.core.text.bounds import decode_task
    from magi.council.session import resume as resume_council
    from magi.council.session import start
    from magi.engine import interruptible
    from magi.seats import Cancelled, SilentReporter

    store = _store()
    cancel = CancelToken()

    def progress() -> TerminalReporter | None:
        # Progress goes to the terminal only: --json output must stay one JSON document.
        return None if json_ else TerminalReporter(console())

    if resume is not None:
        run_id = store.resolve(resume)
        reporter = progress()
        with interruptible(cancel, reporter or SilentReporter(), run_id) as caught:
            try:
                rec = resume_council(
                    store, run_id, environ=os.environ, cancel=cancel, reporter=reporter
                )
            except Cancelled:
                typer.echo(f"interrupted: magi council --resume {run_id}", err=True)
                raise typer.Exit(caught.exit_code) from None
            finally:
                if reporter is not None:
                    reporter.close()
        _finish(store, rec, json_=json_)
        return
    if mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}, not {mode!r}")
    if risk is not None and risk not in ("low", "medium", "high", "critical"):
        raise UsageError(f"--risk must be low, medium, high or critical, not {risk!r}")
    if file is not None and question:
        raise UsageError("give the question as text or with --file, not both")
    if file is not None:
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise UsageError(f"--file {file}: {exc.strerror or exc}") from None
        text, source = decode_task(data, f"--file {file}"), f"file:{file}"
    elif question:
        text, source = " ".join(question), "cli"
    else:
        raise UsageError('no question: magi council "..." or --file PATH')
    if not text.strip():
        raise UsageError("the question is empty")
    cfg, missing = _setup(config_path(ctx, config))
    bodies = []
    for i, path in enumerate(evidence or []):
        try:
            bodies.append((f"file-{i + 1}", str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--evidence {path}: {exc}") from exc
    reporter = progress()
    with interruptible(cancel, reporter or SilentReporter(), "<council>") as caught:
        try:
            rec = start(
                store,
                question=text,
                source=source,
                mode=mode,
                config=cfg,
                panel=panel,
                missing=missing,
                evidence=bodies,
                risk=risk,
                environ=os.environ,
                cancel=cancel,
                reporter=reporter,
            )
        except Cancelled:
            latest = store.latest()
            typer.echo(f"interrupted: magi council --resume {latest}", err=True)
            raise typer.Exit(caught.exit_code) from None
        finally:
            if reporter is not None:
                reporter.close()
    _finish(store, rec, json_=json_)


def demo_council(where: Path | None) -> None:
    """``magi demo council``: the offline decision council and its matrix."""
    from magi.demo.council import run_council_demo

    rec, home = run_council_demo(where, python=sys.executable)
    from magi.state.store import Store

    store = Store(home / "magi-home")
    _print(store, rec, json_=False)
    typer.echo(f"\nSee it again with:  MAGI_HOME={home / 'magi-home'} magi show {rec.id}")
