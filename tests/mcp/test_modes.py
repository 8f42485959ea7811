"""Modes and settings of ``svc-sandbox mcp``: read-only, no token, an unreachable API, flags
over env variables, and a tool server that never loads Flask."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from svc_sandbox.mcp.config import DEFAULT_PORT, McpConfig, from_args, parser
from tests.client.test_answers import SENT_STATUS
from tests.mcp.conftest import SECRET, Served, Session, open_stdio, server_env, text_of
from tests.mcp.test_stdio import ALL_TOOLS, READ_TOOLS


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("modes")


@pytest.fixture(scope="module")
def read_only(served: Served, logs: Path) -> Iterator[Session]:
    """--read-only, with a token, against a base URL where nothing listens."""
    env = server_env(
        SVC_TOKEN=served.tenant.token,
        SVC_BASE_URL=f"http://127.0.0.1:{_closed_port()}/api",
        SVC_WEBHOOK_SECRET=SECRET,
    )
    with ExitStack() as stack:
        yield open_stdio(stack, ["--read-only", "--timeout", "3"], env, logs / "read-only.log")


@pytest.fixture(scope="module")
def tokenless(served: Served, logs: Path) -> Iterator[Session]:
    """No SVC_TOKEN and no SVC_WEBHOOK_SECRET."""
    env = server_env(SVC_BASE_URL=served.base_url)
    with ExitStack() as stack:
        yield open_stdio(stack, [], env, logs / "tokenless.log")


def test_read_only_registers_only_the_reading_tools(read_only: Session) -> None:
    assert read_only.tool_names() == READ_TOOLS
    assert all(t.annotations.read_only_hint for t in read_only.list_tools())
    assert read_only.prompts() == ["integrate_svc", "go_live_checklist", "debug_payment"]
    assert read_only.resources() == ["svc://reference"]
    assert "Unknown tool" in read_only.error("svc_create_product", {"title": "x"})


def test_an_unreachable_api_is_a_quick_tool_error(read_only: Session) -> None:
    started = time.monotonic()
    result = read_only.call("svc_get_balance")
    assert time.monotonic() - started < 3
    assert result.is_error
    error = result.structured_content["error"]  # type: ignore[index]
    assert error["code"] == "connection_error" and error["status"] is None
    assert "GET /balance" in error["message"]
    # The offline tools do not care.
    assert read_only.ok("svc_quote_withdrawal", {"amount_minor": 10000})["netAmount"] == 9195


class _GrownService(BaseHTTPRequestHandler):
    """A service newer than the spec: a failure code §7 does not list (§9.3: codes may grow)
    and a field the client does not know, on every session status."""

    def do_GET(self) -> None:
        body = json.dumps(SENT_STATUS).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_result_carries_what_the_service_sent(served: Served, logs: Path) -> None:
    service = ThreadingHTTPServer(("127.0.0.1", 0), _GrownService)
    threading.Thread(target=service.serve_forever, daemon=True).start()
    env = server_env(
        SVC_TOKEN=served.tenant.token, SVC_BASE_URL=f"http://127.0.0.1:{service.server_port}/api"
    )
    try:
        with ExitStack() as stack:
            session = open_stdio(stack, [], env, logs / "grown.log")
            result = session.call(
                "svc_get_checkout_status", {"session_id": SENT_STATUS["sessionId"]}
            )
    finally:
        service.shutdown()
        service.server_close()
    assert result.structured_content == SENT_STATUS
    assert "failure `payment_blocked_by_bank`" in text_of(result)
    assert "last attempt failed `card_declined`" in text_of(result)


@pytest.mark.parametrize(
    "tool",
    [t for t in ALL_TOOLS if t not in ("svc_create_withdrawal",)],
)
def test_without_a_token_only_the_offline_tools_work(tokenless: Session, tool: str) -> None:
    offline = {
        "svc_quote_withdrawal": {"amount_minor": 10000},
        "svc_search_docs": {"query": "checkout"},
        "svc_read_doc": {"doc_id": "reference"},
    }
    needs_secret = ("svc_verify_webhook", "svc_create_test_webhook")
    arguments = {
        "svc_create_checkout": {"product_id": "p_x"},
        "svc_create_product": {"title": "x", "pricing_model": "free"},
        "svc_update_product": {"product_id": "p_x", "title": "y"},
        "svc_get_product": {"product_id": "p_x"},
        "svc_get_checkout_status": {"session_id": "0" * 24},
        "svc_wait_for_checkout": {"session_id": "0" * 24},
        "svc_get_withdrawal": {"withdrawal_id": "0" * 24},
        "svc_verify_webhook": {"payload": "{}", "signature": "t=1,v1=00"},
        "svc_create_test_webhook": {"event_type": "order.created"},
        **offline,
    }.get(tool, {})
    if tool in offline:
        assert tokenless.ok(tool, arguments)
    elif tool in needs_secret:
        said = tokenless.error(tool, arguments)
        assert "secret is required" in said and "SVC_WEBHOOK_SECRET" in said
        assert tokenless.ok(tool, {**arguments, "secret": "whsec_given"})
    else:
        said = tokenless.error(tool, arguments)
        assert f"{tool} needs an API token" in said and "SVC_TOKEN" in said


# --- settings ---------------------------------------------------------------------------


def _config(argv: list[str], env: dict[str, str]) -> McpConfig:
    return from_args(parser().parse_args(argv), env)


def test_defaults() -> None:
    assert _config([], {}) == McpConfig(
        token=None,
        base_url="http://127.0.0.1:8700/api",
        webhook_secret=None,
        read_only=False,
        enable_withdrawals=False,
        transport="stdio",
        host="127.0.0.1",
        port=DEFAULT_PORT,
    )


def test_env_variables_and_flags_over_them() -> None:
    env = {
        "SVC_TOKEN": "svc_live_abcdefgh",
        "SVC_BASE_URL": "https://api.example/api/",
        "SVC_WEBHOOK_SECRET": "whsec_1",
        "SVC_READ_ONLY": "true",
        "SVC_ENABLE_WITHDRAWALS": "TRUE",
        "SVC_MCP_TRANSPORT": "http",
        "PORT": "4000",
        "HOST": "0.0.0.0",
    }
    from_env = _config([], env)
    assert from_env == McpConfig(
        token="svc_live_abcdefgh",
        base_url="https://api.example/api",
        webhook_secret="whsec_1",
        read_only=True,
        enable_withdrawals=True,
        transport="http",
        host="0.0.0.0",
        port=4000,
    )
    flags = _config(["--base-url", "http://127.0.0.1:1/api", "--port", "5", "--host", "::1"], env)
    assert (flags.base_url, flags.port, flags.host) == ("http://127.0.0.1:1/api", 5, "::1")
    assert _config(["--http"], {}).transport == "http"
    assert _config(["--read-only", "--enable-withdrawals"], {}).read_only is True


PORT_RULE = "must be a port number (0 to 65535)"
#: PORT is read only for the HTTP transport.
HTTP = {"SVC_MCP_TRANSPORT": "http"}


@pytest.mark.parametrize("port", ["abc", "", "70000"])
def test_over_stdio_an_inherited_port_is_not_read(port: str) -> None:
    """§1 names PORT in the HTTP transport's row: a desktop agent's server would not start
    because of a PORT its shell set for something else."""
    assert _config([], {"PORT": port}).transport == "stdio"
    with pytest.raises(ValueError, match="PORT must be a port number"):
        _config(["--http"], {"PORT": port})


@pytest.mark.parametrize(
    ("argv", "env", "says"),
    [
        ([], {"SVC_TOKEN": "abc"}, "SVC_TOKEN"),
        ([], {"SVC_BASE_URL": "ftp://x"}, "SVC_BASE_URL"),
        ([], {"SVC_MCP_TRANSPORT": "sse"}, "SVC_MCP_TRANSPORT"),
        ([], {**HTTP, "PORT": "http"}, "PORT"),
        (["--timeout", "0"], {}, "--timeout"),
        ([], {"SVC_TIMEOUT": "soon"}, "SVC_TIMEOUT"),
        ([], {"SVC_TIMEOUT": "inf"}, "SVC_TIMEOUT"),
        ([], {"SVC_TOKEN": "svc_test_abcdefgh\n"}, "SVC_TOKEN"),
        (["--base-url", "http://127.0.0.1:notaport/api"], {}, "--base-url"),
        (["--base-url", "http://"], {}, "--base-url"),
        ([], {"SVC_BASE_URL": "http://exa mple/api"}, "SVC_BASE_URL"),
        ([], {"SVC_BASE_URL": "http://127.0.0.1:70000/api"}, "SVC_BASE_URL"),
        # Numbers in ASCII digits only (core/numbers.py): int() and float() take these.
        ([], {**HTTP, "PORT": "\u0663\u0663\u0663\u0663"}, "PORT"),  # Arabic-Indic 3333
        ([], {**HTTP, "PORT": "\uff13\uff13\uff13\uff13"}, "PORT"),  # full-width 3333
        # Superscript two: int() raised a bare ValueError.
        ([], {**HTTP, "PORT": "\u00b2"}, "PORT"),
        ([], {**HTTP, "PORT": "3_333"}, "PORT"),
        ([], {"SVC_TIMEOUT": "1_5"}, "SVC_TIMEOUT"),
        ([], {"SVC_TIMEOUT": "1e1"}, "SVC_TIMEOUT"),
        ([], {"SVC_TIMEOUT": "\u0661\u0665"}, "SVC_TIMEOUT"),
        # A byte that is not UTF-8 (os.environ holds it as a lone surrogate).
        ([], {"SVC_WEBHOOK_SECRET": "whsec_\udcff"}, "SVC_WEBHOOK_SECRET must be UTF-8"),
        # The refusal names what was given where: the flag wins over PORT (it said PORT's text).
        (
            ["--port", "99999"],
            {},
            re.escape("--port must be a port number (0 to 65535), got '99999'"),
        ),
        (
            ["--port", "99999"],
            {**HTTP, "PORT": "3333"},
            re.escape("--port must be a port number (0 to 65535), got '99999'"),
        ),
        (
            [],
            {**HTTP, "PORT": "70000"},
            "^" + re.escape("PORT must be a port number (0 to 65535), got '70000'"),
        ),
    ],
)
def test_bad_settings_name_the_variable(argv: list[str], env: dict[str, str], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        _config(argv, env)


BOOLEAN_VARIABLES = ("SVC_READ_ONLY", "SVC_ENABLE_WITHDRAWALS")
SAID_ON = ("true", "TRUE", "True", "1", "yes", "Yes", "on", "ON", " true ")
SAID_OFF = ("false", "FALSE", "0", "no", "NO", "off", "Off", "", "  ")


@pytest.mark.parametrize("variable", BOOLEAN_VARIABLES)
@pytest.mark.parametrize(
    ("value", "on"), [(v, True) for v in SAID_ON] + [(v, False) for v in SAID_OFF]
)
def test_a_boolean_variable_reads_the_usual_words(variable: str, value: str, on: bool) -> None:
    config = _config([], {variable: value})
    assert (config.read_only, config.enable_withdrawals) == (
        on and variable == "SVC_READ_ONLY",
        on and variable == "SVC_ENABLE_WITHDRAWALS",
    )


@pytest.mark.parametrize("variable", BOOLEAN_VARIABLES)
@pytest.mark.parametrize("value", ["ture", "flase", "2", "y", "enabled", "true!", "-1"])
def test_a_boolean_variable_with_another_value_is_refused(variable: str, value: str) -> None:
    with pytest.raises(ValueError, match=f"^{variable} must be one of .*, got '{value}'$"):
        _config([], {variable: value})


@pytest.mark.parametrize("flag", ["--port", "--timeout"])
@pytest.mark.parametrize("value", ["\u0663\u0663\u0663\u0663", "\u00b2", "1_5", "1e1", "nan"])
def test_a_flag_takes_a_number_only_in_ascii_digits(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _config([flag, value], {})
    assert exit_.value.code == 2
    assert f"argument {flag}: {value!r} is not" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"SVC_TOKEN": "nope"}, "SVC_TOKEN must be an API token"),
        ({"SVC_TOKEN": "svc_test_Secret123\n"}, "SVC_TOKEN must be an API token"),
        ({"SVC_READ_ONLY": "ture"}, "SVC_READ_ONLY must be one of"),
        ({"SVC_TIMEOUT": "inf"}, "SVC_TIMEOUT must be a positive, finite"),
        ({"SVC_BASE_URL": "http://127.0.0.1:notaport/api"}, "SVC_BASE_URL must be"),
        ({"SVC_WEBHOOK_SECRET": "whsec_\udcff"}, "SVC_WEBHOOK_SECRET must be UTF-8 text"),
    ],
)
def test_a_bad_setting_stops_the_command_with_status_2(env: dict[str, str], says: str) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("svc-sandbox")), "mcp", "--http", "--port", "0"],
        env=server_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and says in done.stderr
    assert "Secret123" not in done.stderr  # a token is never printed


def test_the_tool_server_never_loads_flask() -> None:
    script = """
import sys, anyio
from svc_sandbox.launcher import main
from svc_sandbox.mcp.backend import Backend
from svc_sandbox.mcp.config import McpConfig
from svc_sandbox.mcp.http import create_app
from svc_sandbox.mcp.server import build_server
server = build_server(Backend(McpConfig(enable_withdrawals=True), "svc_test_x"))
assert len(anyio.run(server.list_tools)) == 17
create_app(McpConfig(transport="http"))
anyio.run(server.read_resource, "svc://reference")
anyio.run(server.call_tool, "svc_search_docs", {"query": "webhook"})
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("flask", "werkzeug", "waitress"))
print(loaded)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_cli_hands_mcp_to_the_tool_server(capsys: pytest.CaptureFixture[str]) -> None:
    from svc_sandbox import cli, launcher

    for main in (cli.main, launcher.main):
        with pytest.raises(SystemExit) as exited:
            main(["mcp", "--help"])
        assert exited.value.code == 0
        assert "usage: svc-sandbox mcp" in capsys.readouterr().out
    assert "mcp" in cli.build_parser().format_help()
