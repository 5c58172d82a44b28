"""`magi app setup` spares the steps it can: the form proposes a name GitHub has not given
out (`magi-OWNER`, not `magi`), and at a terminal with a desktop the local page opens in
the person's browser by itself, so creating the App is GitHub's one click."""

from __future__ import annotations

import pytest

from magi.cli.app_setup import app_name, open_in_browser

URL = "http://127.0.0.1:8123/"


def test_the_proposed_name_is_the_owners_and_fits_githubs_limit() -> None:
    assert app_name("acme") == "magi-acme"
    long = app_name("a" * 30 + "-b-cdef")
    assert long is not None
    assert len(long) <= 34
    assert not long.endswith("-")
    assert app_name(None) is None
    assert app_name("") is None


@pytest.mark.parametrize(
    ("environ", "tty", "opened"),
    [
        ({"DISPLAY": ":0"}, True, True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, True, True),
        ({"DISPLAY": ":0"}, False, False),  # a script or a pipe: the address is printed
        ({}, True, False),  # over ssh, no desktop: nothing to open it in
    ],
)
def test_the_page_opens_only_where_a_person_has_a_browser(
    environ: dict[str, str], tty: bool, opened: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    asked: list[str] = []

    def opener(url: str) -> bool:
        asked.append(url)
        return True

    assert open_in_browser(URL, environ, tty=tty, opener=opener) is opened
    assert asked == ([URL] if opened else [])


def test_a_browser_that_cannot_start_leaves_the_printed_address() -> None:
    import webbrowser

    def opener(url: str) -> bool:
        raise webbrowser.Error("could not locate runnable browser")

    assert open_in_browser(URL, {"DISPLAY": ":0"}, tty=True, opener=opener) is False


def test_the_install_page_is_the_owners_on_the_github_setup_was_pointed_at() -> None:
    """GitHub's answer names the App's page and its owner: the browser goes to that owner's
    installation page (no account to pick); a page of another host is never followed."""
    from magi.cli.app_setup import install_page

    got = {"html_url": "https://github.com/apps/magi-acme", "owner": {"login": "acme", "id": 7}}
    assert (
        install_page("https://github.com", got)
        == "https://github.com/apps/magi-acme/installations/new/permissions?target_id=7"
    )
    no_owner = {"html_url": "https://github.com/apps/magi-acme"}
    assert (
        install_page("https://github.com", no_owner)
        == "https://github.com/apps/magi-acme/installations/new"
    )
    assert install_page("https://github.com", {"html_url": "https://evil.test/apps/x"}) == ""
    assert (
        install_page("https://github.com", {"html_url": "https://github.com.evil.test/apps/x"})
        == ""
    )
