"""``svc-sandbox exec [serve options] -- CMD ...``: the emulator around one command (CI).

Starts the emulator on a thread (a free port unless ``--port`` says otherwise), waits until
``GET /_sandbox`` answers, runs CMD with the emulator's coordinates in its environment, stops
the emulator and exits with CMD's status (128 + N when a signal N ended it, 127 when CMD
cannot be started), as Firebase's ``emulators:exec`` does. ``--state FILE`` is imported before
CMD starts; ``--export-on-exit FILE`` is written after CMD ends, whatever its status (its
missing folders made); when it cannot be written, exec says so on stderr and still exits with
CMD's status.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

from svc_sandbox.core.clock import monotonic
from svc_sandbox.settings import ENV_PREFIX

#: How long the emulator may take to answer before exec gives up (seconds).
READY_TIMEOUT = 30.0


def environment(info: dict[str, Any]) -> dict[str, str]:
    """The variables CMD gets: the origin, every root, the seeded credentials."""
    roots: dict[str, str] = info["roots"]
    env = {"SVC_SANDBOX_URL": roots["control_url"].removesuffix("/_sandbox")}
    for name, url in roots.items():
        env["SVC_" + name.upper()] = url
    for org in info["organizations"]:
        live = [t["token"] for t in org["tokens"] if t["usable"]]
        if org["environment"] == "sandbox" and "SVC_TEST_TOKEN" not in env and live:
            env["SVC_TEST_TOKEN"] = env["SVC_TOKEN"] = live[0]
            env["SVC_TEST_ORG_ID"] = org["id"]
        if org["environment"] == "production" and "SVC_LIVE_TOKEN" not in env and live:
            env["SVC_LIVE_TOKEN"] = live[0]
            env["SVC_LIVE_ORG_ID"] = org["id"]
    secret = info["webhooks"]["secret"]
    if secret:
        env["SVC_WEBHOOK_SECRET"] = secret
    return env


def wait_until_ready(origin: str, timeout: float = READY_TIMEOUT) -> bool:
    deadline = monotonic() + timeout
    while monotonic() < deadline:
        try:
            with urllib.request.urlopen(origin + "/_sandbox", timeout=5) as answer:
                if answer.status == 200:
                    return True
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.05)
    return False


def exec_command(args: argparse.Namespace) -> int:
    from svc_sandbox.cli import (
        export_state,
        export_target_usable,
        import_state,
        settings_from_args,
    )

    command = list(args.command_line)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print("svc-sandbox exec: give the command after --", file=sys.stderr)
        return 2
    if args.port is None and ENV_PREFIX + "PORT" not in os.environ:
        args.port = 0  # a free port, unless the flag or SVC_SANDBOX_PORT names one
    try:
        settings = settings_from_args(args)
    except ValueError as exc:
        print(f"svc-sandbox: invalid settings: {exc}", file=sys.stderr)
        return 2
    if not export_target_usable(settings):  # before CMD runs for nothing
        return 2

    from svc_sandbox.app import create_app
    from svc_sandbox.core.errors import SandboxError
    from svc_sandbox.sandbox import Sandbox
    from svc_sandbox.server import LISTEN_ERRORS, ServerThread, cannot_listen

    try:
        sandbox = Sandbox(settings)
    except SandboxError as exc:  # a --triggers file that does not hold up
        print(f"svc-sandbox: invalid settings: {exc.message}", file=sys.stderr)
        return 2
    if not import_state(sandbox, settings):  # before CMD can see anything
        return 2
    try:
        server = ServerThread(create_app(sandbox), settings).start()
    except LISTEN_ERRORS as exc:
        print(cannot_listen(settings.host, settings.port, exc), file=sys.stderr)
        return 2
    sandbox.start_background()
    try:
        if not wait_until_ready(settings.origin):
            print(f"svc-sandbox exec: {settings.origin} did not answer", file=sys.stderr)
            return 2
        env = {**os.environ, **environment(sandbox.info())}
        return run(command, env)
    finally:
        sandbox.stop()
        server.close()
        # Whatever CMD's status was; a failed export is said on stderr and CMD's status
        # stays the exit status (the command's verdict is what CI asked for).
        export_state(sandbox, settings)


def run(command: list[str], env: dict[str, str]) -> int:
    """Runs CMD to its end, passing SIGINT and SIGTERM on to it."""
    try:
        child = subprocess.Popen(command, env=env)
    except OSError as exc:
        print(f"svc-sandbox exec: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127

    def forward(signum: int, frame: object) -> None:
        child.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        status = child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return status if status >= 0 else 128 - status
