"""``magi doctor --runner``: what a self-hosted runner needs, checked where it can be seen.

Run it as the user the runner service runs as, in a checkout of the repository (or with
``--config``): the CLIs it finds and their logins are that user's (doctor's own checks), and
these are the runner's: Python and git new enough, the jail usable, magi's home persistent
(resume, landing and ``/magi retry`` read the run from it; an ephemeral runner loses it),
room on its disk, and the runner's labels against the agents jobs' (``[github]
runner_labels`` and every agent's ``runner_labels``; GitHub keeps a runner's labels, not the
runner's own files, so they are given with ``--labels``), with the agents it can seat.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from magi.core.seats.runners import (
    JOB_LABELS,
    RUNNER_LABELS,
    agent_labels,
    first_stage,
    job_labels,
    labels_here,
    served_here,
)
from magi.engine.diagnose import Diagnosis
from magi.errors import MagiError
from magi.model.config import Config
from magi.state.runner_key import KEY_FILE, load_key, panel_key
from magi.state.store import magi_home

__all__ = ["GIT_MIN", "MIN_FREE", "RunnerFacts", "check_runner"]

GIT_MIN = (2, 38)  # worktrees, `git bundle` prerequisites and --force-with-lease as magi uses them
MIN_FREE = 5 * 1024**3  # a competition holds a clone per candidate and each one's tests
_EPHEMERAL = ("/tmp", "/var/tmp", "/dev/shm")  # noqa: S108 - where a home would not persist


@dataclass
class RunnerFacts:
    """What the runner checks read: shown by doctor, as text and in --json."""

    python: str = ""
    git: str = ""
    home: str = ""
    free_bytes: int | None = None
    labels: list[str] = field(default_factory=list)
    wanted: list[str] = field(default_factory=list)
    serves: list[str] = field(default_factory=list)  # the agents a runner with these labels seats
    lacking: dict[str, list[str]] = field(default_factory=dict)  # agent -> labels it lacks
    runner_key: str = ""  # the pool's key's fingerprint ("" when this runner holds none)
    panel_key: str = ""  # the panel key's, held alone (a runner that only seats judges)


def _version(tool: str, path: str | None) -> tuple[str, tuple[int, ...]]:
    """``tool --version``'s number, as text and as (major, minor); ("", ()) when absent."""
    found = shutil.which(tool, path=path)
    if found is None:
        return "", ()
    res = subprocess.run(
        [found, "--version"], capture_output=True, text=True, check=False, timeout=10
    )
    words = (res.stdout or res.stderr).split()
    text = next((w for w in words if w[:1].isdigit()), "")
    nums = tuple(int(p) for p in text.split(".")[:2] if p.isdigit())
    return text, nums


def check_runner(d: Diagnosis, env: Mapping[str, str], labels: Sequence[str] | None) -> RunnerFacts:
    """Add every runner problem to ``d``; what was read."""
    facts = RunnerFacts()
    path = env.get("PATH")
    # The action builds magi's virtualenv with `python3` from the runner's PATH (its
    # `python` input), not with the interpreter running doctor.
    facts.python, py = _version("python3", path)
    if not facts.python:
        d.error("python3 is not on this user's PATH: the action builds magi's venv with it")
    elif py and py < (3, 11):
        d.error(
            f"python3 is {facts.python}: magi needs 3.11 or newer; put one first on the "
            "runner's PATH as python3 (the runner directory's .path file, then restart it)"
        )
    facts.git, version = _version("git", path)
    if not facts.git:
        d.error("git is not on this user's PATH: the runner's service user needs it")
    elif version and version < GIT_MIN:
        want = ".".join(map(str, GIT_MIN))
        d.error(f"git {facts.git}: magi needs {want} or newer (worktrees, bundles, leases)")
    home = magi_home(env).expanduser()
    facts.home = str(home)
    resolved = str(home.resolve()) if home.exists() else str(home)
    temp = env.get("RUNNER_TEMP", "")
    if resolved.startswith(_EPHEMERAL) or (temp and resolved.startswith(temp)):
        d.warn(
            f"MAGI_HOME is {home}, which does not outlive the job or the machine: resume, "
            "landing and `/magi retry` need the run where the last job left it. Set "
            "MAGI_HOME in the runner's service environment to a directory that persists."
        )
    probe = home if home.exists() else next((p for p in home.parents if p.exists()), Path("/"))
    try:
        facts.free_bytes = shutil.disk_usage(probe).free
    except OSError:
        facts.free_bytes = None
    if facts.free_bytes is not None and facts.free_bytes < MIN_FREE:
        gib = facts.free_bytes / 1024**3
        d.warn(f"{gib:.1f} GiB free under {probe}: a competition wants 5 GiB or more")
    try:
        key = load_key(home)
    except MagiError as e:
        d.error(e.message)
        key = None
    else:
        try:
            panel = panel_key(home)  # on a pool runner: a panel.key that is not its own
        except MagiError as e:
            d.error(e.message)
            panel = None
        facts.panel_key = panel.fingerprint if panel is not None and key is None else ""
        if key is None and panel is None:
            d.warn(
                f"no runner key ({home / KEY_FILE}): a run stopped before its tally (asking, "
                "stalled) can be carried on only by this runner. With more than one runner, "
                "make one with `magi runner-key --new` and copy it to every runner's "
                "MAGI_HOME (docs/runner.md)"
            )
    facts.runner_key = key.fingerprint if key is not None else ""
    if key is not None and d.jail is not None and not d.jail.jailed:
        d.warn(
            f"agents would run unjailed here, where they can read the runner key "
            f"({home / KEY_FILE}) and open every run the pool sealed before its tally: jail "
            "them, or keep the key off this runner"
        )
    if d.jail is not None and not d.jail.jailed and d.jail.configured != "off":
        # The Action refuses to seat them (engine.preflight.unjailed): said here first.
        d.error(
            "agents would run unjailed on this runner, where any seat could read the runner's "
            f"registration key, SSH keys and every CLI's login: {d.jail.fix or d.jail.reason}; "
            'or set `[sandbox] mode = "off"` in .magi/config.toml to run them so on purpose'
        )
    elif d.jail is not None and not d.jail.jailed:
        d.warn(
            '[sandbox] mode = "off": agents run unjailed on this runner, where any seat can '
            "read the runner's registration key, SSH keys and every CLI's login"
        )
    _renewing_logins(d, env)
    config = d.config or (d.resolved.config if d.resolved is not None else None)
    if config is not None:
        facts.wanted = job_labels(config)
    declared = _declared(d, env)
    if labels is None and declared:
        labels = declared  # what the runner's .env says it has
    if labels is None:
        d.warn(
            "the runner's labels are not known here: pass --labels with the labels you "
            f"registered it with (GitHub keeps them), to check against {facts.wanted}"
        )
    else:
        facts.labels = [label.strip() for label in labels if label.strip()]
        if config is not None:
            _check_labels(d, facts, config, declared)
    if os.geteuid() == 0 if hasattr(os, "geteuid") else False:
        d.warn(
            "running as root: run the runner service, and log in the agent CLIs, as an "
            "unprivileged user of its own"
        )
    return facts


