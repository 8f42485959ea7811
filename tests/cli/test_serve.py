"""`svc-sandbox serve`: a real multi-threaded server that prints its roots and stops on Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_sandbox.cli import build_parser, main, option_of, settings_from_args
from svc_sandbox.settings import ALLOWED_HOST_SHAPE, HOST_SHAPE
from tests.webhooks.receiver import Receiver, running_receiver

#: A server on a free port, its clock frozen.
FRESH = ("--port", "0", "--clock", "frozen")


def parse(*argv: str) -> dict[str, object]:
    return settings_from_args(build_parser().parse_args(["serve", *argv])).model_dump()


def test_flags_override_environment_which_overrides_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert parse()["seed"] == 1
    monkeypatch.setenv("SVC_SANDBOX_SEED", "5")
    monkeypatch.setenv("SVC_SANDBOX_RATE_LIMITS", "false")
    monkeypatch.setenv("SVC_SANDBOX_CLOCK_MODE", "scaled")
    assert (parse()["seed"], parse()["rate_limits"], parse()["clock_mode"]) == (5, False, "scaled")
    assert parse("--seed", "7", "--rate-limits", "--clock", "frozen")["seed"] == 7
    assert parse("--rate-limits")["rate_limits"] is True
    assert parse("--clock", "frozen")["clock_mode"] == "frozen"


def test_every_setting_has_a_serve_flag() -> None:
    from svc_sandbox.settings import Settings

    serve = build_parser()._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    flags = {action.dest for action in serve._actions}
    assert set(Settings.model_fields) - flags == set()
    assert (
        parse("--no-credentials-status", "401", "--tick-seconds", "2")["no_credentials_status"]
        == 401
    )


#: (flag, text): int() or float() reads each text as a number; a flag is ASCII digits only.
NOT_ASCII_NUMBERS = [
    ("--port", "\u0660"),  # Arabic-Indic zero
    ("--port", "\uff18\uff17\uff10\uff10"),  # full-width 8700
    ("--seed", "\u0661_\u0660"),  # int() said 10
    ("--seed", "1_0"),
    ("--threads", "\u00b2"),
    ("--clock-factor", "1e1"),
    ("--clock-factor", "inf"),
    ("--tick-seconds", "0_5"),
]


@pytest.mark.parametrize(("flag", "text"), NOT_ASCII_NUMBERS)
def test_a_number_flag_takes_only_ascii_digits(
    flag: str, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(flag, text)
    assert exit_.value.code == 2
    assert f"argument {flag}: {text!r} is not a" in capsys.readouterr().err


@pytest.mark.parametrize(("flag", "text"), NOT_ASCII_NUMBERS)
def test_a_number_variable_takes_only_ascii_digits(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], flag: str, text: str
) -> None:
    """The same text in the setting's SVC_SANDBOX_* variable is refused as the flag is, in
    the flag's words (a whole number for a count or a seed)."""
    with pytest.raises(SystemExit):
        parse(flag, text)
    wanted = capsys.readouterr().err.strip().split(" is not ", 1)[1]
    assert wanted.startswith("a ") and "ASCII digits" in wanted
    name = flag.removeprefix("--").replace("-", "_").upper()
    monkeypatch.setenv(f"SVC_SANDBOX_{name}", text)
    with pytest.raises(ValueError) as refused:
        parse()
    assert f"must be {wanted}" in str(refused.value)


def test_every_option_is_named_as_the_parser_names_it() -> None:
    """``option_of`` (what a refusal names) is the option the parser takes for the setting."""
    from svc_sandbox.settings import Settings

    serve = build_parser()._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    options: dict[str, list[str]] = {}
    for action in serve._actions:  # a switch has two: --rate-limits and --no-rate-limits
        options.setdefault(action.dest, []).extend(action.option_strings)
    for setting in Settings.model_fields:
        assert option_of(setting) in options[setting], setting


def test_every_option_of_every_command_says_what_it_does() -> None:
    """``--help`` explains each option (``--clock`` once had no word, not even its default)."""
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name, command in commands.items():
        for action in command._actions:
            assert action.help, (name, action.option_strings or action.dest)


