"""``SvcClient`` and ``AsyncSvcClient``: the commerce API (spec §4) over httpx, one typed method
per operation.

Both send the same ``Call``s (``operations.py`` checks the arguments before anything is sent)
and decode every answer the same way: into the spec's models, or an ``SvcError``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import os
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from svc_sandbox.client import arguments as check
from svc_sandbox.client import operations as ops
from svc_sandbox.client.errors import (
    ErrorReader,
    SvcPollTimeout,
    SvcRateLimitError,
    SvcResponseError,
    SvcTransportError,
    from_answer,
)
from svc_sandbox.client.models import CheckoutStatus
from svc_sandbox.client.operations import Call
from svc_sandbox.core.clock import monotonic
from svc_sandbox.core.numbers import decimal_text
from svc_sandbox.orgs.organizations import TOKEN_SHAPE

M = TypeVar("M", bound=BaseModel)
P = ParamSpec("P")
#: A client's connection pool: sync or async.
H = TypeVar("H", httpx.Client, httpx.AsyncClient)

DEFAULT_BASE_URL = "http://127.0.0.1:8700/api"
REQUEST_ID_HEADER = "X-Request-Id"
#: Spec §8: ``waitForCheckout`` polls every 2 s and gives up after 5 minutes.
POLL_INTERVAL = 2.0
POLL_TIMEOUT = 300.0


def is_api_token(value: object) -> bool:
    """``svc_test_...`` or ``svc_live_...`` of the shape the API takes (``TOKEN_SHAPE``),
    whole (no whitespace around it; ``$`` would forgive a trailing newline)."""
    return isinstance(value, str) and TOKEN_SHAPE.fullmatch(value) is not None


def redact(message: str) -> str:
    """``message`` with any API token in it (``TOKEN_SHAPE``) masked (``svc_test_***``)."""
    return TOKEN_SHAPE.sub(lambda m: f"svc_{m.group(1)}_***", message)


class _ClientBase:
    """What both clients share: settings, the request a Call makes, the poll's bookkeeping."""

    def __init__(self, token: str | None, base_url: str | None, timeout: float) -> None:
        if token is not None and not is_api_token(token):
            raise ValueError("token must be an API token: svc_test_... or svc_live_...")
        base = check.base_url(
            "base_url", base_url or os.environ.get("SVC_BASE_URL") or DEFAULT_BASE_URL
        )
        self.token = token
        self.base_url = base.rstrip("/")
        self.timeout = check.seconds("timeout", timeout)

    def _request_parts(self, call: Call[Any]) -> dict[str, Any]:
        if call.needs_token and self.token is None:
            raise ValueError(call.needs_token)
        headers = {"Accept": "application/json", **call.headers}
        if call.auth and self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        content = None
        if call.json_body is not None:
            content = json.dumps(call.json_body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        return {
            "method": call.method,
            "url": self.base_url + call.path,
            "content": content,
            "params": call.params,
            "headers": headers,
            # On every request: a pool given as ``http=`` keeps its own default otherwise.
            "timeout": self.timeout,
        }

    def _reading(self, call: Call[M]) -> Reading[M]:
        # A transport error names the operation as the spec does (GET /balance).
        return Reading(call.model, self.timeout, where=call.where)


#: What httpx raises when a request cannot be sent or answered (``InvalidURL`` is no
#: ``HTTPError``): each becomes an ``SvcTransportError``.
UNSENT = (httpx.HTTPError, httpx.InvalidURL)


def transport_error(
    where: str, timeout: float, exc: httpx.HTTPError | httpx.InvalidURL
) -> SvcTransportError:
    if isinstance(exc, httpx.TimeoutException):
        detail = redact(str(exc))  # httpx's read timeout says nothing: no empty "()"
        message = f"{where}: no answer within {timeout:g} s" + (f" ({detail})" if detail else "")
        return SvcTransportError(message, code="timeout")
    message = f"{where}: {type(exc).__name__}: {redact(str(exc))}"
    return SvcTransportError(message, code="connection_error")


class HttpPool(Generic[H]):
    """The connection pool of a client (``httpx.Client`` or ``httpx.AsyncClient``): made on
    the first request (building one, its SSL context, costs tens of milliseconds, and a call
    refused by the argument checks needs none), closed with the client unless it was given."""

    timeout: float
    _pool_type: type[H]
    _client: H | None
    _owns_http: bool

    def _use_http(self, http: H | None) -> None:
        # A pool of the other kind or a closed one failed at the first call with httpx's own
        # AttributeError or RuntimeError, where every argument is checked up front.
        if http is not None and not isinstance(http, self._pool_type):
            kind = f"{self._pool_type.__module__}.{self._pool_type.__name__}"
            raise ValueError(f"http must be an {kind}, not {type(http).__name__}")
        if http is not None and http.is_closed:
            raise ValueError("http must be an open pool: this one is closed")
        self._client = http
        self._owns_http = http is None

    @property
    def _http(self) -> H:
        if self._client is None:
            self._client = self._pool_type(timeout=self.timeout)
        elif self._client.is_closed and not self._owns_http:
            # Closed by its owner after it was lent: httpx's RuntimeError at the send.
            raise SvcTransportError(
                f"the {type(self._client).__name__} lent as http= has been closed: "
                "nothing was sent",
                code="connection_error",
            )
        return self._client

    def _release(self) -> H | None:
        """The pool to close now: the client's own, once. A lent pool stays the one used (a
        call after ``close()`` made a pool of its own that nothing closed)."""
        if not self._owns_http:
            return None
        owned, self._client = self._client, None
        return owned


class SyncHttp(HttpPool[httpx.Client]):
    """A sync client's pool: ``close()`` or ``with``."""

    _pool_type = httpx.Client

    def close(self) -> None:
        if (pool := self._release()) is not None:
            pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncHttp(HttpPool[httpx.AsyncClient]):
    """An async client's pool: ``aclose()`` or ``async with``."""

    _pool_type = httpx.AsyncClient

    async def aclose(self) -> None:
        if (pool := self._release()) is not None:
            await pool.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _poll_timeout(
    session_id: str, status: CheckoutStatus, timeout: float, polls: int, waited: float
) -> SvcPollTimeout:
    """It gives up at the last poll before the timeout (the next would come after it): the
    message says what was done, not the whole timeout."""
    times = "poll" if polls == 1 else "polls"
    error = SvcPollTimeout(
        f"checkout session {session_id} is still {status.status} after {polls} {times} over "
        f"{waited:.1f} s: the next poll would pass the {timeout:g} s timeout",
        code="poll_timeout",
    )
    error.last = status
    return error


#: What an operation's or a flow's return annotation wraps (annotations are postponed: text).
_WRAPPERS = ("Call[", "Flow[")


def named(method: Callable[..., Any], build: Callable[..., Any]) -> None:
    """The client method reads like the operation (or flow) it sends, in ``help()`` and IDEs:
    its name (without a private builder's leading underscore), docstring and parameters
    (``self`` first), returning what the call or flow answers (it showed ``*args, **kwargs``)."""
    method.__name__ = method.__qualname__ = build.__name__.lstrip("_")
    method.__doc__ = build.__doc__
    signature = inspect.signature(build)
    parameters = list(signature.parameters.values())
    if not parameters or parameters[0].name != "self":
        parameters.insert(0, inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY))
    returns = signature.return_annotation
    for wrapper in _WRAPPERS:
        if isinstance(returns, str) and returns.startswith(wrapper) and returns.endswith("]"):
            returns = returns[len(wrapper) : -1]
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=returns
    )


