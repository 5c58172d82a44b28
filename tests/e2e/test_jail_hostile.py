"""Hostile agents in real runs: inside the jail they reach nothing; with mode off, the same
attempts succeed, so the report of what the jail stopped is right beside them."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graph_helpers import COMMIT, FIX, SCRIPTED, config, git_out, start
from magi.agents import census
from magi.model.config import Sandbox
from magi.model.run import RunStatus
from magi.sandbox.bwrap import decide
from magi.testing.standins import write_standin

JAILED = decide(Sandbox()).jailed
needs_bwrap = pytest.mark.skipif(
    not JAILED, reason=f"bubblewrap is not usable here: {decide(Sandbox()).reason}"
)
MODES = [pytest.param("bwrap", marks=needs_bwrap), "off"]


def _found(sd: Path) -> dict[str, list[str]]:
    """What each hostile seat managed, as it wrote down itself."""
    return {p.name: p.read_text().split("\n")[:-1] for p in sorted(sd.glob("found-*"))}


def _implementer(home: Path, repo: Path, wts: Path, sd: Path) -> str:
    """Everything a candidate could try beyond its own tree; its own clone is another test."""
    out = f"{sd}/found-$MAGI_LABEL"
    # The repository, found through the object store the candidate's clone borrows.
    r = '"$(dirname "$(cat .git/objects/info/alternates)")"'
    script = f"""
for d in {wts}/*/*; do
  [ "$d" = "$PWD" ] || {{ echo x > "$d/pwned" 2>/dev/null && echo "wrote $d" >> {out}; }}
done
echo x > {repo}/pwned 2>/dev/null && echo "wrote the main checkout" >> {out}
echo x > {home}/pwned 2>/dev/null && echo "wrote MAGI_HOME" >> {out}
cat {home}/runs/*/run.json > /dev/null 2>&1 && echo "read the run record" >> {out}
printf '#!/bin/sh\\necho hook >> {sd}/ran\\n' > {r}/hooks/post-commit 2>/dev/null \\
  && chmod +x {r}/hooks/post-commit && echo "planted a hook in the repository" >> {out}
git --git-dir={r} config core.fsmonitor "echo fsmonitor >> {sd}/ran" 2>/dev/null \\
  && echo "set the repository's core.fsmonitor" >> {out}
evil=$(git --git-dir={r} commit-tree "$(git rev-parse 'HEAD^{{tree}}')" \\
  -p "$(git rev-parse HEAD)" -m evil 2>/dev/null)
for b in $(git --git-dir={r} for-each-ref --format='%(refname)' refs/heads/magi/ 2>/dev/null); do
  git --git-dir={r} update-ref "$b" "$evil" 2>/dev/null && echo "moved $b" >> {out}
done
git --git-dir={r} update-ref refs/heads/main "$evil" 2>/dev/null && echo "moved main" >> {out}
touch {out}
{FIX} && {COMMIT} -m "Fix word_count"
"""
    return "sh:" + script


def _tamperer(sd: Path, barrier: bool = False) -> str:
    """Honest work, then a hook, an fsmonitor and the other candidate's branch in its own
    git directory; with ``barrier``, only once both candidates are working (a parallel wave)."""
    out = f"{sd}/found-$MAGI_LABEL"
    wait = (
        f"touch {sd}/arrived-$MAGI_LABEL; n=0; "
        f"until [ -e {sd}/arrived-A ] && [ -e {sd}/arrived-B ] || [ $n -gt 2000 ]; "
        "do n=$((n+1)); sleep 0.05; done"
        if barrier
        else ":"
    )
    script = f"""
{FIX} && echo "# by $MAGI_LABEL" >> textstats.py && {COMMIT} -m "Fix word_count"
{wait}
gd=$(git rev-parse --git-dir)
printf '#!/bin/sh\\necho hook >> {sd}/ran\\n' > "$gd/hooks/pre-push-$MAGI_LABEL" 2>/dev/null \\
  && chmod +x "$gd/hooks/pre-push-$MAGI_LABEL" && echo "planted a hook" >> {out}
