"""Preflight: what `magi doctor` checks, before a run spends anything; every problem at once."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from magi.engine.diagnose import diagnose
from magi.errors import PreflightError
from magi.graph.merge import preflight as merge_preflight
from magi.model.config import Config
from magi.seats import Reporter
from magi.seats.jailing import refuse_unjailed


def preflight(
    cwd: Path,
    config_path: Path | None,
    environ: Mapping[str, str],
    reporter: Reporter,
    *,
    auth_check: bool = True,
    action: bool = False,
) -> Config:
    """The config a run would use, or a ``PreflightError`` listing every problem found.

    ``auth_check`` includes each seated agent's login (see ``magi.engine.logins``).
    ``action``: the run is the Action's, so its merge is the pull request whatever
    ``merge.mode`` says (a runner's checkout is thrown away after the job).
    """
    d = diagnose(cwd, config_path, environ, auth_check=auth_check)
    errors = [p for p in d.problems if p.severity == "error"]
    for p in d.problems:
        if p.severity == "warning":
            reporter.note(p.message, "warn")
    if errors or d.config is None:
        lines = "\n".join(f"  {p.message}" for p in errors) or "  (no config could be resolved)"
        raise PreflightError(
            f"the run cannot start:\n{lines}\n`magi doctor` shows the whole picture",
            d.exit_code or 1,
        )
    if action:
        if d.jail is not None:
            refuse_unjailed(d.jail, {"GITHUB_ACTIONS": "true"})
        if d.config.merge.mode == "local":
            reporter.note("merge.mode = 'local' does not apply on a runner: the PR is the merge")
        merge = d.config.merge.model_copy(update={"mode": "pr"})
        update: dict[str, object] = {"merge": merge}
        if d.config.blind.seed is not None:
            # The labels are shuffle_labels(n, seed) over [roles] implementers: with both in
            # the repository, every reader would know each label's author before the tally.
            reporter.note(
                "[blind] seed is not used on a runner: with it and [roles] implementers, "
                "anyone who reads the repository could tell each label's author before the "
                "tally; the seed is drawn afresh (it reproduces a run locally: magi run --seed)",
                "warn",
            )
            update["blind"] = d.config.blind.model_copy(update={"seed": None})
        return d.config.model_copy(update=update)
    merge_preflight(d.config)  # merge.mode = "pr" is refused before anything is spent
    return d.config
