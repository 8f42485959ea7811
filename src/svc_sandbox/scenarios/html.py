"""Reading a hosted page's form: the value of an ``<input>`` by name (stdlib HTML parser)."""

from __future__ import annotations

from html.parser import HTMLParser


class _Inputs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "input":
            return
        named = dict(attrs)
        name = named.get("name")
        if name and name not in self.values:
            self.values[name] = named.get("value") or ""


def input_value(html: str, name: str) -> str | None:
    """The value of the first ``<input name="...">`` of the page, or None."""
    parser = _Inputs()
    parser.feed(html)
    parser.close()
    return parser.values.get(name)
