"""The tool server's settings (spec §1, tool-server table): flags win over env variables,
env variables over defaults."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from svc_sandbox.arguments import number, whole_number
from svc_sandbox.client import arguments as check
from svc_sandbox.client.commerce import DEFAULT_BASE_URL, is_api_token
from svc_sandbox.core.numbers import ASCII_WHITESPACE, decimal_text, whole_text
from svc_sandbox.core.text import lone_surrogate

Transport = Literal["stdio", "http"]

DEFAULT_PORT = 3333
DEFAULT_HOST = "127.0.0.1"
#: Seconds one REST call may take before the tool answers a ``timeout`` error (not in the spec).
DEFAULT_TIMEOUT = 15.0
#: The words a boolean env variable may say, in any case (empty or unset: the default, off).
TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class McpConfig:
    token: str | None = None
    base_url: str = DEFAULT_BASE_URL
    webhook_secret: str | None = None
    read_only: bool = False
    enable_withdrawals: bool = False
    transport: Transport = "stdio"
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    timeout: float = DEFAULT_TIMEOUT

    @property
    def http(self) -> bool:
        return self.transport == "http"


def _flag(env: Mapping[str, str], name: str) -> bool:
    """A boolean env variable. Anything but the known words is refused, not read as off: a
    typo in ``SVC_READ_ONLY`` must not start a server with the write tools."""
    raw = env.get(name, "")
    word = raw.strip().lower()
    if word in TRUE:
        return True
    if word in FALSE or not word:
        return False
    words = "/".join(f"{yes}/{no}" for yes, no in zip(TRUE, FALSE, strict=True))
    raise ValueError(f"{name} must be one of {words} (any case) or empty, got {raw!r}")


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="svc-sandbox mcp",
        description="The agent tool server (Model Context Protocol) over the commerce API: "
        "stdio by default, or streamable HTTP (POST /mcp, GET /healthz) with --http.",
    )
    cli.add_argument("--base-url", help=f"commerce API root (env SVC_BASE_URL; {DEFAULT_BASE_URL})")
    cli.add_argument(
        "--read-only",
        action="store_true",
        default=None,
        help="register only the tools that read data (env SVC_READ_ONLY=true)",
    )
    cli.add_argument(
        "--enable-withdrawals",
        action="store_true",
        default=None,
        help="register svc_create_withdrawal (env SVC_ENABLE_WITHDRAWALS=true)",
    )
    cli.add_argument(
        "--http",
        action="store_true",
        default=None,
        help="serve streamable HTTP instead of stdio (env SVC_MCP_TRANSPORT=http)",
    )
    cli.add_argument("--host", help=f"HTTP listen address (env HOST; default {DEFAULT_HOST})")
    cli.add_argument(
        "--port", type=whole_number, help=f"HTTP port (env PORT; default {DEFAULT_PORT})"
    )
    cli.add_argument(
        "--timeout",
        type=number,
        help=f"seconds per REST call (env SVC_TIMEOUT; default {DEFAULT_TIMEOUT:g})",
    )
    return cli


def from_args(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> McpConfig:
    """The settings of ``args`` over ``env`` (default: os.environ). Raises ValueError naming
    the flag or variable that is wrong."""
    env = os.environ if env is None else env
    token = env.get("SVC_TOKEN") or None
    if token is not None and not is_api_token(token):
        raise ValueError("SVC_TOKEN must be an API token: svc_test_... or svc_live_...")
    base_url = check.base_url(
        "--base-url / SVC_BASE_URL", args.base_url or env.get("SVC_BASE_URL") or DEFAULT_BASE_URL
    )
    transport_env = env.get("SVC_MCP_TRANSPORT", "stdio").strip().lower() or "stdio"
    if transport_env not in ("stdio", "http"):
        raise ValueError(f"SVC_MCP_TRANSPORT must be stdio or http, got {transport_env!r}")
    http = args.http if args.http is not None else transport_env == "http"
    # Numbers in ASCII digits only (core/numbers.py; the flags' type is the same rule):
    # int() and float() would read PORT=٣٣٣٣ as 3333 and SVC_TIMEOUT=1_5 as 15.
    # PORT is the HTTP transport's alone (§1): over stdio an inherited PORT=abc is not read.
    port_text = env.get("PORT", str(DEFAULT_PORT)) if http else str(DEFAULT_PORT)
    if args.port is not None:  # the flag wins, so a refusal names it and what it was given
        port, port_source, port_text = args.port, "--port", str(args.port)
    else:
        port, port_source = whole_text(port_text.strip(ASCII_WHITESPACE)), "PORT"
    if port is None or not 0 <= port <= 65535:
        raise ValueError(f"{port_source} must be a port number (0 to 65535), got {port_text!r}")
    timeout_text = env.get("SVC_TIMEOUT", str(DEFAULT_TIMEOUT))
    timeout_given = decimal_text(timeout_text.strip(ASCII_WHITESPACE))
    if args.timeout is not None:
        timeout = args.timeout
    elif timeout_given is None:
        raise ValueError(
            f"SVC_TIMEOUT must be a positive, finite number of seconds, got {timeout_text!r}"
        )
    else:
        timeout = float(timeout_given)
    if not 0 < timeout < math.inf:
        raise ValueError("--timeout / SVC_TIMEOUT must be a positive, finite number of seconds")
    webhook_secret = env.get("SVC_WEBHOOK_SECRET") or None
    if webhook_secret is not None and lone_surrogate(webhook_secret):
        # os.environ holds a byte that is not UTF-8 as a lone surrogate: no HMAC key can be
        # made of it, so both webhook tools would fail on every call.
        raise ValueError("SVC_WEBHOOK_SECRET must be UTF-8 text")
    return McpConfig(
        token=token,
        base_url=base_url.rstrip("/"),
        webhook_secret=webhook_secret,
        read_only=args.read_only if args.read_only is not None else _flag(env, "SVC_READ_ONLY"),
        enable_withdrawals=(
            args.enable_withdrawals
            if args.enable_withdrawals is not None
            else _flag(env, "SVC_ENABLE_WITHDRAWALS")
        ),
        transport="http" if http else "stdio",
        host=args.host or env.get("HOST") or DEFAULT_HOST,
        port=port,
        timeout=timeout,
    )
