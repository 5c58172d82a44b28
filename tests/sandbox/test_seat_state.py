"""A seat's own copy of its CLI's state: laid with the login only, handed back, links refused."""

from __future__ import annotations

import json
from pathlib import Path

from magi.agents.claude import STATE as CLAUDE
from magi.agents.gemini import STATE as GEMINI
from magi.core.seats.clistate import CliState, Login, Root
from magi.sandbox.seat_state import hand_back, lay


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text('{"token": "t1"}')
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
    assert (home / ".claude" / ".credentials.json").read_text() == '{"token": "t1"}'
    assert not (copy / ".credentials.json").is_symlink()
    (copy / ".credentials.json").symlink_to(key)  # left for the next turn's lay
    lay(CLAUDE, home=str(home), environ={}, seat_dir=tmp_path / "seat")
    assert key.read_text() == "PRIVATE KEY"
    assert (copy / ".credentials.json").read_text() == '{"token": "t1"}'


def test_a_renewed_login_goes_back_once_and_a_later_renewal_of_the_same_is_dropped(
    tmp_path: Path,
) -> None:
    home = _home(tmp_path)
    one = lay(CLAUDE, home=str(home), environ={}, seat_dir=tmp_path / "one")
    two = lay(CLAUDE, home=str(home), environ={}, seat_dir=tmp_path / "two")
    for laid, token in ((one, "t2"), (two, "t3")):
        copy = next(Path(c) for c, d in laid.binds if d.endswith(".claude"))
        (copy / ".credentials.json").write_text(json.dumps({"token": token}))
    user = home / ".claude" / ".credentials.json"
    assert hand_back(one, lock_dir=tmp_path / "locks") == [str(user)]
    assert hand_back(two, lock_dir=tmp_path / "locks") == []
    assert json.loads(user.read_text()) == {"token": "t2"}


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