def _renewing_logins(d: Diagnosis, env: Mapping[str, str]) -> None:
    """A roster CLI logged in with a file (an OAuth login that renews itself) and no key:
    two of its seats renewing in the same wave can leave one holding a refresh token the
    provider no longer takes (docs/jail.md, "Each seat its own CLI state")."""
    from magi.core.seats.clistate import resolved

    if d.config is None:
        return
    home = env.get("HOME") or str(Path.home())
    for kind in dict.fromkeys(a.kind for a in d.config.agents):
        spec = d.kinds.get(kind)
        if spec is None or spec.state is None or any(env.get(k) for k in spec.key_env_vars):
            continue
        files = [
            Path(where) / login.path
            for root in spec.state.roots
            if (where := resolved(root, home, env)) is not None and not root.file
            for login in root.logins
            if not login.keys
        ]
        found = next((f for f in files if f.is_file()), None)
        if found is not None:
            keys = " or ".join(spec.key_env_vars) or "a long-lived token"
            d.warn(
                f"{kind} logs in here with {found}, a login it renews itself: two of its seats "
                "renewing in one wave can leave one with a token the provider no longer "
                f"takes. On a runner use {keys} (in the agent's pass_env)"
            )


def _declared(d: Diagnosis, env: Mapping[str, str]) -> list[str] | None:
    """The labels the runner declares (``MAGI_RUNNER_LABELS`` in its service's .env)."""
    raw = env.get(RUNNER_LABELS, "")
    if not raw.strip():
        return None
    try:
        labels = labels_here({JOB_LABELS: raw})
    except MagiError as e:
        d.error(e.message.replace(JOB_LABELS, RUNNER_LABELS))
        return None
    return sorted(labels or ())


def _check_labels(
    d: Diagnosis, facts: RunnerFacts, config: Config, declared: list[str] | None
) -> None:
    """Whether any agents job would run here, and what a competition hands elsewhere."""
    served = served_here(config, facts.labels)
    facts.serves = list(served.here)
    facts.lacking = {a: list(m) for a, m in served.lacking.items()}
    first = first_stage(config)
    missing = [w for w in first if w not in facts.labels]
    if missing and not served.here:
        who = "; ".join(f"{a} needs {', '.join(m)}" for a, m in facts.lacking.items())
        d.error(
            f"a competition starts on {first} ([github] runner_labels) and this runner lacks "
            f"{missing}, and it has the labels of no agent"
            + (f" ({who})" if who else "")
            + ": no agents job would ever run here. Add them to the runner (its settings "
            "page, or config.sh --labels) or change runner_labels"
        )
    for agent, lacks in facts.lacking.items():
        need = agent_labels(config, config.agent(agent))
        d.warn(
            f"{agent}'s seats are handed to a runner labelled {', '.join(need)} (this one "
            f"lacks {', '.join(lacks)}): register one with those labels and {agent}'s CLI"
        )
    union = [w for w in facts.wanted if w not in facts.labels]
    if union and facts.lacking:
        d.warn(
            f"councils, reviews and landings run where every agent can ({facts.wanted}); "
            f"this runner lacks {union}: register one runner with all of them for those"
        )
    if declared is not None and set(facts.labels) - set(declared):
        d.warn(
            f"{RUNNER_LABELS} names {declared}, not all of this runner's labels "
            f"({facts.labels}): a competition's job here hands off the seats of agents it "
            "could have seated"
        )
