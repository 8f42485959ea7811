"""Posting a hosted page's form as a browser does: the page's hidden CSRF field goes along."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from flask.testing import FlaskClient
from werkzeug.test import TestResponse


class _HiddenFields(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "input" and found.get("type") == "hidden" and found.get("name"):
            self.fields[str(found["name"])] = found.get("value") or ""


def csrf_of(client: FlaskClient, page: str) -> str:
    """The CSRF token the page at ``page`` puts in its forms."""
    response = client.get(page)
    assert response.status_code == 200, response.status
    parser = _HiddenFields()
    parser.feed(response.get_data(as_text=True))
    return parser.fields["csrf"]


def submit(
    client: FlaskClient, page: str, data: dict[str, Any] | None = None, action: str | None = None
) -> TestResponse:
    """Loads ``page`` and posts ``data`` with its token to ``action`` (default: the page)."""
    fields = {**(data or {}), "csrf": csrf_of(client, page)}
    return client.post(action or page, data=fields)
