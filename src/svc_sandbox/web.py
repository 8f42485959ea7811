"""HTTP helpers shared by every family's api.py: the request's sandbox, JSON bodies, errors.

With app.py and the api.py modules, this is the only place that imports Flask.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from flask import Flask, Response, current_app, request
from pydantic import BaseModel

from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.core.validation import parse
from svc_sandbox.sandbox import Sandbox

M = TypeVar("M", bound=BaseModel)

MAX_BODY_BYTES = 1024 * 1024


def sandbox() -> Sandbox:
    return sandbox_of(current_app)


def sandbox_of(app: Flask) -> Sandbox:
    """The Sandbox that ``create_app`` put behind ``app``."""
    found: Sandbox = app.extensions["svc_sandbox"]
    return found


def json_body(optional: bool = False) -> Any:
    """The request's JSON document; 415 for another content type, 400 for broken JSON."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if optional:
            return {}
        raise ValidationFailed("body is required: send a JSON object")
    if request.mimetype != "application/json":
        raise SandboxError(
            "Content-Type must be application/json", status=415, code="unsupported_media_type"
        )
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationFailed(f"body is not valid JSON: {exc}") from None


def parse_body(model: type[M]) -> M:
    return parse(model, json_body())


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    response = current_app.response_class(
        json.dumps(body, separators=(",", ":")) + "\n",
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


def request_details() -> dict[str, Any]:
    """What the recorder needs to replay the current request: query, body, Authorization."""
    details: dict[str, Any] = {}
    if request.query_string:
        details["query"] = request.query_string.decode("utf-8", "replace")
    header = request.headers.get("Authorization")
    if header is not None:
        details["authorization"] = header
    size = request.content_length or 0
    if 0 < size <= JOURNAL_BODY_BYTES:
        if request.mimetype == "application/x-www-form-urlencoded":
            details["form"] = request.form.to_dict()
        else:
            details["body"] = request.get_data(cache=True).decode("utf-8", "replace")
            details["contentType"] = request.mimetype
    return details
