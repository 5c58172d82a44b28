"""What ``magi doctor`` finds: config layers, CLIs, roster, seats, repository, and problems.

Each check runs whatever failed before it: a broken config is one problem among others, and
the repository and CLI sections are still worth printing beside it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from magi.errors import AgentError, ConfigError, MagiError, RepoError

if TYPE_CHECKING:
    from magi.agents.discover import FoundCli
    from magi.agents.hookspecs import AuthStatus, KindSpec
    from magi.config.load import ResolvedConfig
    from magi.core.seats.seating import Seating
    from magi.engine.jail_map import MapRow
    from magi.model.config import AgentConfig, Config
    from magi.sandbox.bwrap import Decision


@dataclass(frozen=True)
class Problem:
    """One thing wrong; an error stops a run from starting, a warning does not."""

    severity: Literal["error", "warning"]
    message: str
    exit_code: int = 1


@dataclass(frozen=True)
class RosterEntry:
    agent: AgentConfig
    executable: str
    path: str | None  # where the executable resolved on PATH; None: missing


@dataclass
class Diagnosis:
    """Everything doctor found; fields are None when the check could not run."""

    kinds: dict[str, KindSpec] = field(default_factory=dict)
    resolved: ResolvedConfig | None = None
    clis: list[FoundCli] = field(default_factory=list)
    roster_from_path: bool = False  # no [[agents]]: the roster was built from PATH
    roster: list[RosterEntry] = field(default_factory=list)
    seating: Seating | None = None
    config: Config | None = None  # what a run would use: the resolved config with its roster
    repo: dict[str, Any] | None = None
    auth: dict[str, AuthStatus] = field(default_factory=dict)  # agent id -> its login check
    jail: Decision | None = None  # the jail a run would have: None when the config is broken
    jail_maps: dict[str, list[MapRow]] = field(default_factory=dict)  # kind -> a seat's view
    # Jailed: per agent id, where its turns may connect and whether its provider answers
    # through the egress proxy; "checks" for verify.e2e / verify.gate (``[verify] egress``).
    egress: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def error(self, exc: MagiError | str) -> None:
        if isinstance(exc, str):
            self.problems.append(Problem("error", exc))
            return
        lines = exc.message.splitlines()
        # load_config folds every config problem into one error, one problem a line after a
        # header; doctor lists them as the separate problems they are.
        for line in lines[1:] if len(lines) > 1 and lines[0].endswith(":") else [exc.message]:
            self.problems.append(Problem("error", line.strip(), exc.exit_code))

    def warn(self, message: str) -> None:
        self.problems.append(Problem("warning", message))

    @property
    def exit_code(self) -> int:
        """0 when a run could start, else the highest error's exit code."""
        codes = [p.exit_code for p in self.problems if p.severity == "error"]
        return max(codes, default=0)


def _repo(d: Diagnosis, cwd: Path) -> Path | None:
    from magi.git.repo import Git

    try:
        git = Git.discover(cwd)
    except RepoError as exc:
        d.error(exc)
        return None
    info: dict[str, Any] = {"root": str(git.root)}
    d.repo = info
    try:
        info["branch"] = git.current_branch()
        info["dirty"] = git.is_dirty()
        info["base"] = git.default_base()
        info["base_sha"] = git.rev_parse(info["base"])
    except RepoError as exc:
        d.error(exc)
    return Path(git.root)


def _kinds(d: Diagnosis) -> dict[str, KindSpec]:
    from magi.agents.registry import kinds

    try:
        return kinds()
    except MagiError as exc:  # two plugins claiming one kind: report it, check the rest
        d.error(exc)
        return {}


def _config(
    d: Diagnosis, root: Path | None, config_path: Path | None, environ: Mapping[str, str]
) -> Config | None:
    from magi.config.load import load_config

    try:
        d.resolved = load_config(
            root, config_path=config_path, environ=environ, known_kinds=list(d.kinds) or None
        )
    except ConfigError as exc:
        d.error(exc)
        return None
    return d.resolved.config


def _executable(agent: AgentConfig, specs: Mapping[str, KindSpec]) -> str:
    if agent.command:
        return agent.command[0]
    spec = specs.get(agent.kind)
    return spec.executable if spec is not None and spec.executable else agent.kind


