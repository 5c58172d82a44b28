"""The config file's schema: every table and key magi reads, validated strictly.

Unknown keys are errors (``extra="forbid"``): a typo such as ``judgs = 3`` must fail loudly
rather than silently run a default panel. Arrays are whole values (see ``config.load`` for
why an array may be declared in one layer only).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from magi.model.council import CouncilConfig
from magi.model.egress import parse_entry

# The placeholders ``[notify] command`` may hold (``magi.core.person.notify`` fills them).
NOTIFY_FIELDS = ("summary", "run", "url", "event")
FIELD_PATTERN = re.compile(r"\{([a-z_]+)\}")


def unknown_fields(command: Sequence[str]) -> list[str]:
    """Placeholders in ``command`` that magi does not fill (a typo would go out verbatim)."""
    return sorted(
        {m for word in command for m in FIELD_PATTERN.findall(word) if m not in NOTIFY_FIELDS}
    )


RUNNER_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def _runner_labels_checked(labels: list[str]) -> list[str]:
    bad = [label for label in labels if not RUNNER_LABEL.fullmatch(label)]
    if bad:
        raise ValueError(f"not runner labels: {bad} (letters, digits, '.', '_' and '-', up to 100)")
    return labels


BUILTIN_KINDS = ("claude", "codex", "opencode", "gemini", "antigravity", "command")
AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
DEFAULT_PROTECTED = [".github/workflows/", ".magi/", "magi.toml", "CODEOWNERS"]
DEFAULT_TESTS = ["tests/", "test/", "*_test.*", "test_*.*", "*.test.*", "*.spec.*"]
# Every timeout is bounded: 99999999999999 s is an OverflowError in a thread wait, not a
# budget. A week is longer than any turn, check or run magi means to wait for.
MAX_TIMEOUT_S = 7 * 24 * 3600


# Keys whose feature has not landed yet: accepted at their default, refused otherwise,
# because a key that is read by nothing is exactly the silent no-op this schema exists to
# prevent. A feature removes its keys from here in the commit that makes them work.
NOT_IMPLEMENTED: dict[str, str] = {
    "roles.planner": "planning",
}


def unimplemented_keys(
    model: BaseModel, generic: str = "", loc: tuple[str | int, ...] = ()
) -> list[tuple[str, tuple[str | int, ...]]]:
    """(key as in NOT_IMPLEMENTED, its exact location) of each such key not at its default."""
    found: list[tuple[str, tuple[str | int, ...]]] = []
    for name, info in type(model).model_fields.items():
        key, where = f"{generic}{name}", (*loc, name)
        value = getattr(model, name)
        if key in NOT_IMPLEMENTED:
            if value != info.get_default(call_default_factory=True):
                found.append((key, where))
        elif isinstance(value, BaseModel):
            found += unimplemented_keys(value, f"{key}.", where)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    found += unimplemented_keys(item, f"{key}.", (*where, i))
    return found


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentTimeouts(_Strict):
    """Per-agent overrides of the node budgets, in seconds."""

    implement: int | None = Field(None, gt=0, le=MAX_TIMEOUT_S)
    judge: int | None = Field(None, gt=0, le=MAX_TIMEOUT_S)
    deliberate: int | None = Field(None, gt=0, le=MAX_TIMEOUT_S)
    vote: int | None = Field(None, gt=0, le=MAX_TIMEOUT_S)
    review: int | None = Field(None, gt=0, le=MAX_TIMEOUT_S)
    fix: int | None = Field(None, gt=0, le=MAX_TIMEOUT_S)


class AgentConfig(_Strict):
    """One ``[[agents]]`` entry: a CLI (or any command) magi may seat."""

    id: str = Field(description="Roster id, used in [roles]; never shown to a judge.")
    kind: str = Field(
        description="claude | codex | opencode | gemini | antigravity | command, "
        "or a kind registered by a plugin."
    )
    model: str | None = Field(None, description="Model name or alias passed to the CLI.")
    command: list[str] | None = Field(
        None,
        description="argv for kind=command (placeholders {prompt_file} {cwd} {label} {session}), "
        "or the executable (and leading args) to run instead of the CLI's default name.",
    )
    args: list[str] = Field(default_factory=list, description="Extra CLI arguments, appended.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Variables set for this agent's process."
    )
    pass_env: list[str] = Field(
        default_factory=list,
        description="Names of variables passed through from magi's environment (e.g. an API "
        "key). Nothing else outside the allowlist reaches an agent.",
    )
    timeouts: AgentTimeouts = Field(default_factory=AgentTimeouts)
    runner_labels: list[str] | None = Field(
        None,
        min_length=1,
        description="Labels of the self-hosted runners this agent's CLI is installed and "
        "logged in on (default: [github] runner_labels). An agents job runs on a runner "
        "with every label of every agent of the roster.",
    )

    @field_validator("runner_labels")
    @classmethod
    def _runner_labels(cls, labels: list[str] | None) -> list[str] | None:
        return None if labels is None else _runner_labels_checked(labels)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        if not AGENT_ID.match(v):
            raise ValueError(f"agent id {v!r} must match {AGENT_ID.pattern}")
        return v

    @model_validator(mode="after")
    def _command_kind_needs_command(self) -> AgentConfig:
        if self.kind == "command" and not self.command:
            raise ValueError(f"agent {self.id!r}: kind = 'command' needs command = [...]")
        return self


class Roles(_Strict):
    """Who sits where. An empty role rotates through the roster."""

    implementers: list[str] = Field(default_factory=list)
    judges: list[str] = Field(default_factory=list)
    reviewers: list[str] = Field(default_factory=list)
    fixer: str | None = None
    planner: str | None = None


class Graph(_Strict):
    """Shape and budgets of the competition graph."""

    candidates: int = Field(3, ge=1, le=26)
    judges: int = Field(3, ge=0, le=15)
    deliberate_rounds: int = Field(1, ge=0, le=10)
    reviewers: int = Field(2, ge=0, le=10)
    review_rounds: int = Field(6, ge=0, le=50)
    incomplete_review: Literal["block", "warn"] = "block"
    max_parallel: int = Field(4, ge=1, le=64)
    language: str = "en"
    sessions: bool = True
    failover: bool = Field(True, description="Hand a seat lost to quota/timeout to the next agent.")
    timeout_implement: int = Field(3600, gt=0, le=MAX_TIMEOUT_S)
    timeout_verify: int = Field(900, gt=0, le=MAX_TIMEOUT_S)
    timeout_judge: int = Field(1200, gt=0, le=MAX_TIMEOUT_S)
    timeout_deliberate: int = Field(600, gt=0, le=MAX_TIMEOUT_S)
    timeout_vote: int = Field(300, gt=0, le=MAX_TIMEOUT_S)
    timeout_review: int = Field(1200, gt=0, le=MAX_TIMEOUT_S)
    timeout_fix: int = Field(1800, gt=0, le=MAX_TIMEOUT_S)
    land: bool = Field(True, description="Watch a magi PR's checks and reviews until it lands.")
    land_approval: bool = Field(
        True, description="Merge only on a writer's `merge` (false: merge when all is green)."
    )
    land_rounds: int = Field(4, ge=0, le=50, description="Fix rounds landing may spend.")
    unreachable_after: int = Field(
        120,
        ge=0,
        le=MAX_TIMEOUT_S,
        description="Seconds a turn may show only a cannot-reach or not-logged-in line "
        "before it ends as an error (0: wait for the timeout).",
    )
    worktree_root: str | None = None
    patch_max_bytes: int = Field(
        200_000, gt=0, description="Cap on each candidate's patch in a judge packet."
    )
    output_max_bytes: int = Field(
        4_000_000, gt=0, description="Cap on what magi keeps of one process's output."
    )
    text_max_chars: int = Field(
        8000,
        ge=200,
        le=1_000_000,
        description="Cap on each rationale, argument, summary and review detail magi stores "
        "and relays to other seats (the cut is marked).",
    )
    task_max_bytes: int = Field(
        65_536, gt=0, le=16_777_216, description="Cap on the task text (UTF-8 bytes)."
    )


class Blind(_Strict):
    """What keeps the judging blind."""

    commit_msg_hook: bool = True
    on_leak: Literal["warn", "redact", "fail"] = "warn"
    seed: int | None = None
    protected: Literal["warn", "fail"] = "warn"
    protected_paths: list[str] = Field(default_factory=lambda: list(DEFAULT_PROTECTED))
    tests: Literal["warn", "fail"] = Field(
        "warn", description="A candidate that edits or deletes lines of existing tests."
    )


def _egress(entries: list[str], where: str) -> list[str]:
    """Each entry a host, host:port or *.domain; a bad one names itself and ``where``."""
    for entry in entries:
        parse_entry(entry, where)
    return entries


class Verify(_Strict):
    """Commands run through ``sh -c``: e2e per candidate and per review round, gate at the end."""

    e2e: list[str] = Field(default_factory=list)
    gate: list[str] = Field(default_factory=list)
    candidates: bool = True
    tests: list[str] = Field(
        default_factory=lambda: list(DEFAULT_TESTS),
        description="Test files: a directory prefix (dir/) or a file-name glob.",
    )
    egress: list[str] = Field(
        default_factory=list,
        description=(
            "Hosts the jailed e2e and gate commands may reach (host, host:port, *.domain), "
            "through magi's proxy; none by default."
        ),
    )

    @field_validator("egress")
    @classmethod
    def _verify_egress(cls, v: list[str]) -> list[str]:
        return _egress(v, "[verify] egress")


class Sandbox(_Strict):
    """The jail every agent process runs in (bubblewrap, Linux only)."""

    mode: Literal["auto", "bwrap", "off"] = Field(
        "auto", description="auto: bwrap when usable, else off with a warning."
    )
    state: list[str] = Field(
        default_factory=list,
        description="More paths every agent may write (a plugin CLI's state directory).",
    )
    read: list[str] = Field(
        default_factory=list,
        description="More paths every agent may read: a toolchain outside the system "
        "directories and the home's usual ones (the jail shows by allowlist).",
    )
    egress: list[str] = Field(
        default_factory=list,
        description=(
            "More hosts a jailed seat may reach (host, host:port, *.domain), beyond its "
            "CLI's providers and the hosts of the base URLs in its environment."
        ),
    )

    @field_validator("egress")
    @classmethod
    def _sandbox_egress(cls, v: list[str]) -> list[str]:
        return _egress(v, "[sandbox] egress")


class Merge(_Strict):
    """What happens to the winner once it is ready: nothing, a local merge, or a pull request."""

    mode: Literal["none", "local", "pr"] = "none"


class Prompts(_Strict):
    """Appended under a heading of their own; never replaces a built-in prompt."""

    all: str = ""
    implement: str = ""
    judge: str = ""
    review: str = ""
    fix: str = ""


class Notify(_Strict):
    """A command told when a run ends or is held (an argv; nothing runs when empty)."""

    command: list[str] = Field(
        default_factory=list,
        description="argv run on a run's end, hold or stall; {summary} {run} {url} {event} "
        "are put into its words, never into a shell.",
    )

    @field_validator("command")
    @classmethod
    def _fields_known(cls, command: list[str]) -> list[str]:
        if any("\x00" in word for word in command):
            raise ValueError("a NUL character cannot be part of a command's argument")
        unknown = unknown_fields(command)
        if unknown:
            known = ", ".join("{" + f + "}" for f in NOTIFY_FIELDS)
            raise ValueError(f"unknown placeholder(s) {unknown}; magi fills {known}")
        return command


class Ask(_Strict):
    """Agents asking a person mid-turn (``magi ask``)."""

    max_per_run: int = Field(
        3,
        ge=0,
        description="questions a run may ask (a reply on a thread is not a new one); past it "
        "magi ask answers at once: decide yourself and say so in your summary.",
    )


class Github(_Strict):
    """How the GitHub App and the Actions runner find magi's work."""

    label: str = "magi"
    workflow: str = "magi.yml"
    runner_labels: list[str] = Field(
        default_factory=lambda: ["self-hosted", "magi"],
        min_length=1,
        description="Labels of the runners the agents jobs run on (sent with every dispatch).",
    )
    required_checks: list[str] = Field(
        default_factory=list,
        description="Check names the merge gate requires; empty: every check on the head.",
    )
    attempts: int = Field(
        2, ge=1, le=20, description="Competitions per issue; a quota stall spends none."
    )
    workflow_changes: bool = Field(
        False,
        description="Push candidates and fixes that change `.github/workflows/` (false: "
        "such a branch is not pushed, and the run says why). The App holds `workflows: "
        "write` so that a rebase onto a base whose workflows changed can be pushed.",
    )
    trusted_bots: list[str] = Field(
        default_factory=list,
        description="Bots (e.g. `coderabbitai[bot]`) whose reviews a fix round takes up; "
        "other bots' reviews, like those of people without write access, spend nothing.",
    )

    @field_validator("runner_labels")
    @classmethod
    def _labels(cls, labels: list[str]) -> list[str]:
        return _runner_labels_checked(labels)

    @field_validator("label")
    @classmethod
    def _label(cls, label: str) -> str:
        # Written into the receive job's `if:` as an expression's string: `${{` or `}}` there
        # would make the whole `if:` a template string, always true.
        # https://docs.github.com/en/actions/reference/workflows-and-actions/expressions
        if not label.strip() or any(c in label for c in "\n\r\t\0"):
            raise ValueError(f"not a label name: {label!r}")
        if "${{" in label or "}}" in label:
            raise ValueError(
                f"{label!r}: a label must not contain '${{{{' or '}}}}' (the workflow's "
                "`if:` reads it inside an expression)"
            )
        return label


