"""A seat's own copy of its CLI's state: laid with the login only, handed back, links refused."""

from __future__ import annotations

import json
from pathlib import Path

from magi.agents.claude import STATE as CLAUDE
from magi.agents.gemini import STATE as GEMINI
from magi.core.seats.clistate import CliState, Login, Root
from magi.sandbox.seat_state import hand_back, lay


def _oauth(token: str) -> dict[str, object]:
    """claude's login as Claude Code writes it (README §1): renewed, only these change."""
    return {"claudeAiOauth": {"accessToken": token, "refreshToken": f"r-{token}", "expiresAt": 1}}


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text(json.dumps(_oauth("t1")))
    (home / ".claude" / "CLAUDE.md").write_text("the user's own instructions")
    (home / ".claude" / "settings.json").write_text('{"hooks": {}}')
    (home / ".claude.json").write_text(json.dumps({"userID": "u", "mcpServers": {"x": {}}}))
    return home


def test_a_copy_holds_the_login_only_and_binds_where_the_cli_looks(tmp_path: Path) -> None:
    home = _home(tmp_path)
    laid = lay(CLAUDE, home=str(home), environ={}, seat_dir=tmp_path / "seat")
    dests = dict((d, Path(c)) for c, d in laid.binds)
    assert set(dests) == {str(home / ".claude"), str(home / ".claude.json")}
    copy = dests[str(home / ".claude")]
    assert sorted(p.name for p in copy.iterdir()) == [".credentials.json"]
    assert json.loads(dests[str(home / ".claude.json")].read_text()) == {"userID": "u"}
    assert hand_back(laid, lock_dir=tmp_path / "locks") == []
    assert list(copy.iterdir()) == []  # no login rests in the copy between turns
    assert json.loads(dests[str(home / ".claude.json")].read_text()) == {}


def test_a_link_the_seat_left_in_its_copy_is_never_followed(tmp_path: Path) -> None:
    """A seat that swaps its login for a link to the user's SSH key (or another CLI's
    login) gets neither read into the user's login nor written through."""
    home = _home(tmp_path)
    key = tmp_path / "id_ed25519"
    key.write_text("PRIVATE KEY")
    laid = lay(CLAUDE, home=str(home), environ={}, seat_dir=tmp_path / "seat")
    copy = next(Path(c) for c, d in laid.binds if d.endswith(".claude"))
    (copy / ".credentials.json").unlink()
    (copy / ".credentials.json").symlink_to(key)
    assert hand_back(laid, lock_dir=tmp_path / "locks") == []
    assert json.loads((home / ".claude" / ".credentials.json").read_text()) == _oauth("t1")
    assert not (copy / ".credentials.json").is_symlink()
    (copy / ".credentials.json").symlink_to(key)  # left for the next turn's lay
    lay(CLAUDE, home=str(home), environ={}, seat_dir=tmp_path / "seat")
    assert key.read_text() == "PRIVATE KEY"
    assert json.loads((copy / ".credentials.json").read_text()) == _oauth("t1")


def test_a_renewed_login_goes_back_once_and_a_later_renewal_of_the_same_is_dropped(
    tmp_path: Path,
) -> None:
    home = _home(tmp_path)
    one = lay(CLAUDE, home=str(home), environ={}, seat_dir=tmp_path / "one")
    two = lay(CLAUDE, home=str(home), environ={}, seat_dir=tmp_path / "two")
    for laid, token in ((one, "t2"), (two, "t3")):
        copy = next(Path(c) for c, d in laid.binds if d.endswith(".claude"))
        (copy / ".credentials.json").write_text(json.dumps(_oauth(token)))
    user = home / ".claude" / ".credentials.json"
    assert hand_back(one, lock_dir=tmp_path / "locks") == [str(user)]
    assert hand_back(two, lock_dir=tmp_path / "locks") == []
    assert json.loads(user.read_text()) == _oauth("t2")


def test_gemini_gets_its_auth_choice_and_no_other_setting(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks": {"x": 1}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    (home / ".gemini" / "GEMINI.md").write_text("user instructions")
    laid = lay(GEMINI, home=str(home), environ={}, seat_dir=tmp_path / "seat")
    copy = Path(laid.binds[0][0])
    assert sorted(p.name for p in copy.iterdir()) == ["settings.json"]
    assert json.loads((copy / "settings.json").read_text()) == {
        "security": {"auth": {"selectedType": "gemini-api-key"}}
    }


def test_a_cache_seeds_a_new_copy_once_and_never_flows_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "cache").mkdir(parents=True)
    (home / "cache" / "pkg.js").write_text("v1")
    state = CliState((Root("~/cache", seed=True), Root("$UNSET_DIR", (Login("x"),))))
    laid = lay(state, home=str(home), environ={}, seat_dir=tmp_path / "seat")
    assert len(laid.binds) == 1
    copy = Path(laid.binds[0][0])
    assert (copy / "pkg.js").read_text() == "v1"
    (copy / "pkg.js").write_text("poisoned")
    (home / "cache" / "pkg.js").write_text("v2")
    lay(state, home=str(home), environ={}, seat_dir=tmp_path / "seat")
    assert (copy / "pkg.js").read_text() == "poisoned"  # the seat's own, as it left it
    assert (home / "cache" / "pkg.js").read_text() == "v2"


