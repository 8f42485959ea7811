"""The ``svc-sandbox`` command."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from typing import Any

from svc_sandbox import __version__
from svc_sandbox.core.clock import ClockMode
from svc_sandbox.settings import ROOT_DEFAULTS, Settings


def _serve_parser(sub: Any) -> None:
    serve = sub.add_parser("serve", help="serve every root of the spec on one origin")
    serve.add_argument("--host", help="listen address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="listen port (default 8700; 0 picks a free one)")
    serve.add_argument("--public-url", help="origin the URLs are built on")
    for root in ROOT_DEFAULTS:
        serve.add_argument("--" + root.replace("_", "-"), dest=root, help=f"override {{{root}}}")
    serve.add_argument("--seed", type=int, help="seed of every id, token and secret (default 1)")
    serve.add_argument("--clock", dest="clock_mode", choices=[m.value for m in ClockMode])
    serve.add_argument("--clock-factor", type=float, help="speed of a scaled clock")
    serve.add_argument("--clock-start", help="start instant of a frozen or scaled clock")
    serve.add_argument("--threads", type=int, help="worker threads (default 8)")
    serve.add_argument("--webhook-url", help="webhook endpoint of the default organizations")
    serve.add_argument("--webhook-secret", help="its signing secret (default: generated)")
    serve.add_argument(
        "--webhook-timeout-seconds", type=float, help="receiver answer timeout (default 10)"
    )
    serve.add_argument("--webhook-retries", help="retry waits (default 1m,5m,30m,2h,12h)")
    serve.add_argument(
        "--production-push-outcome",
        help="what a production direct push does by itself: approve (default), a failure "
        "code, or none (wait for the control plane)",
    )
    serve.add_argument(
        "--production-push-delay",
        dest="production_push_delay_seconds",
        type=float,
        help="seconds before a production push takes its default outcome (default 10)",
    )
    serve.add_argument("--withdrawal-fee-rate", help="default withdrawal fee, a fraction (0.07)")
    serve.add_argument("--withdrawal-tax-rate", help="withdrawal tax rate, a fraction (0.15)")
    serve.add_argument("--withdrawal-tax-base", choices=["fee", "amount"], help="what is taxed")
    serve.add_argument("--withdrawal-rounding", choices=["half_up", "half_even"])
    serve.add_argument("--payout-pending-seconds", type=float, help="pending -> processing")
    serve.add_argument("--payout-processing-seconds", type=float, help="processing -> completed")
    serve.add_argument("--idempotency-retention-hours", type=float, help="default 24")
    limits = serve.add_mutually_exclusive_group()
    limits.add_argument("--rate-limits", dest="rate_limits", action="store_true", default=None)
    limits.add_argument("--no-rate-limits", dest="rate_limits", action="store_false")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="svc-sandbox", description=__doc__)
    parser.add_argument("--version", action="version", version=f"svc-sandbox {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    return parser


def settings_from_args(args: argparse.Namespace) -> Settings:
    fields = set(Settings.model_fields)
    overrides = {k: v for k, v in vars(args).items() if k in fields and v is not None}
    return Settings.load(overrides)


def serve(settings: Settings) -> int:
    from waitress.server import create_server

    from svc_sandbox.app import create_app
    from svc_sandbox.sandbox import Sandbox

    sandbox = Sandbox(settings)
    app = create_app(sandbox)
    server = create_server(app, host=settings.host, port=settings.port, threads=settings.threads)
    if settings.port == 0:
        settings.port = int(server.effective_port)  # type: ignore[union-attr]
    print(banner(sandbox.info()), flush=True)
    sandbox.start_background()

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        sandbox.stop()
        server.close()
        print("svc-sandbox stopped", flush=True)
    return 0


def banner(info: dict[str, Any]) -> str:
    lines = [f"svc-sandbox {info['version']} (seed {info['seed']}, clock {info['clock']['mode']})"]
    lines += [f"  {name:<17} {url}" for name, url in info["roots"].items()]
    lines.append("Organizations:")
    for org in info["organizations"]:
        tokens = ", ".join(t["token"] for t in org["tokens"] if not t["revoked"])
        lines.append(f"  {org['name']} [{org['environment']}] {org['id']}  token: {tokens}")
    webhooks = info["webhooks"]
    if webhooks["url"]:
        lines.append(f"Webhooks: {webhooks['url']}  secret: {webhooks['secret']}")
    lines.append("Ready. Ctrl-C stops.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        try:
            settings = settings_from_args(args)
        except ValueError as exc:
            print(f"svc-sandbox: invalid settings: {exc}", file=sys.stderr)
            return 2
        return serve(settings)
    return 2


if __name__ == "__main__":
    sys.exit(main())