git config core.fsmonitor "echo fsmonitor >> {sd}/ran" 2>/dev/null \\
  && echo "set core.fsmonitor" >> {out}
own=$(git symbolic-ref HEAD)
other=$(echo "$own" | sed 's,/A$,/X,;s,/B$,/A,;s,/X$,/B,')
git update-ref "$other" HEAD && echo "moved $other" >> {out}
git update-ref "refs/tags/by-$MAGI_LABEL" HEAD
touch {out}
"""
    return "sh:" + script


def _judge(home: Path, wts: Path, sd: Path) -> str:
    out = f"{sd}/found-$MAGI_SEAT"
    probe = f"""
cat {home}/runs/*/run.json 2>/dev/null | grep -q '"agent"' && echo "read authors" >> {out}
ls -d {wts}/*/* 2>/dev/null | grep -v "^$PWD$" | grep -q . && echo "saw other trees" >> {out}
touch ./judge-was-here 2>/dev/null && echo "wrote its tree" >> {out}
GIT_DIR="$(git rev-parse --git-common-dir)" git read-tree --empty 2>/dev/null \
  && echo "emptied the user's index" >> {out}
echo "probe done" >&2
touch {out}
exec {shlex.join([*SCRIPTED, "evidence"])}
"""
    return "sh:" + probe


def _cfg(
    sd: Path,
    impls: dict[str, str],
    judges: dict[str, str],
    wts: Path,
    mode: str,
    **tables: dict[str, object],
):
    return config(
        sd,
        impls,
        judges,
        # The jail is the point here, not the review loop: a hostile implementer as the
        # fixer would only end the run stagnant.
        graph={"worktree_root": str(wts), "deliberate_rounds": 0, "review_rounds": 0},
        sandbox={"mode": mode},
        **tables,
    )


@pytest.mark.parametrize("mode", MODES)
def test_hostile_implementers_reach_only_their_own_tree(env, tmp_path: Path, mode: str) -> None:
    """Writes to siblings, the main checkout and MAGI_HOME fail in the jail; own work lands."""
    repo, home, sd = env
    wts = tmp_path / "wts"
    bad = _implementer(home, repo, wts, sd)
    cfg = _cfg(sd, {"a1": bad, "a2": bad}, {"j1": "evidence"}, wts, mode)
    run = start(repo, home, cfg)
    assert run.jail is not None
    assert run.jail.mode == mode
    assert run.status is RunStatus.READY, run.reason
    assert all(c.produced for c in run.candidates)  # its own tree works
    found = _found(sd)
    assert sorted(found) == ["found-A", "found-B"]
    pwned = [*wts.glob("*/*/pwned"), repo / "pwned", home / "pwned"]
    if mode == "bwrap":
        assert found == {"found-A": [], "found-B": []}
        assert not any(p.exists() for p in pwned)
        assert not (sd / "ran").exists()
        assert all(not c.violations for c in run.candidates)
        assert git_out(repo, "rev-parse", "main").strip() == run.base_sha
        for c in run.candidates:  # each branch is exactly what its own seat left
            assert git_out(repo, "log", "--format=%s", c.branch).split("\n")[0] != "evil"
    else:  # what the jail would have stopped
        for lines in found.values():
            assert "wrote the main checkout" in lines
            assert "wrote MAGI_HOME" in lines
        # Two seats race for .git/config.lock: at least one of them gets each one in.
        done = {line for lines in found.values() for line in lines}
        assert {"planted a hook in the repository", "read the run record"} <= done
        assert "set the repository's core.fsmonitor" in done
        assert "moved main" in done
        assert (repo / "pwned").exists()
        assert (home / "pwned").exists()
        assert not (sd / "ran").exists()  # magi never ran what was planted
        assert git_out(repo, "rev-parse", "main").strip() == run.base_sha  # restored
        assert any(c.violations for c in run.candidates)  # found after the fact, and restored


def _charges(c) -> str:
    return "\n".join(c.violations)


@pytest.mark.parametrize("mode", MODES)
def test_tampering_in_its_own_git_dir_is_charged_to_it_alone(
    env, tmp_path: Path, mode: str
) -> None:
    """A hook, an fsmonitor and the other's branch in its own git dir: charged to that
    candidate alone, never run, and the other candidate's branch untouched."""
    repo, home, sd = env
    wts = tmp_path / "wts"
    cfg = _cfg(sd, {"a1": _tamperer(sd), "a2": "right"}, {"j1": "evidence"}, wts, mode)
    run = start(repo, home, cfg)
    assert run.status is RunStatus.READY, run.reason
    bad = next(c for c in run.candidates if run.author(c.label) == "a1")
    good = next(c for c in run.candidates if run.author(c.label) == "a2")
    found = _found(sd)[f"found-{bad.label}"]
    assert not (sd / "ran").exists()  # nothing planted was ever run
    assert good.violations == []
    assert git_out(repo, "rev-parse", good.branch).strip() == good.head
    assert good.head != bad.head
    assert bad.produced
    assert f"by {bad.label}" in git_out(repo, "show", f"{bad.head}:textstats.py")
    charged = _charges(bad)
    assert "(while" not in charged  # no other seat shares the charge
    assert f"refs/heads/{good.branch} created" in charged
    assert f"refs/tags/by-{bad.label} created" in charged
    clone = Path(bad.worktree or "")
    assert not (clone / ".git" / "hooks" / f"pre-push-{bad.label}").exists()  # removed
    if mode == "bwrap":  # its hooks and config are read-only binds even in its own clone
        assert "planted a hook" not in found
        assert "set core.fsmonitor" not in found
    else:
        assert {"planted a hook", "set core.fsmonitor"} <= set(found)
        assert f"hooks/pre-push-{bad.label} added" in charged
        assert "config changed: core.fsmonitor" in charged
    assert "core.fsmonitor" not in git_out(clone, "config", "--list")