def _roster(d: Diagnosis, config: Config, environ: Mapping[str, str]) -> Config | None:
    from magi.agents.registry import unpassed_keys
    from magi.config.roster import default_agents
    from magi.core.seats.runners import agent_labels, labels_here

    agents = list(config.agents)
    if not agents:
        agents = default_agents([c.kind for c in d.clis])
        d.roster_from_path = True
        config = config.model_copy(update={"agents": agents})
    if not agents:
        d.error(AgentError("no agents: the config has no [[agents]] and no agent CLI is on PATH"))
        return None
    try:
        here = labels_here(environ)
    except ConfigError as exc:
        d.error(exc)
        here = None
    for agent in agents:
        exe = _executable(agent, d.kinds)
        path = shutil.which(exe, path=environ.get("PATH", os.defpath))
        d.roster.append(RosterEntry(agent, exe, path))
        elsewhere = here is not None and not set(agent_labels(config, agent)) <= here
        if path is None and not elsewhere:
            d.error(AgentError(f"agent {agent.id!r} ({agent.kind}): `{exe}` is not on PATH"))
        for name in unpassed_keys(agent, environ) if d.kinds else []:
            d.warn(
                f"agent {agent.id!r}: {name} is set here but not in its pass_env, "
                "so the agent will not see it"
            )
    return config


def _seats(d: Diagnosis, config: Config) -> None:
    from magi.core.compete.reach import unreachable
    from magi.core.seats.seating import assign_seats

    try:
        d.seating = assign_seats(config)
    except MagiError as exc:
        d.error(exc)
    # A config that can never elect a winner is refused before the implement wave is paid.
    for why in unreachable(config):
        d.error(ConfigError(why))


def _worktree_root(d: Diagnosis, config: Config) -> None:
    if not config.graph.worktree_root:
        return
    root = Path(config.graph.worktree_root).expanduser()
    probe = root
    # It need not exist yet, only be creatable: the nearest existing ancestor decides.
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        d.error(f"graph.worktree_root = {root}: {probe} is not a writable directory")


def diagnose(
    cwd: Path,
    config_path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    auth_check: bool = True,
) -> Diagnosis:
    """Run every check, collecting problems instead of stopping at the first.

    ``auth_check`` asks each agent's CLI whether it is logged in (``--no-auth-check``
    skips it, for setups whose logins doctor cannot see into).
    """
    from magi.agents.discover import find_clis

    env = os.environ if environ is None else environ
    d = Diagnosis()
    root = _repo(d, cwd)
    d.kinds = _kinds(d)
    config = _config(d, root, config_path, env)
    if d.kinds:  # find_clis asks the registry again, which has already said what is wrong
        d.clis = find_clis(env.get("PATH"))
    if config is not None:
        seated = _roster(d, config, env)
        if seated is not None:
            _seats(d, seated)
            d.config = seated
            if auth_check and d.kinds:
                from magi.engine.logins import check_logins

                check_logins(d, env)
        _worktree_root(d, config)
        _jail(d, config)
        _jailed_programs(d, root or cwd, env)
        _jail_maps(d, root or cwd, env)
        _egress(d, env)
    return d