#: (argv, environment, the line said): a value that does not hold up is named where it was
#: written, the option or the variable, in the words of every other refusal.
REFUSED_SETTINGS = [
    (["--port", "70000"], {}, "--port must be less than or equal to 65535"),
    (["--clock-start", "yesterday"], {}, "--clock-start must be an ISO 8601 date-time"),
    (
        ["--production-push-delay", "-1"],
        {},
        "--production-push-delay must be greater than or equal to 0",
    ),
    (["--withdrawal-fee-rate", "2"], {}, "--withdrawal-fee-rate must be less than or equal to 1"),
    (
        ["--webhook-retries", "1x"],
        {},
        "--webhook-retries must be durations separated by commas, such as 1m,5m,30m",
    ),
    (
        [],
        {"SVC_SANDBOX_RATE_LIMITS": "maybe"},
        "SVC_SANDBOX_RATE_LIMITS must be a valid boolean, unable to interpret input",
    ),
    (
        [],
        {"SVC_SANDBOX_CLOCK_MODE": "fast"},
        "SVC_SANDBOX_CLOCK_MODE must be 'frozen', 'real' or 'scaled'",
    ),
    # Past a C ssize_t a journal's deque bound raised OverflowError: a traceback, exit 1.
    (
        ["--webhook-attempts-kept", "9" * 23],
        {},
        "--webhook-attempts-kept must be less than or equal to 9007199254740991",
    ),
    (
        [],
        {"SVC_SANDBOX_EVENTS_KEPT": str(2**63)},
        "SVC_SANDBOX_EVENTS_KEPT must be less than or equal to 9007199254740991",
    ),
    # A host with brackets or a port made roots no URL parser reads: a traceback, exit 1.
    *[
        (["--host", host], {}, f"--host {HOST_SHAPE}")
        for host in ("[::1]", "127.0.0.1:80", "a:b", "10.0.0.1/8")
    ],
    # A root with a query made roots such as /a?q=1/api; a host name with a port never
    # matched a Host header, and the refusal then suggested adding it.
    *[
        (
            ["--public-url", url],
            {},
            "--public-url must be a root to append paths to, without a query, a fragment or "
            "credentials",
        )
        for url in ("http://x.example/a?q=1", "http://x.example/a#f", "http://u:p@x.example")
    ],
    *[
        (
            ["--allowed-hosts", f"ok.example,{name}"],
            {},
            f"--allowed-hosts {name!r}: {ALLOWED_HOST_SHAPE}",
        )
        for name in ("x.example:80", "http://y.example", "[x.example]")
    ],
    # The option wins over the variable, and so is the one named.
    (
        ["--port", "70000"],
        {"SVC_SANDBOX_PORT": "80000"},
        "--port must be less than or equal to 65535",
    ),
]


@pytest.mark.parametrize("command", ["serve", "exec"])
@pytest.mark.parametrize(("argv", "environment", "said"), REFUSED_SETTINGS)
def test_a_refused_setting_is_named_as_it_was_written(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    argv: list[str],
    environment: dict[str, str],
    said: str,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    tail = ["--", "true"] if command == "exec" else []
    assert main([command, *argv, *tail]) == 2
    assert capsys.readouterr().err == f"svc-sandbox: invalid settings: {said}\n"


def test_every_root_has_a_flag() -> None:
    settings = parse("--public-url", "http://example.test:1", "--pay-url", "https://pay.test")
    assert settings["public_url"] == "http://example.test:1"
    assert settings["pay_url"] == "https://pay.test"


def test_bad_settings_exit_2_with_a_message() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "svc_sandbox.cli", "serve", "--base-url", "not-a-url"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "--base-url must be an absolute http(s) URL" in result.stderr


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[str], str, list[str]]]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "svc_sandbox.cli", "serve", "--port", "0", "--clock", "frozen"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("Ready"):
            break
    match = re.search(r"control_url\s+(http://127\.0\.0\.1:\d+)/_sandbox", "".join(lines))
    assert match, "".join(lines)
    try:
        yield process, match.group(1), lines
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_serve_prints_roots_and_credentials_answers_and_stops_on_ctrl_c(
    served: tuple[subprocess.Popen[str], str, list[str]],
) -> None:
    process, origin, lines = served
    banner = "".join(lines)
    assert f"base_url          {origin}/api" in banner
    assert "svc_test_" in banner and "svc_live_" in banner
    with urllib.request.urlopen(f"{origin}/_sandbox", timeout=10) as response:
        info = json.load(response)
        assert response.headers["X-Request-Id"].startswith("req_")
    assert info["roots"]["base_url"] == f"{origin}/api"
    token = info["organizations"][0]["tokens"][0]["token"]
    assert token in banner
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 0
    assert "svc-sandbox stopped" in out