@pytest.mark.parametrize("mode", MODES)
def test_two_candidates_tampering_in_parallel_are_each_charged_correctly(
    env, tmp_path: Path, mode: str
) -> None:
    """Both tamper while both work: each one's record names its own doing, never the other's."""
    repo, home, sd = env
    wts = tmp_path / "wts"
    bad = _tamperer(sd, barrier=True)
    cfg = _cfg(sd, {"a1": bad, "a2": bad}, {"j1": "evidence"}, wts, mode)
    run = start(repo, home, cfg)
    assert run.status is RunStatus.READY, run.reason
    assert not (sd / "ran").exists()
    for c in run.candidates:
        other = next(o for o in run.candidates if o is not c)
        charged = _charges(c)
        assert "(while" not in charged
        assert f"refs/tags/by-{c.label} created" in charged
        assert f"by-{other.label}" not in charged
        assert f"refs/heads/{other.branch} created" in charged
        # Each branch in the repository is its own seat's work, whatever the other did.
        assert git_out(repo, "rev-parse", c.branch).strip() == c.head
        assert f"by {c.label}" in git_out(repo, "show", f"{c.head}:textstats.py")
        if mode == "off":
            assert f"hooks/pre-push-{c.label} added" in charged
            assert f"pre-push-{other.label}" not in charged


