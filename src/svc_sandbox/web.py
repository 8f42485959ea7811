"""HTTP helpers shared by every family's api.py: the request's sandbox, JSON bodies, errors.

With app.py and the api.py modules, this is the only place that imports Flask.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from flask import Flask, Request, Response, current_app, request
from pydantic import BaseModel
from werkzeug.datastructures import MultiDict
from werkzeug.wsgi import get_content_length

from svc_sandbox.core import json_input
from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.core.validation import parse
from svc_sandbox.sandbox import Sandbox

M = TypeVar("M", bound=BaseModel)

MAX_BODY_BYTES = 1024 * 1024

#: What the request hooks share, kept in the request's WSGI environ (PEP 3333 leaves dotted
#: keys to servers and middleware): a dict lookup on the request in hand, where every access
#: to ``flask.g`` is a context lookup.
REQUEST_ID = "svc_sandbox.request_id"
CONTRACT_CHECK = "svc_sandbox.contract_check"


def sandbox() -> Sandbox:
    return sandbox_of(current_app)


def sandbox_of(app: Flask) -> Sandbox:
    """The Sandbox that ``create_app`` put behind ``app``."""
    found: Sandbox = app.extensions["svc_sandbox"]
    return found


def json_body(optional: bool = False) -> Any:
    """The request's JSON document; 415 for another content type, 400 for broken JSON or for
    what no body may hold (too deep, non-finite numbers, lone surrogates, NUL: core/json_input)."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if optional:
            return {}
        raise ValidationFailed("body is required: send a JSON object")
    if request.mimetype != "application/json":
        raise SandboxError(
            "Content-Type must be application/json", status=415, code="unsupported_media_type"
        )
    return json_input.decode(raw)


FORM_TYPE = "application/x-www-form-urlencoded"


def form_body() -> MultiDict[str, str]:
    """The request's form. werkzeug reads a form-urlencoded body that is not UTF-8 as an empty
    form (a token request then lost every field and was refused for the first one it
    needed); here it is 400 ``invalid_request`` saying so. Every route reading a form reads it
    here."""
    if request.mimetype == FORM_TYPE:
        # Kept, so the form below is parsed from this copy (the stream is read once).
        raw = request.get_data(cache=True)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SandboxError(
                f"the body is not valid UTF-8 (byte {error.start}): a {FORM_TYPE} body "
                "must be UTF-8, with any other byte percent-encoded",
                code="invalid_request",
            ) from None
    return request.form


def parse_body(model: type[M]) -> M:
    return parse(model, json_body())


#: One encoder for every answer (``json.dumps`` with an option builds a new one per call).
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    response = current_app.response_class(
        _COMPACT.encode(body) + "\n",
        status=status,
        mimetype="application/json",
    )
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def error_response(error: SandboxError, body: dict[str, Any]) -> Response:
    return json_response(body, error.status, error.headers)


#: Bodies up to this size are kept in the request journal (for `svc-sandbox record`).
JOURNAL_BODY_BYTES = 16 * 1024


def request_details(current: Request) -> dict[str, Any]:
    """What the recorder needs to replay ``current``: query, body, Authorization.

    Read from the WSGI environ as the server put it: the first access to werkzeug's
    ``headers``, ``query_string`` or ``content_length`` builds a headers view on every request
    (5-7 µs of a GET), for three strings."""
    details: dict[str, Any] = {}
    environ = current.environ
    query = environ.get("QUERY_STRING")
    if query:  # a WSGI str holds the raw bytes as latin-1 (PEP 3333)
        details["query"] = query.encode("latin-1").decode("utf-8", "replace")
    header = environ.get("HTTP_AUTHORIZATION")
    if header is not None:
        details["authorization"] = header
    size = get_content_length(environ) or 0
    if 0 < size <= JOURNAL_BODY_BYTES:
        if current.mimetype == "application/x-www-form-urlencoded":
            details["form"] = current.form.to_dict()
        else:
            details["body"] = current.get_data(cache=True).decode("utf-8", "replace")
            details["contentType"] = current.mimetype
    return details