def _serve(*flags: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "svc_sandbox.cli", "serve", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("Ready") or "cannot import" in line:
            break
    match = re.search(r"control_url\s+(http://127\.0\.0\.1:\d+)/_sandbox", "".join(lines))
    return process, match.group(1) if match else "".join(lines)


def test_state_file_in_and_export_on_exit_out(tmp_path: Path) -> None:
    """``--state FILE`` imports at start; ``--export-on-exit FILE`` writes the state on stop,
    and that file starts the next server where the first one stopped."""
    first_out = f"{tmp_path}/first.json"
    process, origin = _serve("--clock", "frozen", "--export-on-exit", first_out)
    request = urllib.request.Request(
        f"{origin}/_sandbox/orgs",
        data=json.dumps({"name": "Kept Org"}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        kept = json.load(response)["id"]
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=30)
    assert f"state exported to {first_out}" in out
    with open(first_out, encoding="utf-8") as written:
        exported = json.load(written)

    process, origin = _serve("--clock", "frozen", "--state", first_out)
    try:
        with urllib.request.urlopen(f"{origin}/_sandbox/state", timeout=10) as response:
            assert json.load(response) == exported
        with urllib.request.urlopen(f"{origin}/_sandbox/orgs/{kept}", timeout=10) as response:
            assert json.load(response)["name"] == "Kept Org"
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def test_an_invalid_state_file_stops_the_start_with_the_path(
    tmp_path: Path,
) -> None:
    broken = f"{tmp_path}/broken.json"
    with open(broken, "w", encoding="utf-8") as out:
        json.dump({"format": 1, "clock": "soon"}, out)
    process, _ = _serve("--state", broken)
    process.communicate(timeout=30)
    assert process.returncode == 2


def test_a_state_file_with_a_dangling_reference_stops_the_start_naming_it(
    tmp_path: Path,
) -> None:
    from svc_sandbox.sandbox import Sandbox

    document = Sandbox(clock_mode="frozen").export()
    document["services"]["orgs"]["tokens"][0]["org_id"] = "f" * 24
    dangling = f"{tmp_path}/dangling.json"
    with open(dangling, "w", encoding="utf-8") as out:
        json.dump(document, out)
    process, said = _serve("--state", dangling)
    process.communicate(timeout=30)
    assert process.returncode == 2
    assert f"services.orgs.tokens[0].org_id is '{'f' * 24}', which names no organization" in said

    process, origin = _serve("--clock", "frozen", "--state", dangling, "--state-references", "skip")
    try:
        with urllib.request.urlopen(f"{origin}/_sandbox/state", timeout=10) as response:
            assert json.load(response)["services"]["orgs"] == document["services"]["orgs"]
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def test_the_banner_names_the_seeded_users_and_apps_with_their_secrets() -> None:
    from svc_sandbox.cli import banner
    from svc_sandbox.sandbox import Sandbox

    info = Sandbox(clock_mode="frozen").info()
    text = banner(info)
    assert f"Identity provider: {info['identity']['issuer']}" in text
    for user in info["identity"]["users"]:
        assert f"  {user['handle']}  password: {user['password']}" in text
    wallet_app = next(a for a in info["identity"]["apps"] if a["clientType"] == "confidential")
    assert f"client_id: {wallet_app['clientId']}  secret: {wallet_app['clientSecret']}" in text


def test_serve_freezes_what_start_up_built_once_warmed_up() -> None:
    """After warming up, everything alive is out of the collector's reach (shorter pauses);
    what requests make later is still collected."""
    import gc

    from svc_sandbox.cli import warm_up_and_freeze
    from svc_sandbox.sandbox import Sandbox

    sandbox = Sandbox(clock_mode="frozen")
    gc.unfreeze()
    try:
        warm_up_and_freeze(sandbox)
        assert gc.get_freeze_count() > 1000  # the modules, the sandbox, its validators
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1  # garbage made after the freeze is still collected
    finally:
        gc.unfreeze()


def test_the_start_up_runs_no_collection_and_leaves_what_it_built_out_of_reach(
    gc_collections: list[int],
) -> None:
    """``build_serving`` (the Sandbox, the app, the bound server) makes only what lives as long
    as the server: the collector is paused meanwhile, then those objects are frozen, and it
    is on again (also when the start fails)."""
    import gc

    from svc_sandbox.cli import build_serving

    settings = settings_from_args(build_parser().parse_args(["serve", *FRESH]))
    unusable = settings_from_args(build_parser().parse_args(["serve", "--host", "999.1.1.1"]))
    gc.unfreeze()
    gc.collect()  # the young generation empty: what follows is the start-up's own
    gc_collections.clear()
    try:
        built = build_serving(settings)
        assert gc_collections == []
        assert built is not None and gc.isenabled()
        sandbox, server = built
        server.close()
        tracked = {id(o) for o in gc.get_objects()}  # the frozen ones are not listed
        assert gc.get_freeze_count() > 1000
        assert id(sandbox.orgs.orgs) not in tracked
        assert build_serving(unusable) is None
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def _serve_then_stop(*flags: str) -> tuple[int, str]:
    """Starts ``serve``, waits until it answers, stops it with Ctrl-C: (status, output)."""
    process, origin = _serve(*flags)
    with urllib.request.urlopen(f"{origin}/_sandbox", timeout=10) as response:
        assert response.status == 200
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=30)
    return process.returncode, output


def test_export_on_exit_makes_missing_folders(tmp_path: Path) -> None:
    out = tmp_path / "exports" / "nightly" / "state.json"
    status, output = _serve_then_stop("--clock", "frozen", "--export-on-exit", str(out))
    assert status == 0, output
    assert json.loads(out.read_text())["format"]


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("blocker/x/s.json", "{tmp}/blocker is a file, where a folder would have to be"),
        ("blocker", "it is a folder"),
    ],
)
def test_an_export_on_exit_that_could_not_be_written_stops_the_start(
    tmp_path: Path, target: str, reason: str
) -> None:
    """Found at start (exit 2, one line, nothing served), not when the server stops hours
    later with the state lost."""
    if target == "blocker":
        (tmp_path / "blocker").mkdir()
    else:
        (tmp_path / "blocker").write_text("a file where a folder would have to be")
    out = tmp_path / target
    result = subprocess.run(
        [sys.executable, "-m", "svc_sandbox.cli", "serve", *FRESH, "--export-on-exit", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"svc-sandbox: cannot write {out}: {reason.format(tmp=tmp_path)}\n"


def test_an_export_on_exit_that_fails_at_stop_is_said_with_exit_1(tmp_path: Path) -> None:
    """What changes while the server runs (here a file put where the export's folder will be
    made) is still said when it stops, with exit status 1 and no traceback."""
    out = tmp_path / "later" / "s.json"
    process, origin = _serve("--clock", "frozen", "--export-on-exit", str(out))
    (tmp_path / "later").write_text("a file where a folder would have to be")
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 1
    assert f"svc-sandbox: cannot write {out}: " in output
    assert "Traceback" not in output, output


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_as_soon_as_ready_is_printed_stops_cleanly(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """Ctrl-C or SIGTERM sent the moment "Ready" is read: exit 0 and the export written."""
    out = tmp_path / "state.json"
    process, _ = _serve("--export-on-exit", str(out))
    process.send_signal(signum)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert "Traceback" not in output, output
    assert json.loads(out.read_text())["version"]


@contextlib.contextmanager
def _advancing_into_a_hanging_receiver(
    out: Path, timeout_seconds: int
) -> Iterator[tuple[subprocess.Popen[str], Receiver, list[Any], threading.Thread]]:
    """``serve`` (exporting to ``out`` on exit) with an ``order.completed`` event for a
    receiver that hangs, and a 10-minute advance under way in a thread, sending to it: yields
    (the process, the receiver, the advance's answers, its thread) once the receiver holds the
    attempt (``--webhook-timeout-seconds`` ``timeout_seconds``)."""
    with running_receiver("hang") as receiver:
        process, origin = _serve(
            *FRESH[2:],
            "--webhook-url",
            receiver.url,
            "--webhook-timeout-seconds",
            str(timeout_seconds),
            "--export-on-exit",
            str(out),
        )
        _post(origin, "/_sandbox/events/trigger", {"type": "order.completed"})
        answers: list[Any] = []
        advance = threading.Thread(
            target=lambda: answers.append(
                _post(origin, "/_sandbox/clock/advance", {"seconds": 600})
            ),
            daemon=True,
        )
        advance.start()
        assert receiver.hanging.wait(10)
        yield process, receiver, answers, advance


def test_sigterm_during_an_advance_sending_to_a_hanging_receiver_answers_it_and_sends_no_more(
    tmp_path: Path,
) -> None:
    """The advance's client gets its answer once the attempt out times out, no other attempt
    goes out (the retry stays due, in the export), and the process exits 0. It used to send
    one more attempt (a second timeout) and exit with the answer unwritten."""
    out = tmp_path / "state.json"
    with _advancing_into_a_hanging_receiver(out, 4) as (process, receiver, answers, advance):
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
        advance.join(timeout=30)
        assert process.returncode == 0, output
        assert len(receiver.received) == 1
    [answer] = answers
    # The advance ends at the first retry it could not send (the server is stopping).
    assert answer["clock"]["now"] == "2026-01-01T00:01:00.000Z"
    [delivery] = json.loads(out.read_text())["services"]["webhookDeliveries"]["deliveries"]
    assert (delivery["attempts"], delivery["status"]) == (1, "pending")


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_while_stopping_is_told_and_the_stop_goes_on(
    tmp_path: Path, second: signal.Signals
) -> None:
    """SIGTERM, then Ctrl-C or SIGTERM again while the stop waits for an attempt out to a
    hanging receiver: the second is said on stderr and the stop finishes (export written,
    exit 0). It raised KeyboardInterrupt inside the stop: a traceback, no export.

    No timing is assumed: the attempt's timeout (30 s) outlasts the test, the second signal
    is sent again until the process says it (a signal sent before the first was handled
    merges with it), and only then does the receiver answer and the stop end."""
    out = tmp_path / "state.json"
    with _advancing_into_a_hanging_receiver(out, 30) as (process, receiver, _, advance):
        assert process.stdout is not None
        lines: list[str] = []
        told = threading.Event()

        def read_output() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line)
                if "svc-sandbox: stopping already" in line:
                    told.set()

        reader = threading.Thread(target=read_output, daemon=True)
        reader.start()
        process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 20
        while not told.wait(0.2) and time.monotonic() < deadline and process.poll() is None:
            process.send_signal(second)
        receiver.release.set()
        process.wait(timeout=60)
        reader.join(timeout=10)
        process.stdout.close()
        advance.join(timeout=30)
    output = "".join(lines)
    assert process.returncode == 0, output
    assert "Traceback" not in output, output
    assert "svc-sandbox: stopping already" in output
    assert "svc-sandbox stopped" in output
    assert json.loads(out.read_text())["version"]


def _post(origin: str, path: str, body: Any) -> Any:
    request = urllib.request.Request(
        origin + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)
    except OSError as error:  # the answer was cut
        return error


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("999.1.1.1", "not an address this machine can listen on"),
        ("", "not an address this machine can listen on"),
    ],
)
def test_an_unusable_host_exits_2_with_one_line(host: str, reason: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "svc_sandbox.cli", "serve", "--port", "0", "--host", host],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stderr) == (
        2,
        f"svc-sandbox: cannot listen on {host or repr(host)}:0: {reason}\n",
    )


@pytest.mark.parametrize(
    ("command", "tail"), [("serve", []), ("exec", ["--", "true"]), ("mcp", ["--http"])]
)
def test_a_port_in_use_exits_2_with_one_line(command: str, tail: list[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = [command, "--port", str(port), *tail]
        result = subprocess.run(
            [sys.executable, "-m", "svc_sandbox.cli", *argv],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert result.stderr.endswith(
        f"svc-sandbox: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )
    assert "Traceback" not in result.stderr