@pytest.mark.parametrize("mode", MODES)
def test_a_hostile_judge_finds_nothing_and_cannot_write(env, tmp_path: Path, mode: str) -> None:
    """Run records and worktrees are out of a judge's sight, its tree read-only at the OS
    level, and so is the user's index: the guard does not look at the checkout after a
    jailed turn, because nothing in the jail can change what it would compare."""
    repo, home, sd = env
    wts = tmp_path / "wts"
    cfg = _cfg(sd, {"a1": "right", "a2": "wrong"}, {"j1": _judge(home, wts, sd)}, wts, mode)
    run = start(repo, home, cfg)
    assert run.status is RunStatus.READY, run.reason
    found = _found(sd)["found-judge-1"]
    raw = next(t for t in run.turns if t.seat == "judge-1").raw_artifact
    assert raw is not None
    assert "probe done" in (home / "runs" / run.id / raw).read_text()  # its own raw output
    checkout = [e.message for e in run.events if "YOUR CHECKOUT" in e.message]
    if mode == "bwrap":
        assert found == []
        assert git_out(repo, "status", "--porcelain") == ""
        assert checkout == []
    else:
        wrote = {"read authors", "saw other trees", "wrote its tree", "emptied the user's index"}
        assert wrote <= set(found)
        assert len(checkout) == 1  # looked at after the unjailed turn, and said
        assert "judge-1" in checkout[0]


@pytest.mark.parametrize("mode", MODES)
def test_a_candidate_deleting_a_failing_test_is_flagged_and_fails(
    env, tmp_path: Path, mode: str
) -> None:
    """Deleting the failing tests is flagged to judges and in the record; fail disqualifies."""
    repo, home, sd = env
    cheat = (
        "sh:python3 - <<'EOF'\n"
        "import re\n"
        "p = 'test_textstats.py'\n"
        "s = open(p).read()\n"
        "s = re.sub(r'    def test_any_whitespace.*?\\n\\n', '', s, flags=re.S)\n"
        "open(p, 'w').write(s)\n"
        "EOF\n"
        f"{COMMIT} -m 'Tidy tests'"
    )
    wts = tmp_path / "wts"
    cfg = _cfg(
        sd, {"a1": "right", "a2": cheat}, {"j1": "evidence"}, wts, mode, blind={"tests": "fail"}
    )
    run = start(repo, home, cfg)
    cheater = next(c for c in run.candidates if run.author(c.label) == "a2")
    honest = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert cheater.tests_changed is not None
    assert honest.tests_changed == []
    [edit] = cheater.tests_changed
    assert edit.path == "test_textstats.py"
    assert any("test_any_whitespace" in line for line in edit.removed)
    assert cheater.disqualified is not None
    assert "edits existing tests" in cheater.disqualified
    assert run.tally is not None
    assert run.tally.winner == honest.label


def test_a_flagged_test_edit_reaches_every_judge_under_warn(env, tmp_path: Path) -> None:
    """With blind.tests = warn the candidate is judged, and each judge's packet shows the lines."""
    repo, home, sd = env
    cheat = f"sh:sed -i '/def test_empty_text/,+1d' test_textstats.py && {FIX} && {COMMIT} -m x"
    cfg = config(
        sd,
        {"a1": "right", "a2": cheat},
        {"j1": "evidence", "j2": "minimal"},
        sandbox={"mode": "off"},
        graph={"deliberate_rounds": 0},
    )
    run = start(repo, home, cfg)
    cheater = next(c for c in run.candidates if run.author(c.label) == "a2")
    assert cheater.disqualified is None
    assert cheater.tests_changed
    art = home / "runs" / run.id / "artifacts"
    judge_prompts = [p.read_text() for p in sorted(art.glob("judge-*.prompt.md"))]
    assert len(judge_prompts) == 2
    for text in judge_prompts:
        assert "edits existing test test_textstats.py" in text
        assert "test_empty_text" in text


