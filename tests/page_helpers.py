"""The setup page's form as a browser would post it (for the tests that drive `magi app setup`)."""

from __future__ import annotations

import asyncio
import json
import re
from html.parser import HTMLParser
from typing import Any

import httpx


class Form(HTMLParser):
    """A page's form: its action and its fields, as a browser would post them."""

    def __init__(self) -> None:
        super().__init__()
        self.action = ""
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.action = a.get("action") or ""
        if tag == "input" and a.get("name"):
            self.fields[str(a["name"])] = a.get("value") or ""


def read_form(text: str) -> Form:
    f = Form()
    f.feed(text)
    return f


async def press_the_button(stdout: asyncio.StreamReader, code: str) -> str:
    """What a person does with `magi app setup`'s page: open the URL its first line names,
    post the form, and come back as GitHub redirects (with ``code`` and the page's state).
    Returns that first line."""
    first = (await stdout.readline()).decode()  # printed once its socket listens
    here = re.search(r"open (http://127\.0\.0\.1:\d+)/", first)
    assert here, first
    async with httpx.AsyncClient(timeout=30) as client:
        form = read_form((await client.get(here.group(1) + "/")).text)
        state = form.action.split("state=", 1)[1]
        posted: dict[str, Any] = json.loads(form.fields["manifest"])
        assert posted["redirect_url"] == here.group(1) + "/done"
        back = await client.get(posted["redirect_url"], params={"code": code, "state": state})
        # The page sends the browser on to GitHub's installation page of the new App.
        assert back.status_code == 303, back.text
        assert "/installations/new" in back.headers["location"], back.headers
    return first
