"""The tool server over stdio, line by line as a client writes them: a line the emulator's one
rule for JSON refuses, or one the SDK cannot read, is answered with a JSON-RPC error (the SDK
alone takes a repeated name last-wins and drops an unreadable line without an answer); the
session goes on. Raw lines to a real ``svc-sandbox mcp`` process, one answer read at a time."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.server import ServerThread
from svc_sandbox.testing.emulator import InProcessEmulator
from tests.mcp.conftest import INITIALIZE, REFUSED_MESSAGES, SVC, server_env

#: A well-formed token: the lines here never reach the emulator.
TOKEN = "svc_test_" + "0" * 32


class Lines:
    """A ``svc-sandbox mcp`` process: write a line, read the next line it answers."""

    def __init__(self, *arguments: str, token: str = TOKEN) -> None:
        self.process = subprocess.Popen(
            [SVC, "mcp", *arguments],
            env=server_env(SVC_TOKEN=token),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.answers: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(self.answers.get(timeout=20))
        return answer

    def ping(self, request_id: int) -> dict[str, Any]:
        self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode())
        return self.answer()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=20)
        self.reader.join(timeout=20)  # it reads to the end of the output, then stops
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture(scope="module")
def lines() -> Iterator[Lines]:
    process = Lines()
    process.send(json.dumps(INITIALIZE).encode())
    assert process.answer()["result"]["serverInfo"]["name"] == "svc-sandbox"
    process.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    yield process
    process.close()


def error_of(answer: dict[str, Any], request_id: int | None = None) -> tuple[int, str]:
    assert (answer["jsonrpc"], answer["id"]) == ("2.0", request_id)
    return answer["error"]["code"], answer["error"]["message"]


@pytest.mark.parametrize(("find", "replace", "says"), REFUSED_MESSAGES)
def test_a_line_the_json_rule_refuses_is_a_parse_error_naming_it(
    lines: Lines, find: str, replace: str, says: str
) -> None:
    text = json.dumps({**INITIALIZE, "id": 1})
    assert find in text
    lines.send(text.replace(find, replace, 1).encode())
    # Answered as the request it is (a client matches answers by id: the SDK's waited for one
    # until its own timeout), unless the refusal is about the id: then null, none was read.
    code, message = error_of(lines.answer(), None if says.startswith("id ") else 1)
    assert code == -32700
    assert message.startswith("Parse error: ")
    assert says in message
    assert lines.ping(7) == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_a_tool_call_with_nul_in_an_argument_is_answered_with_its_id(lines: Lines) -> None:
    """The official client got an answer with id null, matched it to no request and waited
    until its own timeout."""
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "svc_read_doc", "arguments": {"doc_id": "a\u0000b"}},
    }
    lines.send(json.dumps(call).encode())
    code, message = error_of(lines.answer(), 7)
    assert (code, message) == (
        -32700,
        "Parse error: params.arguments.doc_id must not contain NUL characters",
    )


@pytest.mark.parametrize("id_text", ['"a\u0000"', "true", "[1]"])
def test_an_id_that_cannot_be_read_is_answered_with_null(lines: Lines, id_text: str) -> None:
    lines.send(('{"jsonrpc": "2.0", "id": ' + id_text + ', "method": "ping", "x": NaN}').encode())
    assert error_of(lines.answer())[0] == -32700


@pytest.mark.parametrize(
    ("id_text", "shown"),
    [("true", "true"), ("1.0", "1.0"), ("2.5", "2.5"), ("null", "null"), ("{}", "{}")],
)
def test_a_request_whose_id_is_no_string_or_integer_is_answered(
    lines: Lines, id_text: str, shown: str
) -> None:
    """MCP: a request id "MUST be a string or integer". The SDK read such a request as a
    notification: nothing ran, nothing was answered, the client waited forever."""
    call = '{"jsonrpc": "2.0", "id": ' + id_text + ', "method": "tools/call", "params": {}}'
    lines.send(call.encode())
    assert error_of(lines.answer()) == (
        -32600,
        f"Invalid Request: id must be a string or an integer, got {shown}",
    )
    assert lines.ping(11)["id"] == 11


def test_a_repeated_id_is_not_answered_as_either_id(lines: Lines) -> None:
    lines.send(b'{"jsonrpc": "2.0", "id": 2, "id": 3, "method": "ping"}')
    assert error_of(lines.answer()) == (-32700, "Parse error: id is repeated: send it once")


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b'{"jsonrpc": "2.0", "id": 1,', "EOF while parsing a value at line 1 column 27"),
        (b'{"jsonrpc": "2.0", "id": "\xff"}', "invalid unicode code point at line 1 column 27"),
    ],
)
def test_broken_json_is_answered_in_the_sdks_words(lines: Lines, line: bytes, says: str) -> None:
    """As the SDK answers it over HTTP (alone over stdio it drops the line: a client that
    waits for its answer would wait forever)."""
    lines.send(line)
    code, message = error_of(lines.answer())
    assert (code, message) == (-32700, "Parse error: " + says)
    assert lines.ping(8)["id"] == 8


def test_json_that_is_no_json_rpc_message_is_a_validation_error(lines: Lines) -> None:
    lines.send(b'{"hello": "world"}')
    code, message = error_of(lines.answer())
    assert code == -32602
    assert message.startswith("Validation error: ")
    assert lines.ping(9)["id"] == 9


def test_blank_lines_are_skipped(lines: Lines) -> None:
    lines.send(b"")
    lines.send(b"   ")
    assert lines.ping(10) == {"jsonrpc": "2.0", "id": 10, "result": {}}


def test_stdin_closing_ends_the_server_cleanly() -> None:
    process = Lines()
    assert process.ping(1) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    process.close()
    assert process.process.returncode == 0


#: How long the emulator holds each balance read (wall time: a real clock).
DELAY = 1.5


@pytest.fixture(scope="module")
def slow_balance() -> Iterator[tuple[str, str]]:
    """A real-clock emulator whose GET /api/balance waits DELAY seconds: its base URL and a
    token."""
    sandbox = Sandbox(clock_mode="real", seed=1)
    sandbox.settings.host, sandbox.settings.port = "127.0.0.1", 0
    thread = ServerThread(create_app(sandbox), sandbox.settings).start()
    try:
        token = InProcessEmulator(sandbox, thread.origin).create_tenant("stdin").sandbox.token
        rule = {"method": "GET", "path": "/api/balance", "delaySeconds": DELAY}
        answer = httpx.post(thread.origin + "/_sandbox/faults/latency", json=rule, timeout=10)
        assert answer.status_code == 201, answer.text
        yield thread.origin + "/api", token
    finally:
        thread.close()


def balance_call(request_id: int) -> bytes:
    call = {"name": "svc_get_balance", "arguments": {}}
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}
    ).encode()


def started(base_url: str, token: str) -> Lines:
    process = Lines("--base-url", base_url, token=token)
    process.send(json.dumps(INITIALIZE).encode())
    assert process.answer()["id"] == 1
    process.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    return process


def test_requests_in_flight_when_stdin_closes_are_answered_before_the_server_ends(
    slow_balance: tuple[str, str],
) -> None:
    """The SDK cancelled them and answered "Connection closed": `cat calls.jsonl | svc-sandbox
    mcp` lost the answers of its last calls."""
    process = started(*slow_balance)
    process.send(balance_call(7))
    process.send(balance_call(8))
    process.close()
    answers = {}
    while not process.answers.empty():
        answer = json.loads(process.answers.get())
        answers[answer["id"]] = answer
    assert process.process.returncode == 0
    assert sorted(answers) == [7, 8]
    for answer in answers.values():
        assert "error" not in answer, answer
        assert answer["result"]["isError"] is False, answer
        assert answer["result"]["structuredContent"]["currency"] == "ETB"


def test_a_request_the_client_cancelled_is_not_waited_for_at_stdin_close(
    slow_balance: tuple[str, str],
) -> None:
    """MCP cancellation: the SDK answers nothing for it, so waiting would never end."""
    process = started(*slow_balance)
    process.send(balance_call(9))
    cancel = {"requestId": 9, "reason": "no longer needed"}
    process.send(
        json.dumps(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
        ).encode()
    )
    process.close()  # waits 20 s at most for the process to end
    assert process.process.returncode == 0
    assert process.answers.empty()


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 2.0, "method": "ping"}',  # the SDK reads a notification
        b'{"jsonrpc": "2.0", "id": 1e0, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "error": {"code": 1, "message": "x"}}',
    ],
    ids=["float id", "exponent id", "a response with a method"],
)
def test_a_message_the_sdk_answers_nothing_is_not_waited_for_at_stdin_close(line: bytes) -> None:
    """Taken for a request by its "method" and "id", such a line held the server open
    forever after stdin closed (the SDK never answers it)."""
    process = Lines()
    process.send(json.dumps(INITIALIZE).encode())
    assert process.answer()["id"] == 1
    process.send(line)
    process.close()  # waits 20 s at most for the process to end
    assert process.process.returncode == 0
