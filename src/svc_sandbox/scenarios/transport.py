"""One HTTP exchange, in-process (the WSGI app, no sockets) or over the network (urllib)."""

from __future__ import annotations

import base64
import binascii
import http.cookiejar
import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from werkzeug.test import Client


@dataclass
class HttpRequest:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "url": self.url,
            "headers": masked_headers(self.headers),
            "body": shown(self.body),
        }


@dataclass
class HttpResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The JSON body, or None when the body is not JSON."""
        try:
            return json.loads(self.body) if self.body.strip() else None
        except ValueError:
            return None

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == lowered), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "headers": masked_headers(self.headers),
            "body": shown(self.body),
        }


#: Headers whose values are credentials. Reports, consoles and CI artifacts show them masked:
#: against ``--target real`` the bearer is a real (often production) token.
CREDENTIAL_HEADERS = frozenset({"authorization", "x-svc-key", "cookie", "set-cookie"})
#: How much of a credential a report keeps: its prefix tells the kind (``svc_live_``), its
#: last characters which one.
_KEPT_PREFIX, _KEPT_SUFFIX = 9, 4


def masked(secret: str) -> str:
    """``secret`` as reports show it: ``svc_live_...s7b0``; a short one entirely hidden. ASCII
    dots, so JSON text shows them as they are."""
    if len(secret) < 2 * (_KEPT_PREFIX + _KEPT_SUFFIX):
        return "..."
    return f"{secret[:_KEPT_PREFIX]}...{secret[-_KEPT_SUFFIX:]}"


def masked_header(name: str, value: str) -> str:
    """A credential header's value masked (its scheme, ``Bearer``/``Basic``, kept); any other
    header's as it is."""
    if name.lower() not in CREDENTIAL_HEADERS:
        return value
    scheme, _, credential = value.partition(" ")
    if credential and scheme.isalpha():
        return f"{scheme} {masked(credential)}"
    return masked(value)


def masked_headers(headers: dict[str, str]) -> dict[str, str]:
    return {name: masked_header(name, value) for name, value in headers.items()}


#: RFC 9110 §5.1: a field name is a token.
_FIELD_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def header_problem(name: str, value: str) -> str | None:
    """Why ``name: value`` cannot be sent as an HTTP header (it would split the request or
    cannot be encoded), or None."""
    if not _FIELD_NAME.fullmatch(name):
        return f"{name!r} is not a header name (letters, digits and !#$%&'*+-.^_`|~)"
    if any(c in value for c in "\r\n\0"):
        return f"header {name}: the value holds a line break or NUL"
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return f"header {name}: the value holds characters a header cannot carry (not Latin-1)"
    return None


def base64_body(text: str) -> bytes:
    """The bytes a request's ``raw_base64`` stands for; ValueError saying why it is not base64."""
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error) as exc:
        raise ValueError(f"raw_base64 is not base64: {exc}") from None


class TransportError(Exception):
    """No answer: the server is unreachable or did not answer in time."""


class Transport(Protocol):
    def send(self, request: HttpRequest) -> HttpResponse: ...


def shown(body: bytes | None) -> Any:
    """A body for a report: its JSON when it is JSON, else (a bounded piece of) its text."""
    if body is None:
        return None
    try:
        return json.loads(body) if len(body) <= 64_000 else text_of(body)
    except ValueError:
        return text_of(body)


def text_of(body: bytes | None, limit: int = 4000) -> str | None:
    if body is None:
        return None
    text = body.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


#: In-process requests come from this machine, as a local client's would.
LOOPBACK_PEER = {"REMOTE_ADDR": "127.0.0.1"}


class WsgiTransport:
    """Requests straight into a WSGI app (what ``create_app`` returns): no server, no sockets."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self._client = Client(app)

    def send(self, request: HttpRequest) -> HttpResponse:
        answer = self._client.open(
            request.url,
            method=request.method,
            headers=request.headers,
            data=request.body,
            environ_base=LOOPBACK_PEER,
        )
        body = answer.get_data()
        answer.close()
        return HttpResponse(answer.status_code, dict(answer.headers.items()), body)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class HttpTransport:
    """Requests over the network; ``timeout`` seconds for each (connect and answer). Like the
    in-process client, it keeps the cookies the server sets (one per scenario: a browser), so
    hosted pages' sessions and CSRF cookies work the same both ways."""

    def __init__(self, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self._opener = urllib.request.build_opener(
            _NoRedirects, urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def send(self, request: HttpRequest) -> HttpResponse:
        prepared = urllib.request.Request(
            request.url, data=request.body, headers=request.headers, method=request.method
        )
        try:
            with self._opener.open(prepared, timeout=self.timeout) as answer:
                return HttpResponse(answer.status, dict(answer.headers.items()), answer.read())
        except urllib.error.HTTPError as error:
            body = error.read()
            return HttpResponse(error.code, dict(error.headers.items()), body)
        except TimeoutError:
            raise TransportError(
                f"timed out after {self.timeout:g} s waiting for {request.method} {request.url}"
            ) from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise TransportError(
                    f"timed out after {self.timeout:g} s waiting for {request.method} {request.url}"
                ) from None
            raise TransportError(f"cannot reach {request.url}: {error.reason}") from None
        except OSError as error:
            raise TransportError(f"cannot reach {request.url}: {error}") from None
