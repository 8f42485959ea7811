"""HTTP helpers shared by every family's api.py: the request's sandbox, JSON bodies, errors.

With app.py and the api.py modules, this is the only place that imports Flask.
"""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote

from flask import Flask, Request, Response, current_app, request
from pydantic import BaseModel, ConfigDict
from werkzeug.datastructures import MultiDict
from werkzeug.wsgi import get_content_length

from svc_sandbox.core import json_input
from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.core.validation import (
    SHOWN_CHARACTERS,
    UNKNOWN,
    SingleValues,
    cut,
    grouped,
    parse,
    shown,
    unknown_field,
)
from svc_sandbox.sandbox import Sandbox

M = TypeVar("M", bound=BaseModel)
V = TypeVar("V", bound=Callable[..., Any])

MAX_BODY_BYTES = 1024 * 1024

#: What the request hooks share, kept in the request's WSGI environ (PEP 3333 leaves dotted
#: keys to servers and middleware): a dict lookup on the request in hand, where every access
#: to ``flask.g`` is a context lookup.
REQUEST_ID = "svc_sandbox.request_id"
#: The latency (seconds) a latency rule applied to the request (app.py inject_latency): the
#: journal shows it as ``delaySeconds``, and the recorder leaves it out of the time between
#: requests (the rule, replayed, applies it again).
LATENCY_APPLIED = "svc_sandbox.latency_applied"
CONTRACT_CHECK = "svc_sandbox.contract_check"
#: The Access-Control-Allow-Origin a browser's request is granted (identity/cors.py).
CORS_ORIGIN = "svc_sandbox.cors_origin"


def sandbox() -> Sandbox:
    return sandbox_of(current_app._get_current_object())  # type: ignore[attr-defined]


def current_request() -> Request:
    """The request itself. Each attribute read through Flask's ``request`` proxy first fails
    on the proxy (Python builds and drops an AttributeError), then looks the request up: about
    1.4 µs, against 0.2 µs on the object. Code on every request's path reads it once here."""
    found: Request = request._get_current_object()  # type: ignore[attr-defined]
    return found


def sandbox_of(app: Flask) -> Sandbox:
    """The Sandbox that ``create_app`` put behind ``app``."""
    found: Sandbox = app.extensions["svc_sandbox"]
    return found


def json_body(optional: bool = False) -> Any:
    """The request's JSON document; 415 for another content type, 400 for broken JSON or for
    what no body may hold (too deep, non-finite numbers, lone surrogates, NUL: core/json_input)."""
    current = current_request()
    raw = current.get_data(cache=True)
    if not raw.strip():
        if optional:
            return {}
        raise ValidationFailed("body is required: send a JSON object")
    if current.mimetype != "application/json":
        raise SandboxError(
            "Content-Type must be application/json", status=415, code="unsupported_media_type"
        )
    return json_input.decode(raw)


def query_values() -> SingleValues:
    """The request's query string for a route that reads one value per parameter: every
    family's routes read it here, so a parameter sent twice is 400 naming it in each
    family's error shape (core/validation.py: SingleValues)."""
    return SingleValues(request.args.to_dict(flat=False))


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


class NoFields(BaseModel):
    """The body of a route that takes none: any field sent is "<field> is not a known field"."""

    model_config = ConfigDict(extra="forbid")


#: The attribute ``takes_no_body`` sets on a view function.
_TAKES_NO_BODY = "svc_sandbox_takes_no_body"
#: Methods whose body HTTP gives no meaning (RFC 9110 §9.3.1, §9.3.2, §9.3.5): on the control
#: plane no route of these reads one, so none needs the mark.
BODYLESS_METHODS = frozenset({"GET", "HEAD", "DELETE"})


def takes_no_body(view: V) -> V:
    """Marks a POST/PUT/PATCH control-plane route that takes no body: ``check_no_body``
    checks one if sent, before the route runs (tests/test_web.py finds any such route left
    unmarked)."""
    setattr(view, _TAKES_NO_BODY, True)
    return view


