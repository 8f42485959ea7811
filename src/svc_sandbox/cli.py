"""The ``svc-sandbox`` command."""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from svc_sandbox import __version__
from svc_sandbox.arguments import (
    EMULATOR_URL_HELP,
    emulator_url_default,
    http_url,
    number,
    positive_int,
    whole_number,
)
from svc_sandbox.commerce.payments import PUSH_OUTCOMES
from svc_sandbox.contract.document import BY_NAME
from svc_sandbox.contract.reports import FORMATS, render
from svc_sandbox.core.clock import ClockMode
from svc_sandbox.core.collector import collector_paused
from svc_sandbox.exposure import is_loopback, usable_origins
from svc_sandbox.scenarios import command as scenario_commands
from svc_sandbox.settings import ROOT_DEFAULTS, Settings, refusal

if TYPE_CHECKING:
    from svc_sandbox.sandbox import Sandbox
    from svc_sandbox.server import ServerThread


def _serve_parser(sub: Any) -> None:
    serve = sub.add_parser("serve", help="serve every root of the spec on one origin")
    _serve_options(serve)


def _exec_parser(sub: Any) -> None:
    run = sub.add_parser(
        "exec",
        help="run a command against a fresh emulator, then stop it",
        description="Starts the emulator (serve options; default port: a free one), waits "
        "until it answers, runs CMD with SVC_SANDBOX_URL, SVC_BASE_URL, the seeded tokens "
        "and the webhook secret in its environment, stops the emulator and exits with CMD's "
        "status.",
        usage="svc-sandbox exec [serve options] -- CMD [ARG ...]",
    )
    _serve_options(run, port_help="listen port (default: a free one, as 0 picks)")
    run.add_argument(
        "command_line",
        nargs=argparse.REMAINDER,
        metavar="-- CMD [ARG ...]",
        help="the command to run, after --",
    )


