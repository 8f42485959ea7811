"""What ``save`` and ``expect.paths`` read from a response: a path into the JSON body,
``status``, ``headers.<Name>``, ``form.<input>``, and ``<any of these>?name`` for a query
parameter of the URL found there."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from svc_sandbox.scenarios.html import input_value
from svc_sandbox.scenarios.matchers import MISSING, check_path, resolve
from svc_sandbox.scenarios.transport import HttpResponse


def pick(response: HttpResponse, path: str) -> Any:
    """The value at ``path``; ``<path>?name`` reads the query parameter ``name`` of the URL
    at ``<path>`` (a redirect's ``headers.Location?code``, a body's ``redirectUrl?state``)."""
    if "?" in path:
        where, name = path.rsplit("?", 1)
        url = pick(response, where)
        if not isinstance(url, str):
            return MISSING
        values = parse_qs(urlsplit(url).query, keep_blank_values=True).get(name)
        return MISSING if not values else values[0]
    if path == "status":
        return response.status
    if path.startswith("headers."):
        found = response.header(path[len("headers.") :])
        return MISSING if found is None else found
    if path.startswith("form."):
        text = response.body.decode("utf-8", "replace")
        found = input_value(text, path[len("form.") :])
        return MISSING if found is None else found
    return resolve(response.json(), _body_path(path))


def pick_problem(path: str) -> str | None:
    """Why ``pick`` cannot read ``path`` (``items[abc``), or None."""
    if "?" in path:
        where, name = path.rsplit("?", 1)
        return pick_problem(where) or (None if name else f"no parameter name after ? in {path!r}")
    if path == "status" or path.startswith(("headers.", "form.")):
        return None
    return check_path(_body_path(path))


def _body_path(path: str) -> str:
    return path[len("body") :] if path == "body" or path.startswith("body.") else path
