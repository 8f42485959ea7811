"""Answers that are not what the contract promises become SvcError with the status and the
request id, never a bare exception from the JSON decoder or the transport."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from svc_sandbox.client import (
    AsyncSvcClient,
    CheckoutFailure,
    CheckoutStatus,
    Order,
    SvcClient,
    SvcClientError,
    SvcError,
    SvcRateLimitError,
    SvcResponseError,
    SvcServerError,
    SvcTransportError,
)
from tests.client.twins import FORMS, close, identity_client, run, run_with, settle, wallet_client

SESSION = "0123456789abcdef01234567"


@contextmanager
def raw_server(respond: Callable[[socket.socket], None]) -> Iterator[int]:
    """A raw HTTP server on 127.0.0.1 (its port is yielded): each connection is read up to the
    end of its head, then ``respond`` answers it, in a thread of its own."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    done = threading.Event()

    def handle(connection: socket.socket) -> None:
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:  # read the whole head: no reset on close
                request += connection.recv(65536)
            try:
                respond(connection)
                connection.shutdown(socket.SHUT_WR)
            except OSError:  # the client gave up and closed first
                pass

    def serve() -> None:
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=handle, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join(timeout=5)
        listener.close()


@pytest.fixture
def canned() -> Iterator[list[bytes]]:
    """A raw HTTP server on 127.0.0.1 that answers each connection with the next canned bytes
    and closes; the test appends answers to the list it gets."""
    answers: list[bytes] = []
    with raw_server(lambda connection: connection.sendall(answers.pop(0))) as port:
        answers.append(str(port).encode())  # the test reads the port from the first item
        yield answers


def client_of(answers: list[bytes]) -> SvcClient:
    port = int(answers.pop(0))
    return SvcClient("svc_test_abcdefgh", base_url=f"http://127.0.0.1:{port}/api")


