"""The webhook timeout is one deadline per attempt (spec §6: "Must return 2xx within 10
seconds"; §8: "Webhook | 10 s response timeout"), and the answer is its status line and
headers: receivers that drip their answer, or never finish its body, on raw sockets."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.webhooks.conftest import add_endpoint, flush, trigger
from tests.webhooks.receiver import running_receiver

TIMEOUT_SECONDS = 0.3
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"


def client_with_timeout() -> FlaskClient:
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0, webhook_timeout_seconds=TIMEOUT_SECONDS)
    return create_app(sandbox).test_client()


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@pytest.fixture(params=["http", "https"])
def tls(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> ssl.SSLContext | None:
    """None for http; for https, the receiver's TLS context, its certificate trusted by the
    sandbox's sender (through SSL_CERT_FILE, which the default context reads)."""
    if request.param == "http":
        return None
    cert_file, key_file = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context


class RawReceiver:
    """Accepts connections on 127.0.0.1 (over TLS when given a context) and answers the first
    request on each with ``answer(conn)``, one thread per connection."""

    def __init__(
        self, answer: Callable[[socket.socket], None], tls: ssl.SSLContext | None = None
    ) -> None:
        self.answer = answer
        self.tls = tls
        self.connections = 0
        self.done = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.02)  # accept() wakes up to see ``done``
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        scheme = "http" if self.tls is None else "https"
        return f"{scheme}://127.0.0.1:{self._listener.getsockname()[1]}/hooks"

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            conn.recv(65536)
            self.answer(conn)
        except OSError:
            pass  # the sandbox hung up
        finally:
            conn.close()

    def close(self) -> None:
        self.done.set()
        self._thread.join(timeout=10)
        self._listener.close()


@contextmanager
def raw_receiver(
    answer: Callable[[socket.socket], None], tls: ssl.SSLContext | None = None
) -> Iterator[RawReceiver]:
    receiver = RawReceiver(answer, tls)
    try:
        yield receiver
    finally:
        receiver.close()


def test_an_answer_dripped_byte_by_byte_times_out_at_the_deadline(
    tls: ssl.SSLContext | None,
) -> None:
    sent: list[int] = []
    # Each byte comes well within the timeout, the whole answer well after it.
    interval = TIMEOUT_SECONDS / 3

    def drip(conn: socket.socket) -> None:
        for byte in ANSWER:
            conn.sendall(bytes([byte]))
            sent.append(byte)
            if sent and len(sent) < len(ANSWER):
                threading.Event().wait(interval)

    client = client_with_timeout()
    with raw_receiver(drip, tls) as dripping, running_receiver(200) as healthy:
        add_endpoint(client, dripping.url)
        add_endpoint(client, healthy.url)
        trigger(client, "order.completed")
        first, second = flush(client)
        dripping.done.set()
    assert (first["outcome"], first["error"], first["statusCode"]) == ("failed", "timeout", None)
    assert first["message"] == f"no answer within {TIMEOUT_SECONDS:g} s"
    assert first["durationMs"] < len(ANSWER) * interval * 1000 / 2  # not held by the drip
    assert len(sent) < len(ANSWER)  # the sandbox hung up before the answer was complete
    assert (second["outcome"], second["statusCode"]) == ("succeeded", 200)
    assert len(healthy.received) == 1


HEADS_WITHOUT_A_WHOLE_BODY = {
    "no length, connection left open": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nok",
    "a length it does not fill": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nok",
}


@pytest.mark.parametrize(
    "head", HEADS_WITHOUT_A_WHOLE_BODY.values(), ids=list(HEADS_WITHOUT_A_WHOLE_BODY)
)
def test_a_2xx_head_in_time_is_a_success_without_its_body(
    head: bytes, tls: ssl.SSLContext | None
) -> None:
    def unfinished(conn: socket.socket) -> None:
        conn.sendall(head)
        receiver.done.wait(10)  # sends nothing more, keeps the connection open

    client = client_with_timeout()
    with raw_receiver(unfinished, tls) as receiver:
        add_endpoint(client, receiver.url)
        trigger(client, "order.completed")
        [attempt] = flush(client)
        assert (attempt["outcome"], attempt["error"], attempt["statusCode"]) == (
            "succeeded",
            None,
            200,
        )
        assert attempt["message"] == "answered 200"
        assert attempt["responseSnippet"] == "ok"
        deliveries = client.get("/_sandbox/webhooks/deliveries").json["items"]  # type: ignore[index]
        assert [(d["status"], d["attempts"]) for d in deliveries] == [("succeeded", 1)]
        trigger(client, "order.completed")
        assert [a["outcome"] for a in flush(client)] == ["succeeded"]
        assert receiver.connections == 2  # the unfinished answer's connection was not reused
