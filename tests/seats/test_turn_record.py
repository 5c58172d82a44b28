"""A turn's record: its artifacts are on disk, their folder durable, before a record names them."""

from __future__ import annotations

from pathlib import Path

import pytest

from budget_helpers import budget_config, seat_context
from magi.agents.base import TurnRequest, TurnResult, TurnStatus
from magi.seats import ask
from magi.state import store as store_module
from magi.testing.fakes import FakeAgent


def test_a_turns_artifacts_folder_is_made_durable_once_before_the_record_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prompt, written before the turn, is not made durable on its own: the reply's
    write makes the folder durable for the three of them, and the record that names them is
    saved after it. One fsync of the folder a turn, never a record naming a file whose entry
    a crash could lose."""
    work = tmp_path / "work"
    work.mkdir()
    cfg = budget_config([{"id": "a", "kind": "command", "command": ["true"]}])

    def reply(request: TurnRequest) -> TurnResult:
        steps.append(("turn", ""))
        return TurnResult(TurnStatus.OK, text="done")

    sctx = seat_context(tmp_path / "home", cfg, {"a": FakeAgent("a", reply)})
    steps: list[tuple[str, str]] = []
    real_dir, real_save = store_module._fsync_dir, store_module.Store.save

    def fsync_dir(path: Path) -> None:
        steps.append(("fsync", path.name))
        real_dir(path)

    def save(self: store_module.Store, run: object) -> None:
        named = [t.prompt_artifact for t in sctx.record.turns]
        steps.append(("save", ",".join(n or "" for n in named)))
        real_save(self, run)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "_fsync_dir", fsync_dir)
    monkeypatch.setattr(store_module.Store, "save", save)
    ask(sctx, seat="impl-A", node="implement", prompt="do it", cwd=work, allow_write=True)
    turn = steps.index(("turn", ""))
    assert ("fsync", "artifacts") not in steps[:turn], "the prompt's folder waits for the reply"
    assert steps[turn:] == [
        ("turn", ""),
        ("fsync", "artifacts"),
        ("save", "artifacts/implement-impl-A-t1.prompt.md"),
    ]
    prompt = sctx.run_dir / "artifacts" / "implement-impl-A-t1.prompt.md"
    assert prompt.read_text() == "do it"


@pytest.mark.parametrize("applies", [True, False])
def test_the_guard_takes_a_jails_word_only_from_an_agent_that_applies_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, applies: bool
) -> None:
    """A jail handed to an agent that does not say it runs its turns in it (a plugin's own
    ``Agent``) is no jail to the guard: that turn is guarded and swept as an unjailed one."""
    import importlib

    from magi.core.seats.jail import policy

    ask_module = importlib.import_module("magi.seats.ask")

    work = tmp_path / "work"
    work.mkdir()
    cfg = budget_config([{"id": "a", "kind": "command", "command": ["true"]}])

    class Agent(FakeAgent):
        applies_jail = applies

    jail = policy(cwd=str(work), writable=True, hide=[])
    monkeypatch.setattr(ask_module, "seat_jail", lambda *a, **k: jail)
    seen: list[object] = []

    class Guard:
        def before(self, sctx: object, seat: str, node: str, *, jail: object) -> None:
            seen.append(jail)

        def after(self, sctx: object, seat: str, node: str) -> list[str]:
            return []

    agent = Agent("a", lambda request: TurnResult(TurnStatus.OK, text="done"))
    sctx = seat_context(tmp_path / "home", cfg, {"a": agent})
    sctx.guard = Guard()
    ask(sctx, seat="impl-A", node="implement", prompt="do it", cwd=work, allow_write=True)
    assert agent.requests[0].jail is jail, "handed the jail either way"
    assert seen == [jail if applies else None]


# A codex stand-in that reports as codex 0.171 does (docs/agents-verified.md): one thread,
# and on each resumed turn the thread's running total, not the turn's own tokens.
_RUNNING_CODEX = r"""
import json, pathlib, sys
if sys.argv[2:] == ["--version"]:
    sys.exit(print("codex-cli 0.171.0"))
