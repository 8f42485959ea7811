"""POST {auth_url}/oauth2/token under `svc-sandbox serve` (waitress, 8 threads) with 8
concurrent keep-alive clients, against the bare Flask endpoint of bench/_bare_flask.py served
the same way in the same run; and the cost of one RS256 signature, in process.

    .venv/bin/python bench/token_endpoint.py [--requests 100]

Phases (each client sends --requests token requests):
* code exchange, opaque access token (one signature: the ID token);
* code exchange with resource = {resource_url} (two signatures: JWT access token + ID token);
* refresh, each client rotating its own refresh token (one signature).
Codes are made beforehand through POST /_sandbox/identity/authorize (not timed). Rate limits
are off (--no-rate-limits): 20 token requests per minute would otherwise be the thing
measured. Signing: the mean time of KeyService.sign over an ID token's claims, as a ratio to
the mean latency of one bare Flask request measured above.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from checkout_throughput import run_clients
from checkout_throughput import start as start_server

CLIENTS = 8
VERIFIER = "bench-" + "v" * 60
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=")
BARE = Path(__file__).with_name("_bare_flask.py")


def start(command: list[str]) -> tuple[subprocess.Popen[str], int]:
    return start_server(command, ready=r"http://127\.0\.0\.1:(\d+)/")


def call(
    conn: http.client.HTTPConnection,
    method: str,
    path: str,
    body: str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    if response.status not in (200, 201):
        raise RuntimeError(f"{method} {path} -> {response.status} {data[:200]!r}")
    return json.loads(data) if data else None


def load(port: int, bodies: list[list[str]], path: str, chain: bool = False) -> dict[str, float]:
    """Each client posts its bodies; with ``chain`` each body is a refresh token template."""
    form = {"Content-Type": "application/x-www-form-urlencoded"}

    def client(mine: list[str]) -> Callable[[http.client.HTTPConnection], list[float]]:
        def posts(conn: http.client.HTTPConnection) -> list[float]:
            times = []
            refresh = mine[0] if mine else ""
            for body in mine:  # bounded by the list
                if chain:
                    body = refresh
                t0 = time.perf_counter()
                answer = call(conn, "POST", path, body, form)
                times.append(time.perf_counter() - t0)
                if chain and answer and "refresh_token" in answer:
                    refresh = re.sub(r"refresh_token=[^&]*", "", body) + urlencode(
                        {"refresh_token": answer["refresh_token"]}
                    )
            return times

        return posts

    return run_clients(port, [client(b) for b in bodies])


def codes(conn: http.client.HTTPConnection, info: dict[str, Any], count: int) -> list[str]:
    identity = info["identity"]
    app = next(a for a in identity["apps"] if a["clientType"] == "confidential")
    user = identity["users"][0]["id"]
    params = {
        "response_type": "code",
        "client_id": app["clientId"],
        "redirect_uri": app["redirectUris"][0],
        "scope": "openid profile email offline_access wallet:read",
        "state": "bench",
        "code_challenge": CHALLENGE.decode(),
        "code_challenge_method": "S256",
    }
    found = []
    for _ in range(count):  # bounded
        body = json.dumps({"userId": user, "params": params})
        answer = call(
            conn,
            "POST",
            "/_sandbox/identity/authorize",
            body,
            {"Content-Type": "application/json"},
        )
        found.append(parse_qs(urlsplit(answer["redirectUrl"]).query)["code"][0])
    return found


def exchange_body(app: dict[str, Any], code: str, resource: str | None) -> str:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": app["redirectUris"][0],
        "code_verifier": VERIFIER,
        "client_id": app["clientId"],
        "client_secret": app["clientSecret"],
    }
    if resource:
        form["resource"] = resource
    return urlencode(form)


def signing_ms(rounds: int) -> float:
    from svc_sandbox.sandbox import Sandbox

    sandbox = Sandbox(clock_mode="frozen")
    claims = {
        "iss": sandbox.settings.issuer,
        "sub": "0" * 24,
        "aud": "1" * 24,
        "iat": 1,
        "exp": 2,
        "name": "Abebe Kebede",
        "email": "abebe@users.sandbox.test",
    }
    sandbox.signing_keys.sign(claims, typ="JWT")  # builds the key
    t0 = time.perf_counter()
    for _ in range(rounds):  # bounded
        sandbox.signing_keys.sign(claims, typ="JWT")
    return (time.perf_counter() - t0) / rounds * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=100, help="requests per client per phase")
    args = parser.parse_args()
    per_client = max(2, min(args.requests, 2000))
    serve = [sys.executable, "-m", "svc_sandbox", "serve", "--port", "0", "--clock", "frozen"]
    sandbox, port = start([*serve, "--no-rate-limits"])
    bare, bare_port = start([sys.executable, str(BARE)])
    results: dict[str, dict[str, dict[str, float]]] = {}
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        info = call(conn, "GET", "/_sandbox")
        app = next(a for a in info["identity"]["apps"] if a["clientType"] == "confidential")
        resource = info["identity"]["resource"]
        total = CLIENTS * per_client
        made = codes(conn, info, 2 * total + CLIENTS)
        opaque = [exchange_body(app, c, None) for c in made[:total]]
        bound = [exchange_body(app, c, resource) for c in made[total : 2 * total]]
        chains = []
        for code in made[2 * total :]:
            first = call(
                conn,
                "POST",
                "/auth/oauth2/token",
                exchange_body(app, code, None),
                {"Content-Type": "application/x-www-form-urlencoded"},
            )
            body = urlencode(
                {
                    "grant_type": "refresh_token",
                    "client_id": app["clientId"],
                    "client_secret": app["clientSecret"],
                }
            )
            chains.append([f"{body}&{urlencode({'refresh_token': first['refresh_token']})}"])
        conn.close()

        def split(bodies: list[str]) -> list[list[str]]:
            return [bodies[i * per_client : (i + 1) * per_client] for i in range(CLIENTS)]

        ping = split(["x=1"] * total)
        load(bare_port, ping, "/ping")  # warm-up, bounded
        phases = {
            "code exchange (opaque)": (split(opaque), False),
            "code exchange (resource)": (split(bound), False),
            "refresh": ([c * per_client for c in chains], True),
        }
        for name, (bodies, chain) in phases.items():
            results[name] = {
                "bare": load(bare_port, ping, "/ping"),
                "sandbox": load(port, bodies, "/auth/oauth2/token", chain),
            }
    finally:
        for proc in (sandbox, bare):
            proc.terminate()
            proc.wait(timeout=10)

    print(f"{CLIENTS} clients x {per_client} token requests per phase, waitress 8 threads")
    print(f"{'phase':<26} {'server':<8} {'req/s':>8} {'mean ms':>8} {'p99 ms':>8}")
    bare_means = []
    for name, pair in results.items():
        for server, figures in pair.items():
            rps, mean, p99 = figures["rps"], figures["mean_ms"], figures["p99_ms"]
            print(f"{name:<26} {server:<8} {rps:>8.0f} {mean:>8.2f} {p99:>8.2f}")
        bare_means.append(pair["bare"]["mean_ms"])
        ratio = pair["sandbox"]["rps"] / pair["bare"]["rps"]
        print(f"{name:<26} ratio    throughput {ratio:.2f}x of bare")
    sign = signing_ms(200)
    bare_mean = statistics.fmean(bare_means)
    print(
        f"RS256 signature (2048-bit, in process): {sign:.2f} ms = {sign / bare_mean:.2f}x the mean "
        f"latency of one bare Flask request ({bare_mean:.2f} ms under {CLIENTS} clients)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