def _egress(d: Diagnosis, env: Mapping[str, str]) -> None:
    """Jailed, each agent's allowlist, and a warning for one whose provider cannot be
    reached through the egress proxy (a run would fail its every turn, or spend a retry
    budget finding out). What check commands may reach is said too."""
    if d.jail is None or not d.jail.jailed or d.config is None:
        return
    from concurrent.futures import ThreadPoolExecutor

    from magi.sandbox.egress import reach
    from magi.seats.jailing import agent_allowlist

    config = d.config
    checks = agent_allowlist(config, "", env)
    d.egress["checks"] = ", ".join(sorted(map(str, checks))) or "no network ([verify] egress)"
    probes = {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        for agent in config.agents:
            allowed = agent_allowlist(config, agent.id, env)
            d.egress[agent.id] = ", ".join(sorted(map(str, allowed))) or "nothing"
            target = _provider(d, agent, env)
            if target is not None:
                probes[agent.id] = (target, pool.submit(reach, allowed, target))
    for agent_id, (target, future) in probes.items():
        why = future.result()
        if why is not None:
            d.warn(
                f"agent {agent_id!r}: its provider {target} is unreachable through the jail's "
                f"egress proxy ({why}); its jailed turns would fail. It may reach: "
                f"{d.egress[agent_id]} (more in [sandbox] egress)"
            )


def _provider(d: Diagnosis, agent: AgentConfig, env: Mapping[str, str]) -> str | None:
    """Where ``agent``'s turns go first: the first base URL its environment or argv names,
    else its kind's first host (a ``*.domain`` names no one host to try)."""
    from magi.core.seats.egress import base_url_targets
    from magi.seats.jailing import agent_argv, agent_environ

    urls = base_url_targets(agent_environ(agent, env), agent_argv(agent))
    if urls:
        return str(urls[0])
    spec = d.kinds.get(agent.kind)
    hosts = [h for h in (spec.egress_hosts if spec is not None else ()) if "*" not in h]
    return f"{hosts[0]}:443" if hosts else None


def _jailed_programs(d: Diagnosis, cwd: Path, env: Mapping[str, str]) -> None:
    """Each roster CLI, and each command agent's script, as the jail its turns get shows
    it: the jail binds an agent's own program read-only where its private ``/tmp`` would
    hide it (``magi.agents.programs``), but not out of a path hidden on purpose (magi's
    home, the checkouts). Found on the host and hidden in the jail is a run whose every turn
    fails (`bwrap: execvp codex: No such file or directory`): said here instead."""
    if d.jail is None or not d.jail.jailed or d.config is None:
        return
    from magi.agents.programs import program_paths
    from magi.core.seats.jail import JailSpec, visible
    from magi.sandbox.bwrap import seat_spec
    from magi.state.store import magi_home

    hidden = [magi_home(env)]
    where = ", ".join(map(str, hidden))
    fix = f"move it out of {where} and the checkouts, or add its directory to `[sandbox] state`"

    def shown(kind: str, argv: list[str]) -> JailSpec | None:
        assert d.jail is not None  # noqa: S101 - checked above
        jail = seat_spec(d.jail, cwd=cwd, writable=False, hide=hidden, environ=env)
        return None if jail is None else jail.reading(*program_paths(jail, argv, env.get("PATH")))

    roster = {a.kind for a in d.config.agents}
    for cli in d.clis:
        jail = shown(cli.kind, [cli.executable_path]) if cli.kind in roster else None
        real = os.path.realpath(cli.executable_path)
        if jail is not None and "hidden" in {
            visible(jail, cli.executable_path),
            visible(jail, real),
        }:
            d.warn(f"{cli.kind}: found at {cli.executable_path}, which the jail hides; {fix}")
    for agent in d.config.agents:
        argv = [*(agent.command or [])]
        jail = shown(agent.kind, argv) if argv else None
        if jail is None:
            continue
        for arg in argv[1:]:
            if Path(arg).is_absolute() and Path(arg).is_file() and visible(jail, arg) == "hidden":
                d.warn(f"agent {agent.id!r}: {arg} is hidden inside the jail; {fix}")


def _jail_maps(d: Diagnosis, cwd: Path, env: Mapping[str, str]) -> None:
    """For each roster CLI, what one of its seats sees in the jail (``engine.jail_map``)."""
    if d.jail is None or not d.jail.jailed or d.config is None:
        return
    from magi.engine.jail_map import jail_map
    from magi.state.store import magi_home

    found = {c.kind: str(c.executable_path) for c in d.clis}
    for agent in d.config.agents:
        spec = d.kinds.get(agent.kind)
        if spec is None or agent.kind in d.jail_maps:
            continue
        exe = agent.command[0] if agent.command else found.get(agent.kind)
        d.jail_maps[agent.kind] = jail_map(
            d.jail, spec, cwd=cwd, environ=env, hide=[magi_home(env)], executable=exe
        )


def _jail(d: Diagnosis, config: Config) -> None:
    """Which jail a run would have, and a warning when agents would run unjailed by chance."""
    from magi.sandbox.bwrap import decide

    try:
        d.jail = decide(config.sandbox)
    except ConfigError as exc:  # mode = "bwrap" that this machine cannot give
        d.error(exc)
        return
    if not d.jail.jailed and d.jail.configured != "off":
        fix = f"; to jail them: {d.jail.fix}" if d.jail.fix else ""
        d.warn(f"agents will run unjailed: {d.jail.reason}{fix}")
