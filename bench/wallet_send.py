"""POST {wallet_base_url}/send and GET {wallet_base_url} under `svc-sandbox serve` (waitress, 8
threads) with 8 concurrent keep-alive clients, both factors on every call, against a bare
Flask endpoint served the same way in the same run. Reports requests per second and p99
latency, and the ratios sandbox / bare.

    .venv/bin/python bench/wallet_send.py [--requests 200]

Every send has its own idempotency key and moves 100 santim from abebe to tigist (the sender
is funded first; 8 x 5000 sends of 100 stay under the 5,000,000 daily cap). The access token
comes from the served identity provider (the control plane's scripted authorize step and the
token endpoint, PKCE S256, resource = {resource_url}). Loops are bounded by --requests.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
import urllib.parse
from http.client import HTTPConnection
from typing import Any

from checkout_throughput import CLIENTS, load, print_report, request, start

VERIFIER = "bench-verifier-" + "b" * 40


def bare_server() -> None:
    """The baseline: the same two routes answering fixed JSON, served by waitress."""
    from flask import Flask, jsonify
    from waitress.server import create_server

    app = Flask("bare")

    @app.post("/wallet/send")
    def send() -> Any:
        transfer = {"id": "0" * 24, "amountMinor": 100, "currency": "ETB"}
        return jsonify({"transfer": transfer, "deduped": False}), 201

    @app.get("/wallet")
    def balance() -> Any:
        return jsonify({"currency": "ETB", "availableMinor": 1, "totalMinor": 1})

    server = create_server(app, host="127.0.0.1", port=0, threads=8)
    print(f"base_url http://127.0.0.1:{server.effective_port}/api", flush=True)  # type: ignore[union-attr]
    server.run()


def both_factors(port: int) -> dict[str, str]:
    """A wallet access token for abebe and the owner organization's API key, over HTTP."""
    conn = HTTPConnection("127.0.0.1", port, timeout=30)
    info = json.loads(request(conn, "GET", "/_sandbox", {}, None))
    identity = info["identity"]
    app = next(a for a in identity["apps"] if a["clientType"] == "confidential")
    abebe = next(u for u in identity["users"] if u["handle"] == "abebe")
    key = next(o for o in info["organizations"] if o["id"] == app["organizationId"])["tokens"][0]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest())
    params = {
        "response_type": "code",
        "client_id": app["clientId"],
        "redirect_uri": app["redirectUris"][0],
        "scope": "openid wallet:read wallet:send",
        "state": "bench",
        "code_challenge": challenge.rstrip(b"=").decode(),
        "code_challenge_method": "S256",
    }
    json_headers = {"Content-Type": "application/json"}
    decision = json.dumps({"userId": abebe["id"], "params": params, "decision": "approve"})
    code = json.loads(request(conn, "POST", "/_sandbox/identity/authorize", json_headers, decision))
    form = urllib.parse.urlencode(
        {
            "grant_type": "authorization_code",
            "code": code["code"],
            "redirect_uri": app["redirectUris"][0],
            "code_verifier": VERIFIER,
            "client_id": app["clientId"],
            "client_secret": app["clientSecret"],
            "resource": identity["resource"],
        }
    )
    form_headers = {"Content-Type": "application/x-www-form-urlencoded"}
    token = json.loads(request(conn, "POST", "/auth/oauth2/token", form_headers, form))
    fund = json.dumps({"amountMinor": 10**12})
    request(conn, "POST", "/_sandbox/wallets/abebe/fund", json_headers, fund)
    conn.close()
    return {
        "Authorization": f"Bearer {token['access_token']}",
        "X-Svc-Key": key["token"],
        "Content-Type": "application/json",
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200, help="requests per client per phase")
    parser.add_argument("--bare-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        bare_server()
        return 0
    per_client = max(1, min(args.requests, 5000))

    serve = [sys.executable, "-m", "svc_sandbox", "serve", "--port", "0"]
    sandbox, sandbox_port = start([*serve, "--clock", "frozen", "--no-rate-limits"])
    bare, bare_port = start([sys.executable, __file__, "--bare-server"])
    phase = {"n": 0}
    try:
        headers = both_factors(sandbox_port)

        def send(client: int, i: int) -> tuple[str, str, str | None]:
            key = f"bench-{phase['n']}-{client}-{i:06}"
            body = {"recipientHandle": "tigist", "amountMinor": 100, "idempotencyKey": key}
            return "POST", "/wallet/send", json.dumps(body)

        def read(_: int, __: int) -> tuple[str, str, str | None]:
            return "GET", "/wallet", None

        results: dict[str, dict[str, dict[str, float]]] = {}
        for name, make in (("POST /wallet/send", send), ("GET /wallet", read)):
            for port in (bare_port, sandbox_port):  # warm-up, bounded
                phase["n"] += 1
                load(port, make, headers, 20)
            phase["n"] += 1
            bare_figures = load(bare_port, make, headers, per_client)
            phase["n"] += 1
            results[name] = {
                "bare": bare_figures,
                "sandbox": load(sandbox_port, make, headers, per_client),
            }
    finally:
        for proc in (sandbox, bare):
            proc.terminate()
            proc.wait(timeout=10)

    print_report(
        results,
        f"{CLIENTS} clients x {per_client} requests per phase, waitress 8 threads, both factors",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
