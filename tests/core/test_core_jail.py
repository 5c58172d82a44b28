"""The jail policy: what each seat may read, write and not see, and the bwrap argv it becomes."""

from __future__ import annotations

import json
from dataclasses import replace

from magi.core.seats.clistate import login_part, merge_login, without_login
from magi.core.seats.egress import INSIDE_SOCKET, Net
from magi.core.seats.jail import (
    BWRAP_BASE,
    JailSpec,
    bwrap_argv,
    policy,
    visible,
    writes_under,
)

HOME = "/home/u"
MAGI = "/home/u/.local/share/magi"
WT = "/home/u/.local/share/magi/worktrees/run1"
COPY = f"{MAGI}/runs/run1/cli-state/impl-A/1-.claude"
SYSTEM = ("/usr", "/etc", "/opt")


def _spec(writable: bool) -> JailSpec:
    return policy(
        cwd=f"{WT}/A",
        writable=writable,
        hide=[MAGI, "/home/u/.config/magi", "/src/repo", WT, "/opt/actions-runner"],
        git_dirs=["/src/repo/.git"],
        read=["/src/repo/.git/hooks", "/home/u/.pyenv", "/opt/actions-runner/_work/_tool"],
        system=SYSTEM,
        links=[("/bin", "usr/bin")],
        scratch=[HOME],
        mask=["/etc/shadow"],
        binds=[(COPY, "/home/u/.claude")],
    )


def test_an_implementer_writes_its_tree_its_git_and_its_own_cli_copy_only() -> None:
    """Own tree, git dir and its copy of ~/.claude are writable; MAGI_HOME, config and
    siblings hidden; the user's own ~/.claude stands behind the copy."""
    spec = _spec(writable=True)
    assert visible(spec, f"{WT}/A/src/x.py") == "write"
    assert visible(spec, "/src/repo/.git/objects/ab") == "write"
    assert visible(spec, f"{COPY}/projects/x.jsonl") == "write"
    assert visible(spec, "/home/u/.claude/CLAUDE.md") == "hidden"
    assert visible(spec, f"{MAGI}/runs/run1/run.json") == "hidden"
    assert visible(spec, f"{WT}/B/secret.py") == "hidden"
    assert visible(spec, "/home/u/.config/magi/config.toml") == "hidden"
    assert visible(spec, "/src/repo/README.md") == "hidden"
    assert visible(spec, "/src/repo/.git/hooks/pre-commit") == "read"
    assert visible(spec, "/usr/bin/git") == "read"
    assert visible(spec, "/bin/sh") == "read"


def test_the_jail_shows_by_allowlist_never_by_exception() -> None:
    """Nothing of / is shown unless named: the home, /root, /var, /srv, another user's
    home and the runner's own files are hidden; toolchains and the tool cache are shown."""
    spec = _spec(writable=True)
    for secret in (
        "/home/u/.ssh/id_ed25519",
        "/home/u/.config/gh/hosts.yml",
        "/home/u/.codex/auth.json",
        "/home/u/.bashrc",
        "/home/other/.aws/credentials",
        "/root/.ssh/id_rsa",
        "/var/run/docker.sock",
        "/run/user/1000/ssh-agent.sock",
        "/opt/actions-runner/.credentials",
        "/opt/actions-runner/.runner",
        "/opt/actions-runner/_diag/Runner.log",
        "/opt/actions-runner/_work/_temp/env.sh",
        "/etc/shadow",
        "/srv/data",
    ):
        assert visible(spec, secret) == "hidden", secret
    assert visible(spec, "/home/u/.pyenv/versions/3.12/bin/python") == "read"
    assert visible(spec, "/opt/actions-runner/_work/_tool/node/bin/node") == "read"
    assert visible(spec, "/opt/hostedtoolcache/go") == "read"


def test_a_judge_cannot_write_its_tree_or_git_but_keeps_its_session() -> None:
    """A read-only seat's tree and git dir are read-only; its CLI copy stays writable."""
    spec = _spec(writable=False)
    assert not spec.writable
    assert visible(spec, f"{WT}/A/src/x.py") == "read"
    assert visible(spec, "/src/repo/.git/refs/heads/main") == "read"
    assert visible(spec, f"{COPY}/projects/x.jsonl") == "write"
    assert visible(spec, f"{WT}/B/x") == "hidden"


def test_what_a_seat_can_change_of_a_folder_counts_writable_binds_inside_it() -> None:
    """``writes_under``: the folder itself writable, or a writable bind anywhere inside it
    (an implementer's worktree inside the repository's git directory, a CLI copy). A
    read-only or hidden folder with nothing writable below is out of reach."""
    spec = _spec(writable=True)
    assert writes_under(spec, "/src/repo/.git")
    assert writes_under(spec, "/src/repo")  # its .git is bound writable inside it
    judge = _spec(writable=False)
    assert not writes_under(judge, "/src/repo/.git")
    assert writes_under(judge, MAGI)  # its CLI copy lies inside
    clone = policy(cwd=f"{WT}/A", writable=True, hide=["/src/repo", WT], read=["/src/repo/.git"])
    assert not writes_under(clone, "/src/repo/.git")
    assert not writes_under(clone, "/src/repo/.gitx")
    inside = policy(cwd="/src/repo/.git/worktrees/x", writable=True, hide=[])
    assert writes_under(inside, "/src/repo/.git")