@needs_bwrap
@pytest.mark.parametrize("kind", ["claude", "codex", "opencode", "gemini", "command"])
def test_the_standins_answer_from_inside_the_jail(env, tmp_path: Path, kind: str) -> None:
    """Each CLI stand-in runs inside bwrap as a judge seat would, and its answer comes back."""
    from magi.agents.base import TurnRequest
    from magi.agents.registry import build_agent
    from magi.sandbox.bwrap import seat_spec

    s = write_standin(tmp_path / "standin", kind, reply="fine")
    agent = build_agent(s.agent_config())
    work = tmp_path / "work"
    work.mkdir()
    spec = seat_spec(
        decide(Sandbox()),
        cwd=work,
        writable=False,
        hide=[tmp_path / "home"],
        environ={"HOME": str(tmp_path)},
        state=[s.path.parent],
    )
    assert spec is not None
    request = TurnRequest(
        seat="judge-1",
        prompt="hello",
        cwd=work,
        allow_write=False,
        timeout=60,
        jail=spec,
        environ={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    result = agent.run_turn(request)
    assert result.ok, result.error
    assert "fine" in result.text
    assert json.loads(s.log_path.read_text().splitlines()[-1])["stdin"] == "hello"


def _alive_in(cwd: Path) -> list[int]:
    """Host pids of processes working in ``cwd`` (unique to one test)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                where = os.readlink(proc / "cwd")
            except OSError:
                continue
            if where == str(cwd):
                pids.append(int(proc.name))
    return pids


@needs_bwrap
@pytest.mark.parametrize("mode", ["hang", "linger"])
def test_a_jailed_turn_leaves_no_process_behind(tmp_path: Path, mode: str) -> None:
    """Timeout or leftover child: the pid namespace ends with bwrap, nothing survives the turn."""
    from magi.agents.base import TurnRequest, TurnStatus
    from magi.agents.registry import build_agent
    from magi.sandbox.bwrap import seat_spec

    s = write_standin(tmp_path / "standin", "claude", reply="fine", mode=mode)
    agent = build_agent(s.agent_config())
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    spec = seat_spec(
        decide(Sandbox()),
        cwd=work,
        writable=False,
        hide=[],
        environ=env,
        state=[s.path.parent],
    )
    request = TurnRequest(
        seat="judge-1",
        prompt="hi",
        cwd=work,
        allow_write=False,
        timeout=3 if mode == "hang" else 60,
        jail=spec,
        environ=env,
    )
    census.become_subreaper()  # as every run does: what the turn leaves is magi's to reap
    since = census.now_ticks()
    result = agent.run_turn(request)
    expected = TurnStatus.TIMEOUT if mode == "hang" else TurnStatus.OK
    assert result.status is expected, result.error
    assert _alive_in(work.resolve()) == []
    assert _zombies_of_mine(since) == [], "bwrap's pid 1 outlived the turn as a zombie"


def _zombies_of_mine(since: int) -> list[str]:
    """Zombie children of this process started at or after ``since`` (clock ticks)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            raw = (proc / "stat").read_text()
        except (OSError, ValueError):
            continue
        fields = raw[raw.rindex(")") + 2 :].split()
        if fields[0] == "Z" and int(fields[1]) == os.getpid() and int(fields[19]) >= since:
            found.append(f"{proc.name} {raw[raw.index('(') : raw.rindex(')') + 1]} {fields[1:4]}")
    return found


@needs_bwrap
@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux `script` is not here")
def test_a_jailed_agent_of_a_magi_in_a_terminal_cannot_reach_the_terminal() -> None:
    """TIOCSTI needs a terminal: under `script` (a real one), a plain child opens /dev/tty;
    a jailed agent that magi started (its own session, pipes, the jail's /dev) cannot."""
    probe = "(exec 3</dev/tty) 2>/dev/null && echo TTY || echo NOTTY"
    code = f"""
from magi.agents.process import run
from magi.core.seats.jail import JailSpec, bwrap_argv
from magi.sandbox.bwrap import system_view
dirs, links = system_view()
argv = bwrap_argv(JailSpec(cwd="/", system=dirs, links=links), ["sh", "-c", {probe!r}])
r = run(argv, cwd=None, stdin=None, env={{"PATH": "/usr/bin:/bin"}}, timeout=60,
        output_max_bytes=1000)
print("jailed:", r.stdout.strip() or r.stderr.strip())
"""
    inner = f"sh -c {shlex.quote(probe)}; {shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    out = subprocess.run(
        ["script", "-qec", inner, "/dev/null"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    assert lines[0] == "TTY", f"no terminal to test against: {out!r}"
    assert lines[-1] == "jailed: NOTTY", out


def test_a_tree_swapped_for_a_link_to_the_checkout_costs_the_user_nothing(
    env, tmp_path: Path
) -> None:
    """Unjailed, an implementer replaces its clone with a link to the user's checkout: magi
    calls it sabotage, deletes no ref of the user's and commits nothing in that checkout."""
    repo, home, sd = env
    wts = tmp_path / "wts"
    (repo / "mine.txt").write_text("uncommitted work\n")  # the user's, never magi's
    git_out(repo, "branch", "keep-me")
    branches = git_out(repo, "for-each-ref", "--format=%(refname)", "refs/heads/")
    swap = f'sh:d="$PWD"; cd /; rm -rf "$d" && ln -s {repo} "$d"'
    cfg = _cfg(sd, {"a1": swap, "a2": "right"}, {"j1": "evidence"}, wts, "off")
    run = start(repo, home, cfg)
    bad = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert any("its tree was replaced by a link" in v for v in bad.violations), bad.violations
    now = git_out(repo, "for-each-ref", "--format=%(refname)", "refs/heads/")
    assert set(branches.split()) <= set(now.split())  # nothing of the user's deleted
    assert (repo / "mine.txt").read_text() == "uncommitted work\n"
    assert git_out(repo, "rev-parse", "main").strip() == run.base_sha
    assert git_out(repo, "status", "--porcelain").strip() == "?? mine.txt"
    assert not Path(bad.worktree or "").is_symlink()  # remade as a clone of its own


def _snooping_check(home: Path, repo: Path, wts: Path, sd: Path) -> str:
    """A candidate that commits a check script: it prints who wrote what (the run records)
    into its output, which judges read, and writes into the user's checkout and every other
    tree; then passes."""
    script = f"""cat {home}/runs/*/run.json 2>/dev/null | grep -o '"agent": "[a-z0-9]*"' | sort -u
echo x > {repo}/pwned-by-check 2>/dev/null && echo "check wrote the checkout"
for d in {wts}/*/*; do
  [ "$d" = "$PWD" ] || {{ echo x > "$d/pwned-by-check" 2>/dev/null && echo "check wrote $d"; }}
done
echo x > {sd}/check-wrote-state
common=$(git rev-parse --git-common-dir 2>/dev/null)
# Where a planted commondir would redirect the next git run outside the jail (harmless here).
echo x > "$common/planted-by-check" 2>/dev/null && echo "check wrote the git directory"
exit 0
"""
    return f"sh:cat > check.sh <<'EOS'\n{script}EOS\n{FIX} && {COMMIT} -m fix"


@pytest.mark.parametrize("mode", MODES)
def test_a_candidates_check_script_runs_in_the_jail(env, tmp_path: Path, mode: str) -> None:
    """verify.e2e runs candidate code: jailed like a seat, it reads no run record (so no
    author reaches a judge through the verification output) and writes nowhere but its
    own clean checkout and the paths of ``[sandbox] state``."""
    repo, home, sd = env
    wts = tmp_path / "wts"
    snoop = _snooping_check(home, repo, wts, sd)
    cfg = _cfg(
        sd,
        {"a1": snoop, "a2": "right"},
        {"j1": "evidence"},
        wts,
        mode,
        verify={"e2e": ["sh check.sh || true"]},
    )
    run = start(repo, home, cfg)
    assert run.status is RunStatus.READY, run.reason
    bad = next(c for c in run.candidates if run.author(c.label) == "a1")
    assert bad.verification is not None, (bad, [e.message for e in run.events])
    said = bad.verification.tail
    assert (sd / "check-wrote-state").exists(), "[sandbox] state stays writable to a check"
    if mode == "bwrap":
        assert '"agent"' not in said, said
        assert "check wrote" not in said, said
        assert not (repo / "pwned-by-check").exists()
        assert not (repo / ".git" / "planted-by-check").exists()
    else:  # what the jail stops
        assert '"agent": "a1"' in said
        assert "check wrote the checkout" in said
        assert "check wrote the git directory" in said
        # Said as the checks' doing, and no seat of a later wave is charged with it.
        (changed,) = [e.message for e in run.events if "YOUR CHECKOUT" in e.message]
        assert "while the candidates' verify.e2e ran candidate code unjailed" in changed
        assert "pwned-by-check" in changed
        assert not [v for rec in run.seats.values() for v in rec.violations if "checkout" in v]


@pytest.mark.parametrize("mode", MODES)
def test_a_jailed_panel_shares_one_read_only_tree(env, tmp_path: Path, mode: str) -> None:
    """Jailed, the judges sit in one checkout (one, not a checkout each: the jail keeps it
    read-only to every one of them, so none can change what another reads); unjailed,
    where nothing would stop a judge writing there, each has its own."""
    repo, home, sd = env
    wts = tmp_path / "wts"
    log = f"{sd}/cwd-$MAGI_SEAT"
    evidence = shlex.join([*SCRIPTED, "evidence"])
    seen = f"sh:pwd >> {log}; touch ./mine 2>/dev/null && echo wrote >> {log}; exec {evidence}"
    judges = {"j1": seen, "j2": seen}
    run = start(repo, home, _cfg(sd, {"a1": "right", "a2": "wrong"}, judges, wts, mode))
    assert run.status is RunStatus.READY, run.reason
    said = {p.name: p.read_text().split() for p in sorted(sd.glob("cwd-judge-*"))}
    cwds = {name: {w for w in words if w != "wrote"} for name, words in said.items()}
    assert sorted(cwds) == ["cwd-judge-1", "cwd-judge-2"]
    if mode == "bwrap":
        assert not any("wrote" in words for words in said.values())
        assert cwds["cwd-judge-1"] == cwds["cwd-judge-2"]
        assert {Path(c).name for c in cwds["cwd-judge-1"]} == {"judges"}
    else:
        assert cwds["cwd-judge-1"].isdisjoint(cwds["cwd-judge-2"])
        assert all("wrote" in words for words in said.values())


@pytest.mark.parametrize("mode", MODES)
def test_reviewers_that_write_their_tree(env, tmp_path: Path, mode: str, monkeypatch) -> None:
    """Jailed, the reviewers share one tree, made and shown clean once for the round, that
    none of them can write: nothing is looked at after their turns. Unjailed, each has its
    own, and a reviewer that wrote in it is said to have, and its tree is put back."""
    from magi.graph import review

    repo, home, sd = env
    wts = tmp_path / "wts"
    resets: list[Path] = []
    real = review.reset_to
    monkeypatch.setattr(review, "reset_to", lambda g, t, h: (resets.append(t), real(g, t, h))[1])
    log = f"{sd}/cwd-$MAGI_SEAT"
    evidence = shlex.join([*SCRIPTED, "evidence"])
    writes = f"sh:pwd >> {log}; touch ./planted 2>/dev/null && echo wrote >> {log}; exec {evidence}"
    cfg = config(
        sd,
        {"a1": "right"},
        {},
        {"r1": writes, "r2": writes},
        graph={"worktree_root": str(wts), "review_rounds": 1},
        sandbox={"mode": mode},
    )
    run = start(repo, home, cfg)
    assert run.status is RunStatus.READY, run.reason
    said = {p.name: p.read_text().split() for p in sorted(sd.glob("cwd-review-*"))}
    assert sorted(said) == ["cwd-review-1", "cwd-review-2"]
    put_back = [e.message for e in run.events if "changed its read-only checkout" in e.message]
    if mode == "bwrap":
        assert not any("wrote" in words for words in said.values())
        assert said["cwd-review-1"] == said["cwd-review-2"]
        assert resets == [], "the one tree was leased fresh, never reset a second time"
        assert put_back == []
    else:
        assert all("wrote" in words for words in said.values())
        assert said["cwd-review-1"] != said["cwd-review-2"]
        assert sorted(m.split(":")[0] for m in put_back) == ["review-1", "review-2"]
        for words in said.values():
            assert not (Path(words[0]) / "planted").exists()
