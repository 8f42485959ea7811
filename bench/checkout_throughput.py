"""POST /checkout and GET /checkout/{id} under `svc-sandbox serve` (waitress, 8 threads) with
8 concurrent keep-alive clients, against a bare Flask endpoint served the same way in the same
run. Reports requests per second and p99 latency, and the ratios sandbox / bare.

    .venv/bin/python bench/checkout_throughput.py [--requests 200]

Both servers run as subprocesses (so the clients do not share their interpreter). Rate
limits are switched off (--no-rate-limits): the bucket of 200 + 20/s would otherwise be the
thing measured. Every load loop is bounded by --requests per client.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

CLIENTS = 8
BODY = json.dumps({"amount": 500, "description": "bench"})


def bare_server(work_us: int = 0) -> None:
    """The baseline: the smallest Flask app doing the same JSON work on the same two routes
    (parse the JSON body; answer a body of the same shape as svc-sandbox's), on waitress.

    ``work_us`` > 0 makes a calibration app: the same app spending that many microseconds of
    CPU in pure Python on every request, which shows what a given amount of extra work per
    request does to the ratios under this server and thread count."""
    from flask import Flask, jsonify, request
    from waitress.server import create_server

    app = Flask("bare")

    if work_us > 0:

        @app.before_request
        def work() -> None:
            started = time.thread_time_ns()
            while time.thread_time_ns() - started < work_us * 1000:
                pass

    @app.post("/api/checkout")
    def create() -> Any:
        body = request.get_json()
        return jsonify(
            {
                "sessionId": "0" * 24,
                "checkoutUrl": f"http://127.0.0.1:8700/pay/cs_{'0' * 24}",
                "mode": "redirect" if body else "push",
            }
        )

    @app.get("/api/checkout/<session_id>")
    def status(session_id: str) -> Any:
        return jsonify(
            {
                "sessionId": session_id,
                "status": "open",
                "expiresAt": "2026-01-01T00:30:00.000Z",
                "amount": 500,
                "currency": "ETB",
                "orderId": None,
                "orderStatus": None,
                "failure": None,
                "attempt": {"inFlight": False, "lastFailure": None},
            }
        )

    server = create_server(app, host="127.0.0.1", port=0, threads=8)
    print(f"base_url http://127.0.0.1:{server.effective_port}/api", flush=True)  # type: ignore[union-attr]
    server.run()


def start(
    command: list[str], ready: str = r"base_url\s+http://127\.0\.0\.1:(\d+)/api"
) -> tuple[subprocess.Popen[str], int]:
    """Starts a server and waits for the line matching ``ready`` (its group 1 is the port)."""
    # waitress logs "Task queue depth" warnings on stderr under load: not part of the report.
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        match = re.search(ready, line)
        if match:
            return proc, int(match.group(1))
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"server did not start: {command}")


def request(
    conn: http.client.HTTPConnection,
    method: str,
    path: str,
    headers: dict[str, str],
    body: str | None,
) -> bytes:
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    if not 200 <= response.status < 300:
        raise RuntimeError(f"{method} {path} -> {response.status} {data[:200]!r}")
    return data


def run_clients(
    port: int, clients: list[Callable[[http.client.HTTPConnection], list[float]]]
) -> dict[str, float]:
    """Runs each client on its own thread and connection (it returns its request latencies);
    the first error is raised. Figures: req/s over the wall time, p50, mean and p99."""
    latencies: list[float] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def run(client: Callable[[http.client.HTTPConnection], list[float]]) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            mine = client(conn)
            with lock:
                latencies.extend(mine)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=run, args=(c,)) for c in clients]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    if errors:
        raise RuntimeError(errors[0])
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000,
        "p99_ms": latencies[max(0, int(len(latencies) * 0.99) - 1)] * 1000,
    }


def load(
    port: int,
    make: Callable[[int, int], tuple[str, str, str | None]],
    headers: dict[str, str],
    per_client: int,
) -> dict[str, float]:
    def client(index: int) -> Callable[[http.client.HTTPConnection], list[float]]:
        def requests(conn: http.client.HTTPConnection) -> list[float]:
            times = []
            for i in range(per_client):  # bounded
                method, path, body = make(index, i)
                t0 = time.perf_counter()
                request(conn, method, path, headers, body)
                times.append(time.perf_counter() - t0)
            return times

        return requests

    return run_clients(port, [client(i) for i in range(CLIENTS)])


def print_report(results: dict[str, dict[str, dict[str, float]]], header: str) -> None:
    """One row per endpoint and server, then the sandbox's ratios against bare Flask."""
    print(header)
    print(f"{'endpoint':<20} {'server':<8} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for name, pair in results.items():
        for server, figures in pair.items():
            rps, p50, p99 = figures["rps"], figures["p50_ms"], figures["p99_ms"]
            print(f"{name:<20} {server:<8} {rps:>9.0f} {p50:>8.2f} {p99:>8.2f}")
        ratio_rps = pair["sandbox"]["rps"] / pair["bare"]["rps"]
        ratio_p99 = pair["sandbox"]["p99_ms"] / pair["bare"]["p99_ms"]
        print(
            f"{name:<20} ratio    throughput {ratio_rps:.2f}x of bare, p99 {ratio_p99:.2f}x of bare"
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200, help="requests per client per phase")
    parser.add_argument("--bare-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--work-us", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        bare_server(args.work_us)
        return 0
    per_client = max(1, min(args.requests, 5000))

    sandbox, sandbox_port = start(
        [
            sys.executable,
            "-m",
            "svc_sandbox",
            "serve",
            "--port",
            "0",
            "--clock",
            "frozen",
            "--no-rate-limits",
        ]
    )
    bare, bare_port = start([sys.executable, __file__, "--bare-server"])
    try:
        conn = http.client.HTTPConnection("127.0.0.1", sandbox_port, timeout=30)
        info = json.loads(request(conn, "GET", "/_sandbox", {}, None))
        token = next(
            o["tokens"][0]["token"] for o in info["organizations"] if o["environment"] == "sandbox"
        )
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        session_id = json.loads(request(conn, "POST", "/api/checkout", headers, BODY))["sessionId"]
        conn.close()

        def post(_: int, __: int) -> tuple[str, str, str | None]:
            return "POST", "/api/checkout", BODY

        def get(_: int, __: int) -> tuple[str, str, str | None]:
            return "GET", f"/api/checkout/{session_id}", None

        results: dict[str, dict[str, dict[str, float]]] = {}
        for name, make in (("POST /checkout", post), ("GET /checkout/{id}", get)):
            load(bare_port, make, headers, 20)  # warm-up, bounded
            load(sandbox_port, make, headers, 20)
            results[name] = {
                "bare": load(bare_port, make, headers, per_client),
                "sandbox": load(sandbox_port, make, headers, per_client),
            }
    finally:
        for proc in (sandbox, bare):
            proc.terminate()
            proc.wait(timeout=10)

    print_report(
        results,
        f"{CLIENTS} clients x {per_client} requests per phase, waitress 8 threads, rate limits off",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