def _sync(build: Callable[P, Call[M]]) -> Callable[Concatenate[SvcClient, P], M]:
    def method(self: SvcClient, /, *args: P.args, **kwargs: P.kwargs) -> M:
        return self._send(build(*args, **kwargs))

    named(method, build)
    return method


class SvcClient(SyncHttp, _ClientBase):
    """A client of the commerce API at ``base_url`` (default: env ``SVC_BASE_URL``, else the
    local emulator), authenticated with an API ``token`` (``svc_test_...`` or ``svc_live_...``;
    None for the calls that need none: checkout without a token and polling)."""

    def __init__(
        self,
        token: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        super().__init__(token, base_url, timeout)
        self._use_http(http)

    create_product = _sync(ops.create_product)
    list_products = _sync(ops.list_products)
    get_product = _sync(ops.get_product)
    update_product = _sync(ops.update_product)
    archive_product = _sync(ops.archive_product)
    create_checkout = _sync(ops.create_checkout)
    create_custom_checkout = _sync(ops.create_custom_checkout)
    create_checkout_as_given = _sync(ops.create_checkout_as_given)
    get_checkout = _sync(ops.get_checkout)
    list_orders = _sync(ops.list_orders)
    get_balance = _sync(ops.get_balance)
    create_withdrawal = _sync(ops.create_withdrawal)
    list_withdrawals = _sync(ops.list_withdrawals)
    get_withdrawal = _sync(ops.get_withdrawal)

    def wait_for_checkout(
        self,
        session_id: str,
        *,
        interval: float = POLL_INTERVAL,
        timeout: float = POLL_TIMEOUT,
        sleep: Callable[[float], Any] = time.sleep,
    ) -> CheckoutStatus:
        """Polls until the session is completed or expired (spec §8: every 2 s, for up to
        5 minutes), then raises ``SvcPollTimeout`` (code ``poll_timeout``).

        ``sleep`` is called with ``interval`` between polls; a test passes one that advances
        the sandbox clock instead. The time waited is the larger of what ``sleep`` was asked
        for and what really passed, so an instant fake sleep still ends on time.
        """
        check.hex_id("session_id", session_id)
        interval, timeout = check.seconds("interval", interval), check.seconds("timeout", timeout)
        check.function("sleep", sleep)
        started, slept, polls = monotonic(), 0.0, 0
        while True:
            status = self.get_checkout(session_id)
            polls += 1
            if status.done:
                return status
            elapsed = max(slept, monotonic() - started)
            if elapsed + interval > timeout:
                raise _poll_timeout(session_id, status, timeout, polls, elapsed)
            sleep(interval)
            slept += interval

    def _send(self, call: Call[M]) -> M:
        request = self._http.build_request(**self._request_parts(call))
        return exchange(self._http, request, self._reading(call))


def _async(
    build: Callable[P, Call[M]],
) -> Callable[Concatenate[AsyncSvcClient, P], Coroutine[Any, Any, M]]:
    async def method(self: AsyncSvcClient, /, *args: P.args, **kwargs: P.kwargs) -> M:
        return await self._send(build(*args, **kwargs))

    named(method, build)
    return method


class AsyncSvcClient(AsyncHttp, _ClientBase):
    """The async twin of ``SvcClient``: the same methods, awaited (``async with``)."""

    def __init__(
        self,
        token: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = 30.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(token, base_url, timeout)
        self._use_http(http)

    create_product = _async(ops.create_product)
    list_products = _async(ops.list_products)
    get_product = _async(ops.get_product)
    update_product = _async(ops.update_product)
    archive_product = _async(ops.archive_product)
    create_checkout = _async(ops.create_checkout)
    create_custom_checkout = _async(ops.create_custom_checkout)
    create_checkout_as_given = _async(ops.create_checkout_as_given)
    get_checkout = _async(ops.get_checkout)
    list_orders = _async(ops.list_orders)
    get_balance = _async(ops.get_balance)
    create_withdrawal = _async(ops.create_withdrawal)
    list_withdrawals = _async(ops.list_withdrawals)
    get_withdrawal = _async(ops.get_withdrawal)

    async def wait_for_checkout(
        self,
        session_id: str,
        *,
        interval: float = POLL_INTERVAL,
        timeout: float = POLL_TIMEOUT,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> CheckoutStatus:
        """As ``SvcClient.wait_for_checkout``; ``sleep`` may be a coroutine function or not."""
        check.hex_id("session_id", session_id)
        interval, timeout = check.seconds("interval", interval), check.seconds("timeout", timeout)
        check.function("sleep", sleep)
        started, slept, polls = monotonic(), 0.0, 0
        while True:
            status: CheckoutStatus = await self.get_checkout(session_id)
            polls += 1
            if status.done:
                return status
            elapsed = max(slept, monotonic() - started)
            if elapsed + interval > timeout:
                raise _poll_timeout(session_id, status, timeout, polls, elapsed)
            waited = sleep(interval)
            if inspect.isawaitable(waited):
                await waited
            slept += interval

    async def _send(self, call: Call[M]) -> M:
        request = self._http.build_request(**self._request_parts(call))
        return await aexchange(self._http, request, self._reading(call))


@dataclass(frozen=True)
class Reading(Generic[M]):
    """How ``exchange`` reads an answer: the model of a 2xx answer; ``errors`` reads an error
    answer (the commerce API's by default); ``empty_ok``: a 2xx answer may have no body (RFC
    7009 revocation), read as ``{}``; ``where`` names the request in a transport error
    (default: method and URL path); ``timeout`` is the one the request was sent with, for the
    message."""

    model: type[M]
    timeout: float
    errors: ErrorReader = from_answer
    empty_ok: bool = False
    where: str | None = None

    def unsent(
        self, request: httpx.Request, exc: httpx.HTTPError | httpx.InvalidURL
    ) -> SvcTransportError:
        where = self.where or f"{request.method} {request.url.path}"
        return transport_error(where, self.timeout, exc)

    def decode(self, response: httpx.Response, raw: bytes) -> M:
        return decode(response, raw, self.model, self.errors, self.empty_ok)


def exchange(http: httpx.Client, request: httpx.Request, reading: Reading[M]) -> M:
    """Sends one request: the model of a 2xx answer, else an ``SvcError``."""
    try:
        response = http.send(request, stream=True)
    except UNSENT as exc:
        raise reading.unsent(request, exc) from exc
    try:
        try:
            raw = response.read()
        except httpx.HTTPError as exc:
            raise truncated(response, exc) from exc
        return reading.decode(response, raw)
    finally:
        response.close()


async def aexchange(http: httpx.AsyncClient, request: httpx.Request, reading: Reading[M]) -> M:
    """``exchange`` over an ``httpx.AsyncClient``."""
    try:
        response = await http.send(request, stream=True)
    except UNSENT as exc:
        raise reading.unsent(request, exc) from exc
    try:
        try:
            raw = await response.aread()
        except httpx.HTTPError as exc:
            raise truncated(response, exc) from exc
        return reading.decode(response, raw)
    finally:
        await response.aclose()


def truncated(response: httpx.Response, exc: Exception) -> SvcResponseError:
    return SvcResponseError(
        f"the answer ({response.status_code}) was cut off: {exc}",
        status=response.status_code,
        code="truncated_response",
        request_id=response.headers.get(REQUEST_ID_HEADER),
    )


def decode(
    response: httpx.Response,
    raw: bytes,
    model: type[M],
    errors: ErrorReader = from_answer,
    empty_ok: bool = False,
) -> M:
    """The model of a 2xx answer, or the ``SvcError`` of anything else (never a bare
    JSON or transport exception)."""
    status = response.status_code
    if empty_ok and not raw and response.is_success:
        raw = b"{}"
    request_id = response.headers.get(REQUEST_ID_HEADER)
    try:
        body: Any = json.loads(raw)
        parsed = True
    except (ValueError, RecursionError):  # nested past the decoder's depth: still no JSON here
        body, parsed = raw.decode("utf-8", "replace"), False
    if status >= 400:
        error = errors(status, body, request_id)
        if isinstance(error, SvcRateLimitError):
            # Seconds in ASCII digits (RFC 9110 §10.2.3; core/numbers.py): "²" or "١٢" is no
            # figure, and an HTTP-date form is left to the caller (None), never an exception.
            seconds = decimal_text(response.headers.get("Retry-After", "").strip(" \t"))
            figure = float(seconds) if seconds is not None and seconds >= 0 else math.inf
            error.retry_after = figure if math.isfinite(figure) else None  # too long: no figure
        raise error
    if not parsed:
        kind = response.headers.get("Content-Type", "no content type")
        raise SvcResponseError(
            f"the answer ({status}, {kind}) is not valid JSON: {str(body)[:200]!r}",
            status=status,
            code="invalid_response",
            request_id=request_id,
            body=body,
        )
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise SvcResponseError(
            f"the answer ({status}) does not fit {model.__name__}: {where}: {first['msg']}",
            status=status,
            code="invalid_response",
            request_id=request_id,
            body=body,
        ) from exc
