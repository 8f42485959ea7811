"""webhooks/sender.py keeps the start of a receiver's answer as the attempt's
responseSnippet, cut at a character boundary: an answer whose UTF-8 arrives in two TCP pieces
split inside a character never shows U+FFFD for a character the receiver sent whole."""

from __future__ import annotations

import socket
import time

import pytest

from svc_sandbox.webhooks.sender import SNIPPET_CHARS, snippet_of
from tests.webhooks.conftest import add_endpoint, flush, trigger
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