def _serve_options(
    serve: argparse.ArgumentParser,
    port_help: str = "listen port (default 8700; 0 picks a free one)",
) -> None:
    serve.add_argument("--host", help="listen address (default 127.0.0.1)")
    serve.add_argument("--port", type=whole_number, help=port_help)
    serve.add_argument("--public-url", help="origin the URLs are built on")
    for root in ROOT_DEFAULTS:
        serve.add_argument("--" + root.replace("_", "-"), dest=root, help=f"override {{{root}}}")
    serve.add_argument(
        "--seed", type=whole_number, help="seed of every id, token and secret (default 1)"
    )
    serve.add_argument(
        "--clock",
        dest="clock_mode",
        choices=[m.value for m in ClockMode],
        help="real (default: the wall clock), frozen (moves only when told, at --clock-start) "
        "or scaled (--clock-factor times real time, from --clock-start)",
    )
    serve.add_argument("--clock-factor", type=number, help="speed of a scaled clock")
    serve.add_argument("--clock-start", help="start instant of a frozen or scaled clock")
    serve.add_argument("--threads", type=whole_number, help="worker threads (default 8)")
    serve.add_argument(
        "--connection-limit",
        type=whole_number,
        help="open connections served at once (default 500)",
    )
    serve.add_argument(
        "--channel-timeout", type=number, help="seconds an idle connection stays open (default 30)"
    )
    serve.add_argument(
        "--allow-remote-control",
        action="store_true",
        default=None,
        help="answer /_sandbox from other machines too (default: this machine only)",
    )
    serve.add_argument(
        "--allowed-hosts",
        help="extra Host names served, comma-separated (loopback names and --public-url's "
        "host always are; * serves any)",
    )
    serve.add_argument(
        "--tick-seconds", type=number, help="how often a real or scaled clock runs due work"
    )
    serve.add_argument(
        "--no-credentials-status",
        type=whole_number,
        choices=[401, 403],
        help="status of a commerce request with no credentials at all (default 403)",
    )
    serve.add_argument("--webhook-url", help="webhook endpoint of the default organizations")
    serve.add_argument("--webhook-secret", help="its signing secret (default: generated)")
    serve.add_argument(
        "--webhook-timeout-seconds", type=number, help="receiver answer timeout (default 10)"
    )
    serve.add_argument("--webhook-retries", help="retry waits (default 1m,5m,30m,2h,12h)")
    serve.add_argument(
        "--webhook-senders",
        type=whole_number,
        help="receivers a real or scaled clock delivers to at once, one attempt at a time "
        "each (default 8; 1: one attempt at a time in all)",
    )
    serve.add_argument(
        "--events-kept",
        type=whole_number,
        help="newest events the event log keeps (default 100000)",
    )
    serve.add_argument(
        "--deliveries-kept",
        type=whole_number,
        help="settled webhook deliveries kept (default 100000)",
    )
    serve.add_argument(
        "--webhook-attempts-kept",
        type=whole_number,
        help="webhook attempts journaled (default 10000)",
    )
    serve.add_argument(
        "--identity-expired-kept-hours",
        type=whole_number,
        help="hours an expired identity code, token or sign-in is kept (default 24)",
    )
    serve.add_argument(
        "--strict",
        action="store_true",
        default=None,
        help=(
            "validate every commerce, identity and wallet response against its contract"
            " (a violation is a 500)"
        ),
    )
    serve.add_argument(
        "--production-push-outcome",
        choices=PUSH_OUTCOMES,
        help="what a production direct push does by itself: approve (default), a failure "
        "code (never session_expired: a session expires by itself), or none (wait for the "
        "control plane)",
    )
    serve.add_argument(
        "--production-push-delay",
        dest="production_push_delay_seconds",
        type=number,
        help="seconds before a production push takes its default outcome (default 10)",
    )
    serve.add_argument(
        "--provider-check-interval",
        dest="provider_check_interval_seconds",
        type=number,
        help="a status poll checks the payment provider at most once per this many seconds "
        "per session (default 5)",
    )
    serve.add_argument(
        "--triggers",
        dest="triggers_file",
        help="YAML or JSON file of custom trigger phones (docs/control-plane.md, Triggers)",
    )
    serve.add_argument("--withdrawal-fee-rate", help="default withdrawal fee, a fraction (0.07)")
    serve.add_argument("--withdrawal-tax-rate", help="withdrawal tax rate, a fraction (0.15)")
    serve.add_argument("--withdrawal-tax-base", choices=["fee", "amount"], help="what is taxed")
    serve.add_argument(
        "--withdrawal-rounding",
        choices=["half_up", "half_even"],
        help="how a half santim rounds (default half_up)",
    )
    serve.add_argument("--payout-pending-seconds", type=number, help="pending -> processing")
    serve.add_argument("--payout-processing-seconds", type=number, help="processing -> completed")
    serve.add_argument(
        "--idempotency-retention-hours",
        type=number,
        help="hours a withdrawal Idempotency-Key is kept; 0 (default): as long as its withdrawal",
    )
    serve.add_argument(
        "--withdrawal-key-reuse",
        choices=["replay", "reject"],
        help="a withdrawal Idempotency-Key repeated with another body: replay (default) or reject",
    )
    serve.add_argument(
        "--wallet-key-reuse",
        choices=["replay", "reject"],
        help="a wallet idempotencyKey repeated with another body: replay (default) or reject",
    )
    serve.add_argument(
        "--wallet-key-org",
        choices=["owner", "any"],
        help="whose API token X-Svc-Key accepts: the app owner's (default) or any",
    )
    wallet_disconnect = serve.add_mutually_exclusive_group()
    wallet_disconnect.add_argument(
        "--wallet-refuse-disconnected",
        dest="wallet_refuse_disconnected",
        action="store_true",
        default=None,
        help="refuse wallet access tokens of apps the user disconnected (default: accept)",
    )
    wallet_disconnect.add_argument(
        "--no-wallet-refuse-disconnected",
        dest="wallet_refuse_disconnected",
        action="store_false",
        help="accept them until they expire (spec section 5.6)",
    )
    serve.add_argument(
        "--wallet-seed-minor", type=whole_number, help="santim of each seeded wallet"
    )
    serve.add_argument("--claims-namespace", help="URI prefix of custom claims ({auth_url}/claims)")
    serve.add_argument(
        "--identity-rate-limit-key",
        choices=["client", "ip"],
        help="identity limits of spec 8 count per client (default) or per IP",
    )
    serve.add_argument(
        "--app-kyc",
        choices=["require", "skip"],
        help="registering an OAuth app requires approved organization KYC (default require)",
    )
    serve.add_argument(
        "--state", dest="state_file", metavar="FILE", help="import this state export at start"
    )
    serve.add_argument(
        "--export-on-exit", metavar="FILE", help="write the state export here when stopping"
    )
    serve.add_argument(
        "--state-references",
        choices=["check", "skip"],
        help="an import naming a record it does not hold: refused with 400 (check, default) "
        "or taken as it is (skip)",
    )
    serve.add_argument(
        "--max-state-bytes", type=whole_number, help="body limit of PUT /_sandbox/state (512 MiB)"
    )
    limits = serve.add_mutually_exclusive_group()
    limits.add_argument(
        "--rate-limits",
        dest="rate_limits",
        action="store_true",
        default=None,
        help="enforce the limits of spec section 8 on the sandbox clock (default)",
    )
    limits.add_argument(
        "--no-rate-limits", dest="rate_limits", action="store_false", help="switch them off"
    )