def _opencode_home(tmp_path: Path, auth: dict[str, object] | None) -> Path:
    home = tmp_path / "home"
    (home / ".local/share/opencode").mkdir(parents=True, exist_ok=True)
    if auth is not None:
        (home / ".local/share/opencode/auth.json").write_text(json.dumps(auth))
    return home


def _rewrite(laid, name: str, value: object) -> None:  # type: ignore[no-untyped-def]
    copy = next(Path(c) for c, d in laid.binds if d.endswith(".local/share/opencode"))
    (copy / name).write_text(json.dumps(value))


def test_a_seat_cannot_hand_back_a_login_where_the_user_had_none(tmp_path: Path) -> None:
    """The user logs opencode in with a key: the seat's `auth.json` (a `wellknown` entry
    makes opencode fetch its config from a URL) never reaches the user's folder."""
    from magi.agents.opencode import STATE as OPENCODE

    home = _opencode_home(tmp_path, None)
    laid = lay(OPENCODE, home=str(home), environ={}, seat_dir=tmp_path / "seat")
    _rewrite(laid, "auth.json", {"https://evil.test": {"type": "wellknown", "key": "X"}})
    assert hand_back(laid, lock_dir=tmp_path / "locks") == []
    assert not (home / ".local/share/opencode/auth.json").exists()


def test_only_a_renewal_of_the_same_login_is_handed_back(tmp_path: Path) -> None:
    """New tokens and expiry: taken. Another entry, another account, another shape: not."""
    from magi.agents.opencode import STATE as OPENCODE

    mine = {"anthropic": {"type": "oauth", "refresh": "r1", "access": "a1", "expires": 1}}
    user = tmp_path / "home/.local/share/opencode/auth.json"
    refused = [
        {**mine, "https://evil.test": {"type": "wellknown", "key": "X"}},
        {"anthropic": {"type": "wellknown", "refresh": "r1", "access": "a1", "expires": 1}},
        {"anthropic": {"type": "oauth", "refresh": "r2", "access": "a2"}},
        "not an object",
    ]
    for i, value in enumerate(refused):
        home = _opencode_home(tmp_path, mine)
        laid = lay(OPENCODE, home=str(home), environ={}, seat_dir=tmp_path / f"seat{i}")
        _rewrite(laid, "auth.json", value)
        assert hand_back(laid, lock_dir=tmp_path / "locks") == [], value
        assert json.loads(user.read_text()) == mine
    renewed = {"anthropic": {"type": "oauth", "refresh": "r2", "access": "a2", "expires": 9}}
    laid = lay(OPENCODE, home=str(home), environ={}, seat_dir=tmp_path / "seat-ok")
    _rewrite(laid, "auth.json", renewed)
    assert hand_back(laid, lock_dir=tmp_path / "locks") == [str(user)]
    assert json.loads(user.read_text()) == renewed


def test_a_fifo_or_a_huge_file_in_the_copy_is_no_login_and_never_blocks(tmp_path: Path) -> None:
    """A seat that swaps its login for a fifo would hang magi's hand-back in `open()`; a
    sparse file of gigabytes would be read whole. Both are removed, unread."""
    import os
    import threading

    home = _home(tmp_path)
    laid = lay(CLAUDE, home=str(home), environ={}, seat_dir=tmp_path / "seat")
    copy = next(Path(c) for c, d in laid.binds if d.endswith(".claude"))
    (copy / ".credentials.json").unlink()
    os.mkfifo(copy / ".credentials.json")
    json_copy = next(Path(c) for c, d in laid.binds if d.endswith(".claude.json"))
    with json_copy.open("r+b") as f:
        f.truncate(8 * 1024**3)
    done = threading.Event()
    threading.Thread(
        target=lambda: (hand_back(laid, lock_dir=tmp_path / "locks"), done.set()), daemon=True
    ).start()
    assert done.wait(60), "the hand-back blocked on the seat's fifo"
    assert not (copy / ".credentials.json").exists()
    assert json.loads((home / ".claude" / ".credentials.json").read_text()) == _oauth("t1")


def test_a_variable_that_names_the_default_place_lays_both_logins(tmp_path: Path) -> None:
    """CLAUDE_CONFIG_DIR=~/.claude: one copy, and the .claude.json inside it laid too."""
    home = _home(tmp_path)
    (home / ".claude" / ".claude.json").write_text(json.dumps({"userID": "inside"}))
    env = {"CLAUDE_CONFIG_DIR": str(home / ".claude")}
    laid = lay(CLAUDE, home=str(home), environ=env, seat_dir=tmp_path / "seat")
    copy = next(Path(c) for c, d in laid.binds if d.endswith(".claude"))
    assert len(laid.binds) == 2
    assert json.loads((copy / ".claude.json").read_text()) == {"userID": "inside"}
