"""The setup page's form as a browser would post it (for the tests that drive `magi app setup`)."""

from __future__ import annotations

from html.parser import HTMLParser


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