def answer(status: str, body: bytes, content_type: str, length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nX-Request-Id: req_abc\r\n"
        f"Content-Length: {size}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def test_an_html_page_instead_of_json_is_an_invalid_response(canned: list[bytes]) -> None:
    canned.append(answer("200 OK", b"<html>proxy login</html>", "text/html"))
    with client_of(canned) as client, pytest.raises(SvcResponseError) as caught:
        client.get_balance()
    error = caught.value
    assert (error.status, error.code, error.request_id) == (200, "invalid_response", "req_abc")
    assert "not valid JSON" in error.message and "text/html" in error.message


@pytest.mark.parametrize("status", ["200 OK", "400 Bad Request"])
def test_json_nested_past_the_decoders_depth_is_an_invalid_response(
    canned: list[bytes], status: str
) -> None:
    """It raised a bare RecursionError from the JSON decoder."""
    deep = b"[" * 100_000 + b"]" * 100_000
    canned.append(answer(status, deep, "application/json"))
    with client_of(canned) as client, pytest.raises(SvcError) as caught:
        client.get_balance()
    assert caught.value.request_id == "req_abc"
    assert caught.value.code in ("invalid_response", "invalid_request")


def test_a_retry_after_too_large_for_a_float_is_no_figure(canned: list[bytes]) -> None:
    """Five thousand digits read as infinity seconds."""
    head = "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
    body = b'{"error": "slow down"}'
    canned.append(
        (
            head + f"Retry-After: {'9' * 5000}\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
        + body
    )
    with client_of(canned) as client, pytest.raises(SvcRateLimitError) as caught:
        client.get_balance()
    assert caught.value.retry_after is None


def test_a_body_cut_short_is_a_truncated_response(canned: list[bytes]) -> None:
    canned.append(answer("200 OK", b'{"eligible": tr', "application/json", length=80))
    with client_of(canned) as client, pytest.raises(SvcResponseError) as caught:
        client.get_balance()
    error = caught.value
    assert (error.status, error.code, error.request_id) == (200, "truncated_response", "req_abc")


def test_json_of_the_wrong_shape_is_an_invalid_response(canned: list[bytes]) -> None:
    canned.append(answer("200 OK", b'{"eligible": "maybe"}', "application/json"))
    with client_of(canned) as client, pytest.raises(SvcResponseError) as caught:
        client.get_balance()
    assert caught.value.code == "invalid_response" and "Balance" in caught.value.message


def test_a_gateway_error_page_is_a_server_error_with_its_status(canned: list[bytes]) -> None:
    canned.append(answer("502 Bad Gateway", b"<h1>bad gateway</h1>", "text/html"))
    with client_of(canned) as client, pytest.raises(SvcServerError) as caught:
        client.get_checkout(SESSION)
    error = caught.value
    assert (error.status, error.code, error.request_id) == (502, "provider_refused", "req_abc")
    assert error.body == "<h1>bad gateway</h1>"


def test_a_control_plane_style_error_keeps_its_code(canned: list[bytes]) -> None:
    canned.append(
        answer("409 Conflict", b'{"error":"ended","code":"session_ended"}', "application/json")
    )  # noqa: E501
    with client_of(canned) as client, pytest.raises(SvcClientError) as caught:
        client.get_checkout(SESSION)
    assert (caught.value.status, caught.value.code, caught.value.message) == (
        409,
        "session_ended",
        "ended",
    )


@pytest.mark.parametrize("client_type", [SvcClient, AsyncSvcClient])
def test_nobody_listening_is_a_transport_error_naming_the_operation(
    client_type: type[SvcClient | AsyncSvcClient],
) -> None:
    async def scenario(client: SvcClient | AsyncSvcClient) -> SvcTransportError:
        with pytest.raises(SvcTransportError) as caught:
            await settle(client.get_checkout(SESSION))
        return caught.value

    error = run_with(client_type(base_url="http://127.0.0.1:9/api"), scenario)
    assert error.code == "connection_error" and error.status is None
    assert error.message.startswith(f"GET /checkout/{SESSION}: ConnectError")


# --- the client's timeout -----------------------------------------------------------------

#: How long the slow server takes to answer, in seconds.
SLOW = 0.5
NOT_FOUND = answer("404 Not Found", b'{"error":"not_found"}', "application/json")


@pytest.fixture
def slow_origin() -> Iterator[str]:
    """A server on 127.0.0.1 that answers every request 404, after ``SLOW`` seconds."""
    stop = threading.Event()

    def late(connection: socket.socket) -> None:
        if not stop.wait(SLOW):
            connection.sendall(NOT_FOUND)

    with raw_server(late) as port:
        yield f"http://127.0.0.1:{port}"
        stop.set()


def commerce_client(form: str, origin: str, **options: Any) -> SvcClient | AsyncSvcClient:
    client_type = SvcClient if form == "sync" else AsyncSvcClient
    return client_type("svc_test_abcdefgh", base_url=origin + "/api", **options)


#: Each client, made over ``origin`` (form, origin, options), and one call it makes.
CLIENTS: dict[str, tuple[Callable[..., Any], Callable[[Any], Any]]] = {
    "SvcClient": (commerce_client, lambda client: client.get_balance()),
    "IdentityClient": (
        lambda form, origin, **options: identity_client(
            form, "app", redirect_uri=origin + "/cb", auth_url=origin + "/auth", **options
        ),
        lambda client: client.discovery(),
    ),
    "WalletClient": (
        lambda form, origin, **options: wallet_client(
            form, "at", "svc_test_abcdefgh", base_url=origin + "/wallet", **options
        ),
        lambda client: client.balance(),
    ),
}


def failure(form: str, client: str, origin: str, timeout: float, pool: float | None) -> SvcError:
    """What the client's call raises, the client made with ``timeout`` over its own pool
    (``pool`` None) or over a given ``http=`` pool whose own timeout is ``pool``."""
    make, call = CLIENTS[client]

    async def scenario() -> SvcError:
        pool_type = httpx.Client if form == "sync" else httpx.AsyncClient
        given = None if pool is None else pool_type(timeout=pool)
        made = make(form, origin, timeout=timeout, http=given)
        try:
            with pytest.raises(SvcError) as caught:
                await settle(call(made))
            return caught.value
        finally:
            await close(made)
            if given is not None:
                await close(given)

    return run(scenario)


@pytest.mark.parametrize("pool", [None, 30.0], ids=["own-pool", "given-pool"])
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("form", FORMS)
def test_a_slow_answer_times_out_after_the_clients_timeout(
    slow_origin: str, form: str, client: str, pool: float | None
) -> None:
    error = failure(form, client, slow_origin, 0.1, pool)
    assert isinstance(error, SvcTransportError) and error.status is None
    assert error.code == "timeout" and "no answer within 0.1 s" in error.message
    assert "()" not in error.message  # httpx's read timeout has no text of its own


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("form", FORMS)
def test_a_given_pools_shorter_timeout_does_not_cut_the_clients_wait(
    slow_origin: str, form: str, client: str
) -> None:
    error = failure(form, client, slow_origin, 10.0, 0.05)
    assert error.status == 404  # the answer came, late


# --- the models keep what they do not know ----------------------------------------------------


def test_an_order_keeps_fields_the_spec_may_add() -> None:
    order = Order.model_validate(
        {"_id": "o1", "amount": 100, "currency": "ETB", "status": "paid", "refunds": []}
    )
    assert order.model_extra == {"refunds": []}
    assert order.model_dump(by_alias=True, exclude_none=True)["refunds"] == []


@pytest.mark.parametrize(
    ("sent", "treated_as"),
    [("payment_canceled", "payment_canceled"), ("card_declined", "payment_failed")],
)
def test_unknown_failure_codes_read_as_payment_failed(sent: str, treated_as: str) -> None:
    failure = CheckoutFailure.model_validate({"code": sent, "message": "no"})
    assert (failure.code, failure.raw_code) == (treated_as, sent)
    assert failure.to_wire() == {"code": sent, "message": "no"}  # what the service sent


SENT_STATUS = {
    "sessionId": SESSION,
    "status": "expired",
    "expiresAt": "2026-01-01T00:30:00.000Z",
    "amount": 5000,
    "currency": "ETB",
    "orderId": None,
    "orderStatus": "failed",
    "failure": {"code": "payment_blocked_by_bank", "message": "Your bank blocked it."},
    "attempt": {"inFlight": False, "lastFailure": {"code": "card_declined", "message": "no"}},
    "newField": {"x": 1},
}


def test_to_wire_gives_the_document_the_service_sent() -> None:
    status = CheckoutStatus.model_validate(SENT_STATUS)
    assert status.failure is not None and status.failure.code == "payment_failed"
    assert status.to_wire() == SENT_STATUS
    # model_dump is the attributes: defaults filled in, datetimes, the normalised code
    dumped = status.model_dump(by_alias=True)
    assert dumped["failure"]["code"] == "payment_failed" and dumped != SENT_STATUS


def test_a_transport_error_never_prints_a_token() -> None:
    from svc_sandbox.client.commerce import transport_error

    sent = httpx.LocalProtocolError("Illegal header value b'Bearer svc_live_Secret123\\n'")
    error = transport_error("GET /balance", 1.0, sent)
    assert error.code == "connection_error" and "Secret123" not in error.message
    assert "svc_live_***" in error.message


@pytest.mark.parametrize(
    ("retry_after", "seconds"),
    [
        (b"12", 12.0),
        (b"1.5", 1.5),
        (b" 30 ", 30.0),
        (b"\xb2", None),  # latin-1 "²": str.isdigit() said yes, float() raised ValueError
        ("\u0661\u0662".encode(), None),  # Arabic-Indic 12, read as 12 before
        (b"1_2", None),
        (b"1e1", None),
        (b"-5", None),
        (b"Wed, 21 Oct 2026 07:28:00 GMT", None),  # an HTTP-date: not read, not an error
    ],
)
def test_a_429_retry_after_is_read_in_ascii_digits_or_not_at_all(
    canned: list[bytes], retry_after: bytes, seconds: float | None
) -> None:
    """Spec §7: client library errors carry status, code and requestId; a Retry-After the
    client cannot read leaves ``retry_after`` None instead of raising a bare ValueError."""
    body = b'{"error":"slow down","code":"rate_limited"}'
    canned.append(
        answer("429 Too Many Requests", body, "application/json").replace(
            b"\r\n\r\n", b"\r\nRetry-After: " + retry_after + b"\r\n\r\n", 1
        )
    )
    with client_of(canned) as client, pytest.raises(SvcRateLimitError) as caught:
        client.get_balance()
    error = caught.value
    assert (error.status, error.request_id, error.retry_after) == (429, "req_abc", seconds)