def check_no_body(app: Flask, current: Request) -> None:
    """Before a control-plane route that takes no body runs (a GET, HEAD or DELETE, or one
    marked ``takes_no_body``): a body sent anyway is checked as every body is (415 for another
    content type; 400 for broken JSON, too deep, ...: ``json_body``) and must hold nothing: none
    or ``{}``; ``null`` or an array is "body must be a JSON object", as on a route whose body
    is optional; a field is "<field> is not a known field". So a refusal never acts."""
    environ = current.environ
    if not get_content_length(environ) and "HTTP_TRANSFER_ENCODING" not in environ:
        return  # no body: the common case, decided without reading the stream
    if current.url_rule is None:
        return  # no route: its 404 or 405 answers
    if current.method not in BODYLESS_METHODS and not getattr(
        app.view_functions.get(current.endpoint or ""), _TAKES_NO_BODY, False
    ):
        return  # the route reads its body itself
    parse(NoFields, json_body(optional=True))


#: The attribute ``takes_query`` sets on a view function: the query parameters it reads.
_QUERY_NAMES = "svc_sandbox_query_names"
#: Control-plane views whose query is not checked: the dashboard's pages (a browser's page
#: may carry parameters of its own; its filters are checked by their model).
UNCHECKED_QUERY_BLUEPRINTS = frozenset({"dashboard"})


def takes_query(*fields: str | type[BaseModel]) -> Callable[[V], V]:
    """Marks a control-plane route that reads these query parameters (names, or a model's
    fields): ``check_query`` refuses any other before the route runs. A route not marked
    takes none (a misspelt ``?limt=`` is a 400, not silently the default)."""
    names: set[str] = set()
    for item in fields:
        if isinstance(item, str):
            names.add(item)
        else:
            names.update(info.alias or name for name, info in item.model_fields.items())

    def mark(view: V) -> V:
        setattr(view, _QUERY_NAMES, frozenset(names))
        return view

    return mark


def check_query(app: Flask, current: Request) -> None:
    """Before a control-plane route runs: each query parameter must be one it reads
    (``takes_query``), else 400 "<name> is not a known field". So a refusal never acts."""
    if not current.environ.get("QUERY_STRING") or current.url_rule is None:
        return  # no query (the common case), or no route: its 404 or 405 answers
    if current.blueprint in UNCHECKED_QUERY_BLUEPRINTS:
        return
    view = app.view_functions.get(current.endpoint or "")
    known: frozenset[str] = getattr(view, _QUERY_NAMES, frozenset())
    for name in current.args:
        if name not in known:
            # An empty name, or one with spaces at an end, is quoted to be seen.
            plain = name and name.strip() == name
            raise ValidationFailed(unknown_field(name) if plain else f"{shown(name)} {UNKNOWN}")


#: The one content coding a body may have (RFC 9110 §12.5.3: "identity" means no encoding).
IDENTITY_CODING = "identity"
#: What a refused coding's answer says is taken (RFC 9110 §15.5.16, RFC 7694 §3).
ACCEPTED_CODINGS = {"Accept-Encoding": IDENTITY_CODING}


def check_content_coding(current: Request) -> None:
    """From app.py's hook, for every family: a body sent with a ``Content-Encoding`` other
    than ``identity`` is 415 ``unsupported_media_type`` naming the coding (RFC 9110 §15.5.16),
    with ``Accept-Encoding: identity``, before any check or route reads it (so nothing changes).
    No body is decoded here: a gzip body was read as broken JSON, and a plain body labelled
    gzip was taken as if unlabelled. A request without a body, and one no route answers (its
    404 or 405 answers), are not concerned."""
    environ = current.environ
    header = environ.get("HTTP_CONTENT_ENCODING")
    if header is None:
        return  # the common case: one dict lookup
    if not get_content_length(environ) and "HTTP_TRANSFER_ENCODING" not in environ:
        return
    if current.url_rule is None:
        return
    for coding in header.split(","):
        coding = coding.strip()
        if coding and coding.lower() != IDENTITY_CODING:
            raise SandboxError(
                f"Content-Encoding {cut(coding, SHOWN_CHARACTERS)} is not supported: send the body "
                "without a content coding",
                status=415,
                code="unsupported_media_type",
                headers=dict(ACCEPTED_CODINGS),
            )


