"""webhooks/sender.py keeps the start of a receiver's answer as the attempt's
responseSnippet, cut at a character boundary: an answer whose UTF-8 arrives in two TCP pieces
split inside a character never shows U+FFFD for a character the receiver sent whole."""

from __future__ import annotations

import base64
import socket
import time

import pytest
from flask.testing import FlaskClient

from svc_sandbox.webhooks.sender import SNIPPET_CHARS, snippet_of
from tests.webhooks.conftest import add_endpoint, flush, trigger
from tests.webhooks.receiver import running_receiver
from tests.webhooks.test_deadline import client_with_timeout, raw_receiver

TEXT = "ok \u00e9t\u00e9 \u2713 \U0001f600 fin"  # 2-, 3- and 4-byte UTF-8 characters
BODY = TEXT.encode()
#: Each byte offset inside a multi-byte character (a continuation byte follows the cut).
INSIDE = [i for i in range(1, len(BODY)) if BODY[i] & 0xC0 == 0x80]


@pytest.mark.parametrize("cut", INSIDE)
def test_a_snippet_read_up_to_inside_a_character_leaves_the_character_out(cut: int) -> None:
    snippet = snippet_of(BODY[:cut])
    assert "\ufffd" not in snippet
    assert TEXT.startswith(snippet) and len(snippet.encode()) > cut - 4


def test_a_snippet_is_at_most_snippet_chars_and_says_what_is_not_utf8() -> None:
    assert snippet_of(b"\xff" + b"a" * 500) == "\ufffd" + "a" * (SNIPPET_CHARS - 1)


@pytest.mark.parametrize("cut", INSIDE[:3])
def test_an_answer_in_two_pieces_split_inside_a_character(cut: int) -> None:
    def answer(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + BODY[:cut])
        time.sleep(0.2)  # the sender reads once for the snippet: the first piece
        conn.sendall(BODY[cut:])

    client = client_with_timeout()
    with raw_receiver(answer) as receiver:
        add_endpoint(client, receiver.url)
        trigger(client, "order.completed")
        [attempt] = flush(client)
    assert attempt["outcome"] == "succeeded"
    assert "\ufffd" not in attempt["responseSnippet"]
    assert TEXT.startswith(attempt["responseSnippet"])


@pytest.mark.parametrize(
    "interim",
    [
        b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n",
        b"HTTP/1.1 102 Processing\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n",
    ],
    ids=["103", "102", "100-then-103"],
)
def test_interim_answers_are_read_past_to_the_final_one(
    svc_http: FlaskClient, interim: bytes
) -> None:
    """RFC 9110 §15.2: 1xx answers may come before the final one. A 103 was taken as the
    answer: the attempt failed and the event went out again."""

    def answer(conn: socket.socket) -> None:
        conn.sendall(interim + b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    client = svc_http  # its sandbox closes its kept-alive connections at the end
    with raw_receiver(answer) as receiver:
        add_endpoint(client, receiver.url)
        trigger(client, "order.completed")
        [attempt] = flush(client)
    assert (attempt["outcome"], attempt["statusCode"]) == ("succeeded", 200)


@pytest.mark.parametrize(
    ("status", "message"),
    [(304, "answered 304"), (300, "answered 300"), (308, "redirect to /elsewhere (not followed)")],
)
def test_only_a_redirect_status_is_called_a_redirect(
    svc_http: FlaskClient, status: int, message: str
) -> None:
    def answer(conn: socket.socket) -> None:
        head = f"HTTP/1.1 {status} X\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n"
        conn.sendall(head.encode())

    client = svc_http  # its sandbox closes its kept-alive connections at the end
    with raw_receiver(answer) as receiver:
        add_endpoint(client, receiver.url)
        trigger(client, "order.completed")
        [attempt] = flush(client)
    assert (attempt["outcome"], attempt["message"]) == ("failed", message)


def test_credentials_in_an_endpoint_url_are_sent_as_basic_auth(svc_http: FlaskClient) -> None:
    """https://user:pass@host/hooks: the receiver gets them (as Stripe sends them); they were
    accepted and silently dropped, so a receiver behind Basic auth answered 401 every time."""
    client = svc_http  # its sandbox closes its kept-alive connections at the end
    with running_receiver(204) as receiver:
        add_endpoint(client, receiver.url.replace("http://", "http://hook:s3cr%40t@"))
        trigger(client, "order.completed")
        [attempt] = flush(client)
        [received] = receiver.wait_for(1)
    assert attempt["outcome"] == "succeeded"
    expected = "Basic " + base64.b64encode(b"hook:s3cr@t").decode()  # percent-decoded
    assert received.headers["Authorization"] == expected