class Price(_Strict):
    """What one model costs, in US dollars per million tokens (magi's estimate of a turn
    whose CLI reports tokens but no cost: ``magi.core.figures.pricing``)."""

    input: float = Field(ge=0, allow_inf_nan=False, description="Uncached input tokens.")
    output: float = Field(ge=0, allow_inf_nan=False, description="Output tokens (reasoning too).")
    cached: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="Cached input tokens (default: input)."
    )


class Budget(_Strict):
    """Spending caps: dollars (reported by a CLI, or estimated from its tokens), and the wall
    minutes of seats whose CLIs report neither."""

    run_usd: float | None = Field(None, gt=0, allow_inf_nan=False)
    day_usd: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="Today's (UTC) dollars: this machine's runs; on a runner, the "
        "repository's run records.",
    )
    run_minutes: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="Wall minutes of this run's turns that have no dollar figure (their CLI "
        "reports no cost, and no tokens of a model with a price).",
    )
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="Per model name as the CLI reports it (or the agent's `model`): "
        '[budget.prices."gpt-5-codex"] input/output/cached; over magi\'s defaults.',
    )

    @field_validator("prices")
    @classmethod
    def _model_names(cls, prices: dict[str, Price]) -> dict[str, Price]:
        bad = [name for name in prices if not name.strip() or name != name.strip()]
        if bad:
            raise ValueError(f"not model names: {bad} (empty, or space around the name)")
        return prices