sys.stdin.read()
state = pathlib.Path(sys.argv[1])
spent = [int(n) for n in state.read_text().split()] if state.exists() else [0, 0]
spent = [spent[0] + 100, spent[1] + 10]  # every turn sends 100 tokens, gets 10 back
state.write_text(f"{spent[0]} {spent[1]}")
for ev in (
    {"type": "thread.started", "thread_id": "thread-1"},
    {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
    {"type": "turn.completed", "usage": {"input_tokens": spent[0], "output_tokens": spent[1]}},
):
    print(json.dumps(ev))
"""


def test_codex_running_totals_count_each_turn_once_across_a_resume(tmp_path: Path) -> None:
    """codex reports a resumed thread's running total: each turn is counted as the
    difference from the total the seat's record kept, also when the record is read again
    by a new magi (a resume after a kill), so three turns of 100 tokens count 300."""
    import sys

    from magi.agents.cli import CliAgent
    from magi.agents.codex import CodexAdapter
    from magi.model.config import AgentConfig
    from magi.seats.context import SeatContext

    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "codex.py"
    script.write_text(_RUNNING_CODEX)
    command = [sys.executable, str(script), str(tmp_path / "spent")]
    cfg = budget_config([{"id": "cx", "kind": "codex", "command": command}])
    agent = CliAgent(
        AgentConfig(id="cx", kind="codex", command=command),
        CodexAdapter(AgentConfig(id="cx", kind="codex", command=command)),
    )
    sctx = seat_context(tmp_path / "home", cfg, {"cx": agent})
    for _ in range(2):
        ask(sctx, seat="impl-A", node="implement", prompt="go", cwd=work, allow_write=True)
    # A new magi reads the record from disk, as `--resume` does after a kill.
    again = SeatContext(
        record=sctx.store.load_run(sctx.record.id),
        store=sctx.store,
        config=cfg,
        agents={"cx": agent},
        environ={},
        clock=sctx.clock,
    )
    ask(again, seat="impl-A", node="implement", prompt="go", cwd=work, allow_write=True)
    counted = [(t.usage.input_tokens, t.usage.output_tokens) for t in again.record.turns]
    assert counted == [(100, 10), (100, 10), (100, 10)]
    kept = again.record.seats["impl-A"].session_total
    assert kept is not None
    assert kept.session_id == "thread-1"
    assert (kept.usage.input_tokens, kept.usage.output_tokens) == (300, 30)


def test_each_seat_records_the_version_of_its_clis_agent(tmp_path: Path) -> None:
    """The version its CLI gives (`codex --version`, through the configured command) is on
    the seat's record after its first turn, read once for the run however many turns."""
    import sys

    from magi.agents.cli import CliAgent
    from magi.agents.codex import CodexAdapter
    from magi.model.config import AgentConfig

    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "codex.py"
    script.write_text(_RUNNING_CODEX)
    log = tmp_path / "argv.log"
    wrapper = tmp_path / "codex.sh"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {sys.executable} {script} "$@"\n')
    wrapper.chmod(0o755)
    command = [str(wrapper), str(tmp_path / "spent")]
    cfg = budget_config([{"id": "cx", "kind": "codex", "command": command}])
    agent_cfg = AgentConfig(id="cx", kind="codex", command=command)
    agent = CliAgent(agent_cfg, CodexAdapter(agent_cfg))
    sctx = seat_context(tmp_path / "home", cfg, {"cx": agent})
    assert sctx.record.seats["impl-A"].cli_version is None
    for _ in range(2):
        ask(sctx, seat="impl-A", node="implement", prompt="go", cwd=work, allow_write=True)
    assert sctx.store.load_run(sctx.record.id).seats["impl-A"].cli_version == "0.171.0"
    asked = log.read_text().splitlines()
    assert sum(1 for line in asked if line.endswith("--version")) == 1


def test_the_cli_version_is_read_beside_the_turn_not_before_it(tmp_path: Path) -> None:
    """`gemini --version` takes seconds on a busy runner: the version is read while the
    turn runs. This CLI answers `--version` only once its turn has begun (it waits, bounded,
    for the turn's mark), so a read made before the turn would record no version."""
    import sys

    from magi.agents.cli import CliAgent
    from magi.agents.codex import CodexAdapter
    from magi.model.config import AgentConfig

    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "codex.py"
    script.write_text(_RUNNING_CODEX)
    mark = tmp_path / "turn-began"
    wrapper = tmp_path / "codex.sh"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$2" = "--version" ]; then\n'
        f"  i=0; while [ ! -e {mark} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n"
        f'  [ -e {mark} ] && echo "codex-cli 0.171.0"\n'
        "  exit 0\n"
        "fi\n"
        f": > {mark}\n"  # a builtin: the turn's PATH is the seat's own
        f'exec {sys.executable} {script} "$@"\n'
    )
    wrapper.chmod(0o755)
    command = [str(wrapper), str(tmp_path / "spent")]
    cfg = budget_config([{"id": "cx", "kind": "codex", "command": command}])
    agent_cfg = AgentConfig(id="cx", kind="codex", command=command)
    sctx = seat_context(
        tmp_path / "home", cfg, {"cx": CliAgent(agent_cfg, CodexAdapter(agent_cfg))}
    )
    ask(sctx, seat="impl-A", node="implement", prompt="go", cwd=work, allow_write=True)
    assert sctx.store.load_run(sctx.record.id).seats["impl-A"].cli_version == "0.171.0"