def test_the_host_tmp_is_hidden_behind_a_private_one() -> None:
    """Another process's files in /tmp are out of sight; the seat's own bound paths are not."""
    spec = policy(cwd="/tmp/wt/A", writable=True, hide=["/tmp/wt"], system=SYSTEM)
    assert visible(spec, "/tmp/other-agent.sock") == "hidden"
    assert visible(spec, "/tmp/wt/A/x") == "write"


def test_mounts_go_parents_first_so_a_bind_inside_a_hidden_root_reappears() -> None:
    """The system first, the scratch home before the copy bound in it, the tmpfs over the
    worktree root before the seat's own tree; the empty root is read-only last."""
    argv = bwrap_argv(_spec(writable=True), ["claude", "-p"])
    assert argv[: 1 + len(BWRAP_BASE)] == ["bwrap", *BWRAP_BASE]
    assert "/" not in argv[: argv.index("--remount-ro")]  # no --ro-bind / /
    assert argv[-3:] == ["--", "claude", "-p"]
    assert argv[argv.index("/bin") - 2 :][:3] == ["--symlink", "usr/bin", "/bin"]
    hide_root = argv.index(WT)
    own = argv.index(f"{WT}/A")
    assert argv[hide_root - 1] == "--tmpfs"
    assert argv[own - 1] == "--bind"
    assert hide_root < own
    home = argv.index(HOME)
    assert argv[home - 1] == "--tmpfs"
    assert argv[argv.index(COPY) - 1] == "--bind"
    assert argv[argv.index(COPY) + 1] == "/home/u/.claude"
    assert home < argv.index(MAGI) < hide_root  # the parent hidden before anything inside it
    assert argv.index("/usr") < home
    shadow = argv.index("/etc/shadow")
    assert argv[shadow - 2 : shadow] == ["--ro-bind", "/dev/null"]
    hooks = argv.index("/src/repo/.git/hooks")
    assert argv[hooks - 1] == "--ro-bind"
    assert argv.index("/src/repo/.git") < hooks  # read-only on top of the writable git dir
    remounts = [argv[i + 1] for i, a in enumerate(argv) if a == "--remount-ro"]
    assert remounts[-1] == "/"
    assert HOME not in remounts  # the home is a writable scratch


def test_the_argv_keeps_the_network_and_ends_with_the_turn() -> None:
    """No --unshare-net (providers must be reachable); die-with-parent and own pids. No
    --new-session: magi's own setsid keeps the terminal away (test_jail_hostile)."""
    argv = bwrap_argv(_spec(writable=False), ["x"])
    assert "--unshare-net" not in argv
    assert "--unshare-all" not in argv
    for flag in ("--die-with-parent", "--unshare-pid"):
        assert flag in argv
    assert "--new-session" not in argv
    assert argv[argv.index("--chdir") + 1] == f"{WT}/A"


def test_a_prompt_file_inside_magi_home_is_bound_alone() -> None:
    """reading() adds one file read-only; the rest of MAGI_HOME stays hidden."""
    prompt = f"{MAGI}/runs/run1/artifacts/judge-1.prompt.md"
    spec = _spec(writable=False).reading(prompt)
    assert visible(spec, prompt) == "read"
    assert visible(spec, f"{MAGI}/runs/run1/artifacts/impl-A.reply.md") == "hidden"
    assert spec.reading(prompt) == spec


def test_a_login_is_taken_from_a_settings_file_by_its_keys_alone() -> None:
    """Of ~/.claude.json only the account keys reach a seat; of gemini's settings.json only
    the auth method. The seat's own keys are kept around the login, and taken out after."""
    user = json.dumps(
        {"oauthAccount": {"email": "a@b"}, "mcpServers": {"x": {}}, "hooks": {"Stop": ["y"]}}
    )
    part = login_part(user, ("oauthAccount", "userID"))
    assert part == {"oauthAccount": {"email": "a@b"}}
    seat = merge_login('{"projects": {"/w": {}}, "oauthAccount": "stale"}', part, ("oauthAccount",))
    assert json.loads(seat) == {"projects": {"/w": {}}, "oauthAccount": {"email": "a@b"}}
    assert json.loads(without_login(seat, ("oauthAccount",)) or "") == {"projects": {"/w": {}}}
    assert without_login("not json", ("oauthAccount",)) is None
    settings = json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}, "x": 1}})
    assert login_part(settings, ("security.auth",)) == {
        "security": {"auth": {"selectedType": "gemini-api-key"}}
    }
    assert login_part("[1, 2]", ("security.auth",)) == {}


def test_a_jail_with_a_network_of_its_own_unshares_it_and_binds_only_its_proxy() -> None:
    """``net`` set: loopback only, and the proxy's socket (when there is a way out) at the
    one path the bridge knows; unset (the host's network): neither."""
    spec = JailSpec(cwd="/w")
    assert "--unshare-net" not in bwrap_argv(spec, ["true"])
    sealed = bwrap_argv(replace(spec, net=Net()), ["true"])
    assert "--unshare-net" in sealed
    assert INSIDE_SOCKET not in sealed
    out = bwrap_argv(replace(spec, net=Net(socket="/tmp/magi-egress-x/proxy.sock")), ["true"])
    at = out.index("--unshare-net")
    assert out[at + 1 : at + 4] == ["--ro-bind", "/tmp/magi-egress-x/proxy.sock", INSIDE_SOCKET]
    assert at < out.index("--")