class Config(_Strict):
    """The whole resolved config (all layers merged, templates rendered)."""

    agents: list[AgentConfig] = Field(default_factory=list)
    roles: Roles = Field(default_factory=Roles)
    graph: Graph = Field(default_factory=Graph)
    blind: Blind = Field(default_factory=Blind)
    verify: Verify = Field(default_factory=Verify)
    merge: Merge = Field(default_factory=Merge)
    prompts: Prompts = Field(default_factory=Prompts)
    notify: Notify = Field(default_factory=Notify)
    ask: Ask = Field(default_factory=Ask)
    github: Github = Field(default_factory=Github)
    budget: Budget = Field(default_factory=Budget)
    council: CouncilConfig = Field(default_factory=CouncilConfig)
    sandbox: Sandbox = Field(default_factory=Sandbox)
    vars: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _ids_unique_and_roles_known(self) -> Config:
        seen: set[str] = set()
        for a in self.agents:
            if a.id in seen:
                raise ValueError(f"agents: id {a.id!r} is declared twice")
            seen.add(a.id)
        if self.agents:
            r = self.roles
            named = [*r.implementers, *r.judges, *r.reviewers]
            named += [x for x in (r.fixer, r.planner) if x]
            unknown = sorted({n for n in named if n not in seen})
            if unknown:
                raise ValueError(f"roles name agents not in [[agents]]: {', '.join(unknown)}")
            problems = self.council.check_agents([a.id for a in self.agents])
            if problems:
                raise ValueError("; ".join(problems))
        return self

    def agent(self, agent_id: str) -> AgentConfig:
        for a in self.agents:
            if a.id == agent_id:
                return a
        raise KeyError(agent_id)