def _contract_parsers(sub: Any) -> None:
    contract = sub.add_parser("contract", help="the OpenAPI contract")
    actions = contract.add_subparsers(dest="contract_command", required=True, help="show or test")
    test = actions.add_parser(
        "test", help="run the schemathesis checks of the contract against a server over HTTP"
    )
    test.add_argument(
        "--base-url",
        type=http_url,
        required=True,
        help="root of the contract on the server under test ({base_url}, {auth_url} or "
        "{wallet_base_url})",
    )
    test.add_argument(
        "--contract",
        choices=list(BY_NAME),
        default="commerce",
        help="which contract (default commerce)",
    )
    test.add_argument(
        "--token",
        help="API token (default: env SVC_TOKEN): commerce's bearer, the wallet's X-Svc-Key",
    )
    test.add_argument(
        "--access-token",
        help="an access token of the identity provider (default: env SVC_ACCESS_TOKEN): the "
        "wallet's bearer (a JWT for {resource_url}), identity's bearer for userinfo",
    )
    test.add_argument(
        "--client-id", help="identity: an app's client id (default: env SVC_CLIENT_ID)"
    )
    test.add_argument(
        "--client-secret", help="identity: its client secret (default: env SVC_CLIENT_SECRET)"
    )
    test.add_argument(
        "--own-server-url",
        help="what the contract's path-level server '/' stands for on the server under test "
        "(the emulator: its origin): tests the operations served under their own root, such "
        "as commerce's payAttempt under {pay_url}; without it they are left out (NOT TESTED)",
    )
    test.add_argument(
        "--max-examples", type=positive_int, default=25, help="examples per operation"
    )
    test.add_argument("--seed", type=whole_number, default=1, help="generation seed (default 1)")
    test.add_argument("--no-stateful", dest="stateful", action="store_false", default=True)
    test.add_argument(
        "--skip-operation",
        action="append",
        default=[],
        metavar="OPERATION_ID",
        help="leave an operation out (repeatable)",
    )
    test.add_argument("--json", action="store_true", help="print the findings as JSON")
    show = actions.add_parser("show", help="print a contract as shipped (YAML)")
    show.add_argument(
        "--contract", choices=list(BY_NAME), default="commerce", help="which contract"
    )

    report = sub.add_parser(
        "conformance", help="the conformance report of a running emulator's clients"
    )
    report.add_argument(
        "--url", type=http_url, default=emulator_url_default(), help=EMULATOR_URL_HELP
    )
    report.add_argument(
        "--contract",
        choices=list(BY_NAME),
        default="commerce",
        help="which contract",
    )
    report.add_argument(
        "--format", choices=FORMATS, default="text", help="report format (default text)"
    )
    report.add_argument("--output", help="write the report to this file")
    report.add_argument(
        "--fail-on-violation", action="store_true", help="exit 1 when a violation is recorded"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="svc-sandbox",
        description="A local emulator of the payments service (commerce API, hosted pages, "
        "identity provider, wallet API, signed webhooks) behind a clock you control, and its "
        "contract, scenario and tool-server commands.",
    )
    parser.add_argument("--version", action="version", version=f"svc-sandbox {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    _exec_parser(sub)
    _contract_parsers(sub)
    scenario_commands.add_parsers(sub)
    sub.add_parser(
        "mcp",
        help="the agent tool server (Model Context Protocol); see svc-sandbox mcp --help",
        add_help=False,
    )
    _own_refusals(parser)
    return parser


def _own_refusals(parser: argparse.ArgumentParser) -> None:
    """Each command's parser notes itself in the arguments it parses, so that an unknown
    option is refused with that command's usage (``svc-sandbox exec --bogus`` printed the
    top-level usage, which lists commands, not exec's options): ``main`` parses with
    ``parse_known_args`` and lets the deepest command's parser say what it did not know."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                command.set_defaults(command_parser=command)
                _own_refusals(command)


def parse_command_line(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        refuser: argparse.ArgumentParser = getattr(args, "command_parser", parser)
        refuser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def contract_command(args: argparse.Namespace) -> int:
    if args.contract_command == "show":
        from svc_sandbox.contract.document import contract_text

        print(contract_text(BY_NAME[args.contract]), end="")
        return 0
    try:
        from svc_sandbox.contract.harness import run_contract_test
    except ImportError:  # pragma: no cover - schemathesis is an optional dependency
        print("svc-sandbox: contract test needs schemathesis (pip install svc-sandbox[test])")
        return 2
    if not reachable(args.base_url):
        print(f"svc-sandbox: cannot reach {args.base_url}", file=sys.stderr)
        return 2
    try:
        token = args.token or os.environ.get("SVC_TOKEN")
        schemes = contract_schemes(args, token)
        problem = contract_test_problem(args, token, schemes)
        if problem:
            print(f"svc-sandbox: {problem}", file=sys.stderr)
            return 2
        result = run_contract_test(
            args.base_url,
            token=token,
            contract=BY_NAME[args.contract],
            schemes=schemes,
            max_examples=args.max_examples,
            seed=args.seed,
            stateful=args.stateful,
            skip_operations=tuple(args.skip_operation),
            own_server_url=args.own_server_url,
        )
    except Exception as exc:  # the server or the schema could not be loaded: say so
        print(f"svc-sandbox: contract test could not run: {exc}", file=sys.stderr)
        return 2
    if args.json:
        findings = [f.to_json() for f in result.findings]
        print(
            json.dumps(
                {
                    "ok": result.ok,
                    "findings": findings,
                    "errors": result.errors,
                    "notTested": result.not_tested,
                }
            )
        )
    else:
        print(result.summary())
    return 0 if result.ok else 1


def contract_test_problem(
    args: argparse.Namespace, token: str | None, schemes: dict[str, Any] | None
) -> str | None:
    """Why ``contract test`` would pass without testing anything, or None. A call refused
    for its credentials is a 401, which positive_data_acceptance accepts: a run whose token
    is missing or refused would be green on 401s alone (a CI secret left unset)."""
    from svc_sandbox.contract.validation import shipped_contract

    known = {op.operation_id for op in shipped_contract(BY_NAME[args.contract]).operations}
    unknown = [name for name in args.skip_operation if name not in known]
    if unknown:
        return (
            f"--skip-operation {unknown[0]}: the {args.contract} contract has no such "
            f"operation (its operationIds: {', '.join(sorted(known))})"
        )
    if args.contract == "wallet" and len(schemes or {}) < 2:
        return (
            "the wallet contract needs both factors: --access-token (or env "
            "SVC_ACCESS_TOKEN) and --token (or env SVC_TOKEN, the X-Svc-Key)"
        )
    if args.contract == "commerce":
        if not token:
            return "the commerce contract needs --token (or env SVC_TOKEN): a sandbox API token"
        if answer_status(args.base_url.rstrip("/") + "/products?limit=1", token) == 401:
            return f"{args.base_url} refused --token (401 on GET /products): give a valid token"
    return None


def answer_status(url: str, token: str | None = None) -> int | None:
    """The status ``url`` answers a GET (with this bearer token, if any); None without an
    answer."""
    import urllib.error  # not at start-up: `serve` never needs it
    import urllib.request

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


def contract_schemes(
    args: argparse.Namespace, token: str | None
) -> dict[str, dict[str, str]] | None:
    """Credentials by the security scheme names of the chosen contract (None for commerce,
    whose one scheme takes ``token``)."""
    access = args.access_token or os.environ.get("SVC_ACCESS_TOKEN")
    schemes: dict[str, dict[str, str]] = {}
    if args.contract == "wallet":
        if access:
            schemes["accessToken"] = {"bearer": access}
        if token:
            schemes["svcKey"] = {"api_key": token}
    elif args.contract == "identity":
        if access:
            schemes["bearer"] = {"bearer": access}
        client_id = args.client_id or os.environ.get("SVC_CLIENT_ID")
        secret = args.client_secret or os.environ.get("SVC_CLIENT_SECRET")
        if client_id and secret:
            schemes["clientBasic"] = {"username": client_id, "password": secret}
    else:
        return None
    return schemes


def reachable(url: str) -> bool:
    """Whether anything answers HTTP at ``url`` (an error status counts as an answer)."""
    return answer_status(url) is not None


def conformance_command(args: argparse.Namespace) -> int:
    import urllib.request

    url = args.url.rstrip("/") + "/_sandbox/conformance?contract=" + args.contract
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            report = json.loads(answer.read())
    except (OSError, ValueError) as exc:
        print(f"svc-sandbox: cannot read {url}: {exc}", file=sys.stderr)
        return 2
    text = render(report, args.format)
    if args.output:
        from svc_sandbox.outputs import cannot_write, write_file

        try:
            write_file(args.output, text + "\n")
        except OSError as exc:
            print(cannot_write(args.output, exc), file=sys.stderr)
            return 2
    else:
        print(text)
    violations = report["summary"]["requestViolations"] + report["summary"]["responseViolations"]
    return 1 if args.fail_on_violation and violations else 0


#: The options of ``serve`` whose name is not their setting's (``--clock`` sets clock_mode);
#: every other option is ``--`` and the setting's name with hyphens. tests/cli/test_serve.py
#: checks this against the parser.
OPTION_NAMES = {
    "clock_mode": "--clock",
    "production_push_delay_seconds": "--production-push-delay",
    "provider_check_interval_seconds": "--provider-check-interval",
    "triggers_file": "--triggers",
    "state_file": "--state",
}


def option_of(setting: str) -> str:
    """The ``serve`` option that sets ``setting``."""
    return OPTION_NAMES.get(setting, "--" + setting.replace("_", "-"))


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The settings of ``serve``/``exec``: options over ``SVC_SANDBOX_*`` over defaults. A
    value that does not hold up is a ``ValueError`` naming its option or variable."""
    fields = set(Settings.model_fields)
    overrides = {k: v for k, v in vars(args).items() if k in fields and v is not None}
    try:
        return Settings.load(overrides)
    except ValidationError as exc:
        raise ValueError(refusal(exc, {name: option_of(name) for name in overrides})) from None


def build_serving(settings: Settings) -> tuple[Sandbox, ServerThread] | None:
    """What ``serve`` does before it listens: the Sandbox, the ``--state`` import, the app and
    the bound server; None (said on stderr) when the settings, the state file or the address
    do not hold up. The cyclic garbage collector is paused meanwhile (and while the launcher
    imports this module): start-up makes only objects that live as long as the server
    (modules, classes, contracts, the seeded state), and the collections they triggered walked
    them all again: 13-16% of the wall time to the first answer, 5% of its instructions
    (bench/startup.py). They are frozen as the build ends (``gc.freeze``), so the collector's
    first runs after it do not walk them either; ``warm_up_and_freeze`` later freezes what
    warming up made."""
    if not export_target_usable(settings):
        return None
    with collector_paused(freeze=True):
        from svc_sandbox.app import create_app
        from svc_sandbox.core.errors import SandboxError
        from svc_sandbox.sandbox import Sandbox
        from svc_sandbox.server import LISTEN_ERRORS, ServerThread, cannot_listen

        try:
            sandbox = Sandbox(settings)
        except SandboxError as exc:  # a --triggers file that does not hold up
            print(f"svc-sandbox: invalid settings: {exc.message}", file=sys.stderr)
            return None
        if not import_state(sandbox, settings):
            return None
        app = create_app(sandbox)
        try:
            server = ServerThread(app, settings)
        except LISTEN_ERRORS as exc:
            print(cannot_listen(settings.host, settings.port, exc), file=sys.stderr)
            return None
    return sandbox, server


def serve(settings: Settings) -> int:
    built = build_serving(settings)
    if built is None:
        return 2
    sandbox, server = built

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # The handler and the try come before "Ready": a signal sent as soon as it is read
    # still stops cleanly (and writes --export-on-exit).
    signal.signal(signal.SIGTERM, stop)
    try:
        sandbox.start_background()
        server.start()  # before "Ready": a signal sent once it is read finds the loop running
        # Ready first; then the validators and the signing key, off the start-up path.
        threading.Thread(target=warm_up_and_freeze, args=(sandbox,), daemon=True).start()
        print(banner(sandbox.info(), usable_origins(settings)), flush=True)
        if settings.allow_remote_control and not is_loopback(settings.host):
            print(
                "WARNING: --allow-remote-control: anyone who can reach this machine can reset "
                "the state, read every token and approve payments through /_sandbox",
                file=sys.stderr,
                flush=True,
            )
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        # A second Ctrl-C or SIGTERM while stopping (the attempt out may take its timeout)
        # must not cut the steps below with a traceback, and the export unwritten.
        signal.signal(signal.SIGTERM, already_stopping)
        signal.signal(signal.SIGINT, already_stopping)
        # The sandbox first: a request sending webhooks (an advance) ends after the attempt it
        # is sending; then the server stops taking requests and lets the running ones answer.
        sandbox.stop()
        server.close()
        exported = export_state(sandbox, settings)
        print("svc-sandbox stopped", flush=True)
    return 0 if exported else 1


def already_stopping(signum: int, frame: object) -> None:
    print(
        "svc-sandbox: stopping already: the attempts out end by their timeout, then "
        "--export-on-exit is written",
        file=sys.stderr,
        flush=True,
    )


def warm_up_and_freeze(sandbox: Sandbox) -> None:
    """Builds what the first requests would (``Sandbox.warm_up``), then moves every object
    alive so far (modules, contracts, validators: they live as long as the server) out of the
    cyclic collector's reach: its full collections, which stop every thread, then walk only
    what requests made (15 s of wrk POSTs, 3 pairs of runs: the longest pause 22-55 ms
    against 68-76 ms without, p99 12 ms against 15-21 ms)."""
    sandbox.warm_up()
    gc.freeze()


def import_state(sandbox: Sandbox, settings: Settings) -> bool:
    """``--state FILE``: imports the export before anything is served; False (said on stderr)
    when the file cannot be read or does not hold up."""
    from svc_sandbox.core.errors import SandboxError

    if not settings.state_file:
        return True
    try:
        sandbox.import_file(settings.state_file)
    except (OSError, SandboxError) as exc:
        print(f"svc-sandbox: cannot import {settings.state_file}: {exc}", file=sys.stderr)
        return False
    return True


def export_target_usable(settings: Settings) -> bool:
    """``--export-on-exit FILE`` checked at start: False (said on stderr) when the file
    could not be written, so the server (or exec's command) does not run for nothing."""
    from svc_sandbox.outputs import cannot_write, why_unwritable

    if not settings.export_on_exit:
        return True
    problem = why_unwritable(settings.export_on_exit)
    if problem is not None:
        print(cannot_write(settings.export_on_exit, problem), file=sys.stderr)
        return False
    return True


def export_state(sandbox: Sandbox, settings: Settings) -> bool:
    """``--export-on-exit FILE``: writes the export once the server has stopped (its missing
    folders made); False (said on stderr) when it cannot be written."""
    from svc_sandbox.outputs import cannot_write

    if not settings.export_on_exit:
        return True
    try:
        sandbox.export_file(settings.export_on_exit)
    except OSError as exc:
        print(cannot_write(settings.export_on_exit, exc), file=sys.stderr, flush=True)
        return False
    print(f"state exported to {settings.export_on_exit}", flush=True)
    return True


def banner(info: dict[str, Any], origins: Sequence[str] = ()) -> str:
    lines = [f"svc-sandbox {info['version']} (seed {info['seed']}, clock {info['clock']['mode']})"]
    lines += [f"  {name:<17} {url}" for name, url in info["roots"].items()]
    if len(origins) > 1:
        lines.append("Also reachable at " + ", ".join(origins[1:]))
        lines.append("  (pass --public-url so the URLs the API hands out use one of these)")
    lines.append(f"Dashboard: {info['dashboard']}")
    lines.append("Organizations:")
    for org in info["organizations"]:
        tokens = ", ".join(t["token"] for t in org["tokens"] if t["usable"])
        lines.append(f"  {org['name']} [{org['environment']}] {org['id']}  token: {tokens}")
    identity = info.get("identity")
    if identity:
        lines.append(f"Identity provider: {identity['issuer']}  (sign in as:)")
        lines += [f"  {u['handle']}  password: {u['password']}" for u in identity["users"]]
        for app in identity["apps"]:
            secret = f"  secret: {app['clientSecret']}" if app.get("clientSecret") else ""
            lines.append(f"  app {app['name']!r} client_id: {app['clientId']}{secret}")
    webhooks = info["webhooks"]
    if webhooks["url"]:
        lines.append(f"Webhooks: {webhooks['url']}  secret: {webhooks['secret']}")
    lines.append("Ready. Ctrl-C stops.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    if given[:1] == ["mcp"]:  # its own options (svc_sandbox/mcp/config.py)
        from svc_sandbox.mcp.command import main as mcp_main

        return mcp_main(given[1:])
    args = parse_command_line(argv)
    if args.command in ("serve", "exec"):
        for line in Settings.unknown_env_names():
            print(line, file=sys.stderr)
    if args.command == "serve":
        try:
            settings = settings_from_args(args)
        except ValueError as exc:
            print(f"svc-sandbox: invalid settings: {exc}", file=sys.stderr)
            return 2
        return serve(settings)
    if args.command == "exec":
        from svc_sandbox.exec import exec_command

        return exec_command(args)
    if args.command == "contract":
        return contract_command(args)
    if args.command == "conformance":
        return conformance_command(args)
    if args.command == "run":
        return scenario_commands.run_command(args)
    if args.command == "record":
        return scenario_commands.record_command(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
