"""Requests described once, sent by a sync or an async sender (the identity and wallet clients).

An operation is a *flow*: a generator that checks its arguments, ``yield``s each request it
needs as an ``Ask`` and receives the decoded answer, applies the rules (issuer checks, key
caching, ID-token validation) and ``return``s the result. It does no I/O itself, so one flow
serves both clients: ``blocking(flow)`` makes the sync method that sends each ``Ask`` with
``exchange``, ``awaiting(flow)`` the coroutine method that sends it with ``aexchange``. Flows
compose with ``yield from`` (a token request first reads the discovery document).

    class _Rules:
        def _balance(self) -> Flow[WalletBalance]:
            return (yield from Ask("GET", url, WalletBalance))

    class Client(SyncHttp, _Rules):
        balance = blocking(_Rules._balance)       # client.balance() -> WalletBalance

    class AsyncClient(AsyncHttp, _Rules):
        balance = awaiting(_Rules._balance)       # await client.balance()
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast

import httpx
from pydantic import BaseModel

from svc_sandbox.client.commerce import AsyncHttp, H, Reading, SyncHttp, aexchange, exchange, named
from svc_sandbox.client.errors import ErrorReader, from_coded_answer

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
S = TypeVar("S")
P = ParamSpec("P")


@dataclass(frozen=True)
class Ask(Generic[M]):
    """One request of a flow and the model of its 2xx answer."""

    method: str
    url: str
    model: type[M]
    headers: Mapping[str, str] = field(default_factory=dict)
    #: A form body (``application/x-www-form-urlencoded``).
    form: Mapping[str, str] | None = None
    #: A JSON body.
    json: Any = None
    #: HTTP Basic credentials (client_id, client_secret).
    basic: tuple[str, str] | None = None
    #: Reads an error answer: the identity and wallet APIs put the code in ``error``.
    errors: ErrorReader = from_coded_answer
    #: A 2xx answer may have no body (RFC 7009 revocation), read as ``{}``.
    empty_ok: bool = False

    def request(self, http: httpx.Client | httpx.AsyncClient, timeout: float) -> httpx.Request:
        """The request, with the client's ``timeout`` (a pool given as ``http=`` keeps its
        own default otherwise)."""
        headers = {"Accept": "application/json", **self.headers}
        request = http.build_request(
            self.method, self.url, headers=headers, data=self.form, json=self.json, timeout=timeout
        )
        if self.basic is not None:
            request = next(httpx.BasicAuth(*self.basic).auth_flow(request))
        return request

    def sent_by(self, http: H, timeout: float) -> tuple[H, httpx.Request, Reading[M]]:
        """The arguments of ``exchange`` (or ``aexchange``) that send this request."""
        reading = Reading(self.model, timeout, self.errors, self.empty_ok)
        return http, self.request(http, timeout), reading

    def __iter__(self) -> Generator[Ask[M], Any, M]:
        """``answer = yield from Ask(...)``: the typed answer (a bare ``yield`` gives Any)."""
        answer = yield self
        return cast(M, answer)


#: What a flow is: it yields ``Ask``s, is sent their decoded answers, returns a ``T``.
Flow = Generator[Ask[Any], Any, T]


@dataclass(frozen=True)
class _Finished(Generic[T]):
    value: T


def _step(flow: Flow[T], answer: Any) -> Ask[Any] | _Finished[T]:
    """The flow's next request, or its result (``answer``: the last request's; None first)."""
    try:
        return flow.send(answer)
    except StopIteration as done:
        return _Finished(cast(T, done.value))


def run(client: SyncHttp, flow: Flow[T]) -> T:
    """Drives ``flow`` to its end, each request sent over the client's ``httpx.Client``."""
    with closing(flow):
        step = _step(flow, None)
        while isinstance(step, Ask):
            step = _step(flow, exchange(*step.sent_by(client._http, client.timeout)))
        return step.value


async def arun(client: AsyncHttp, flow: Flow[T]) -> T:
    """``run`` over the client's ``httpx.AsyncClient``."""
    with closing(flow):
        step = _step(flow, None)
        while isinstance(step, Ask):
            step = _step(flow, await aexchange(*step.sent_by(client._http, client.timeout)))
        return step.value


def blocking(flow: Callable[Concatenate[S, P], Flow[T]]) -> Callable[Concatenate[S, P], T]:
    """The sync method of a flow (named after it without its leading underscore)."""

    def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return run(cast(SyncHttp, self), flow(self, *args, **kwargs))

    _like(method, flow)
    return method


def awaiting(
    flow: Callable[Concatenate[S, P], Flow[T]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """The coroutine method of a flow."""

    async def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await arun(cast(AsyncHttp, self), flow(self, *args, **kwargs))

    _like(method, flow)
    return method


def _like(method: Callable[..., Any], flow: Callable[..., Flow[Any]]) -> None:
    """The method reads like the flow in ``help()`` and IDEs (``commerce.named``)."""
    named(method, flow)