def escape_query_bytes(current: Request) -> None:
    """From app.py's hook, first, for every family: a query holding bytes that are not UTF-8
    (sent raw, not percent-encoded: the server puts them in ``QUERY_STRING`` as sent) is read
    as its percent-escapes would be (``\\xff`` as ``%FF``: U+FFFD once decoded), so every check
    and route sees one query, and the journal keeps what a replay can send. werkzeug's ``args``
    raised on the raw byte: a 500."""
    environ = current.environ
    query = environ.get("QUERY_STRING")
    if not query or query.isascii():
        return  # the common case
    raw = query.encode("latin-1")  # a WSGI str holds the raw bytes as latin-1 (PEP 3333)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        escaped = quote(raw, safe=string.printable)
        environ["QUERY_STRING"] = escaped
        current.query_string = escaped.encode("ascii")  # werkzeug read it as the request began


def wsgi_text(value: str | None) -> str | None:
    """A WSGI environ string (the raw bytes as latin-1, PEP 3333) as the text werkzeug reads
    from it: UTF-8, an invalid byte replaced."""
    if value is None:
        return None
    if value.isascii():  # the common case (a URL's path and query are ASCII): the same text
        return value
    return value.encode("latin-1").decode("utf-8", "replace")


#: One encoder for every answer (``json.dumps`` with an option builds a new one per call).
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    response = Response(
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
    """What the recorder needs to replay ``current``: query, body, Authorization,
    Idempotency-Key, X-Svc-Key, the latency a rule applied.

    Read from the WSGI environ as the server put it: the first access to werkzeug's
    ``headers``, ``query_string`` or ``content_length`` builds a headers view on every request
    (5-7 µs of a GET), for three strings."""
    details: dict[str, Any] = {}
    environ = current.environ
    query = environ.get("QUERY_STRING")
    if query:
        details["query"] = wsgi_text(query)
    header = environ.get("HTTP_AUTHORIZATION")
    if header is not None:
        details["authorization"] = header
    # The headers that change what a replay does: a withdrawal's key (a retry creates
    # nothing), the wallet's second factor.
    key = environ.get("HTTP_IDEMPOTENCY_KEY")
    if key is not None:
        details["idempotencyKey"] = key
    key = environ.get("HTTP_X_SVC_KEY")
    if key is not None:
        details["svcKey"] = key
    delay = environ.get(LATENCY_APPLIED)
    if delay is not None:
        details["delaySeconds"] = delay
    size = get_content_length(environ) or 0
    if 0 < size <= JOURNAL_BODY_BYTES:
        # Read (and kept) first: a form is then parsed from this copy.
        data = current.get_data(cache=True)
        text = _utf8(data)
        form = current.form if current.mimetype == FORM_TYPE else None
        # A form is kept as a mapping (the recorder puts a fresh CSRF token in it) when that
        # loses nothing: UTF-8 (werkzeug reads another body as an empty form). A field sent
        # more than once (the consent page's ``grant``) is the list of its values, in order.
        if form is not None and text is not None:
            details["form"] = grouped(form.items(multi=True))
        else:
            if text is not None:
                details["body"] = text
            else:  # UTF-16 JSON, binary: the bytes, so that a replay sends them
                details["bodyBase64"] = base64.b64encode(data).decode("ascii")
            details["contentType"] = current.mimetype
    return details


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
