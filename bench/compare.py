"""One command: svc-sandbox against a bare Flask app on the same server (waitress, same
threads), and Prism's mock of our contract when ``prism`` or ``npx`` is on PATH; interleaved
rounds of a Python load generator; start-up, memory and the clock-warp scaling curve. Writes
docs/performance.md (and docs/performance.png when matplotlib is installed: the ``bench``
extra). CI does not run it: figures depend on the machine; only the ratios mean anything.

    .venv/bin/python bench/compare.py [--rounds 3] [--requests 150] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import checkout_throughput as load_gen  # noqa: E402
import startup  # noqa: E402
import state_scaling  # noqa: E402
import warp  # noqa: E402

DOCS = HERE.parent / "docs"
PY = sys.executable
SERVE = [PY, "-m", "svc_sandbox", "serve", "--port", "0", "--clock", "frozen"]


CONTROL = "bare Flask, again (control)"
#: Microseconds of pure-Python CPU the calibration app adds to every request of the bare app.
WORK_US = 30
CALIBRATION = f"bare Flask + {WORK_US} µs of work (calibration)"


def servers() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {
        "bare Flask": [PY, str(HERE / "checkout_throughput.py"), "--bare-server"],
        # The same app in a second process: its ratio to the first is the noise floor (an
        # A/A control), measured in the same rounds as everything else.
        CONTROL: [PY, str(HERE / "checkout_throughput.py"), "--bare-server"],
        # What a fixed amount of extra work per request costs in the ratios here: the GIL and
        # waitress's thread hand-offs make it cost more than its own CPU time.
        CALIBRATION: [
            PY,
            str(HERE / "checkout_throughput.py"),
            "--bare-server",
            "--work-us",
            str(WORK_US),
        ],
        "svc-sandbox": [*SERVE, "--no-rate-limits"],
        "svc-sandbox --strict": [*SERVE, "--no-rate-limits", "--strict"],
    }
    prism = prism_command()
    if prism is not None:
        found["Prism mock"] = [PY, str(HERE / "compare.py"), "--prism-server", json.dumps(prism)]
    return found


def prism_server(command: list[str]) -> None:
    """Runs Prism on a free port and prints the line ``load_gen.start`` waits for."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    contract = HERE.parent / "contracts" / "commerce.openapi.yaml"
    prism = subprocess.Popen([*command, "mock", "-h", "127.0.0.1", "-p", str(port), str(contract)])

    def stop(signum: int, frame: object) -> None:
        # The bench terminates this wrapper: pass it on (prism.wait() below then returns).
        prism.terminate()

    signal.signal(signal.SIGTERM, stop)
    for _ in range(600):  # bounded: 60 s
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.1)
    print(f"base_url http://127.0.0.1:{port}/api", flush=True)
    prism.wait()


def prism_command() -> list[str] | None:
    """Prism's CLI when it is installed (``prism``, or ``npx`` with the package already in its
    cache: ``--no-install`` never fetches)."""
    if shutil.which("prism"):
        return ["prism"]
    if shutil.which("npx"):
        probe = ["npx", "--no-install", "@stoplight/prism-cli", "--version"]
        try:
            done = subprocess.run(probe, capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode == 0:
            return probe[:3]
    return None


def prism_note() -> str | None:
    if prism_command() is None:
        return (
            "Prism skipped: no `prism` on PATH and `npx` has no cached @stoplight/prism-cli "
            "(no internet here to fetch it). On a machine with it, this command adds Prism's "
            "mock of contracts/commerce.openapi.yaml as a server."
        )
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU time so far of a process and its descendants (Prism runs under a
    wrapper; CPU time is robust to a loaded machine, unlike req/s)."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stats[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # it ended meanwhile
    tree, total = {pid}, 0.0
    for child in sorted(stats):  # children have higher pids than their parents, mostly:
        if int(stats[child][1]) in tree:  # ppid (field 4) within the tree
            tree.add(child)
    for member in tree & stats.keys():
        total += int(stats[member][11]) + int(stats[member][12])
    return total / os.sysconf("SC_CLK_TCK")


def request_rounds(
    rounds: int, per_client: int, use_wrk: bool
) -> dict[str, dict[str, list[dict[str, float]]]]:
    """Every server up at once; each round loads each server in turn (interleaved), with wrk
    (``WRK_SECONDS`` per phase) or the Python load generator (``per_client`` requests each)."""
    running = {name: load_gen.start(argv) for name, argv in servers().items()}
    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    try:
        port = running["svc-sandbox"][1]
        conn = load_gen.http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        info = json.loads(load_gen.request(conn, "GET", "/_sandbox", {}, None))
        token = next(
            o["tokens"][0]["token"] for o in info["organizations"] if o["environment"] == "sandbox"
        )
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        sessions = {}
        for name, (_, server_port) in running.items():
            # Same seed: every svc-sandbox server has the same token; the bare app ignores it.
            c = load_gen.http.client.HTTPConnection("127.0.0.1", server_port, timeout=30)
            prefix = "" if name == "Prism mock" else "/api"  # Prism serves the bare paths
            created = load_gen.request(c, "POST", prefix + "/checkout", headers, load_gen.BODY)
            session_id = json.loads(created)["sessionId"]
            if name == "Prism mock":  # its example id ("string") breaks the contract's pattern
                session_id = "0" * 24
            sessions[name] = (session_id, headers, prefix)
            c.close()
        conn.close()
        for endpoint in ("POST /checkout", "GET /checkout/{id}"):
            results[endpoint] = {name: [] for name in running}
            for name, (_, server_port) in running.items():  # warm-up, bounded
                sid, h, prefix = sessions[name]
                load_gen.load(server_port, maker(endpoint, sid, prefix), h, 20)
            for _ in range(rounds):
                for name, (proc, server_port) in running.items():
                    sid, h, prefix = sessions[name]
                    before = cpu_seconds(proc.pid)
                    if use_wrk:
                        method, path, body = maker(endpoint, sid, prefix)(0, 0)
                        figures = wrk_load(server_port, method, path, h, body, WRK_SECONDS)
                        requests = figures.pop("requests")
                    else:
                        figures = load_gen.load(
                            server_port, maker(endpoint, sid, prefix), h, per_client
                        )
                        requests = load_gen.CLIENTS * per_client
                    figures["cpu_us"] = (cpu_seconds(proc.pid) - before) / requests * 1e6
                    results[endpoint][name].append(figures)
    finally:
        for proc, _ in running.values():
            proc.terminate()
            proc.wait(timeout=10)
    return results


WRK_SECONDS = 3


def wrk_load(
    port: int, method: str, path: str, headers: dict[str, str], body: str | None, seconds: int
) -> dict[str, float]:
    """One phase with wrk (``load_gen.CLIENTS`` connections, one wrk thread): req/s, p50 and
    p99 in ms, and how many requests completed (for the CPU per request)."""
    import tempfile

    lines = [f"wrk.method = {json.dumps(method)}"]
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    if body is not None:
        lines.append(f"wrk.body = {json.dumps(body)}")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write("\n".join(lines) + "\n")
    try:
        done = subprocess.run(
            [
                "wrk",
                "--latency",
                "-t1",
                f"-c{load_gen.CLIENTS}",
                f"-d{seconds}s",
                "-s",
                script.name,
                f"http://127.0.0.1:{port}{path}",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=seconds + 60,
        )
    finally:
        os.unlink(script.name)
    return parse_wrk(done.stdout)


def parse_wrk(output: str) -> dict[str, float]:
    figures: dict[str, float] = {}
    for line in output.splitlines():
        words = line.split()
        if line.startswith("Requests/sec:"):
            figures["rps"] = float(words[1])
        elif len(words) >= 3 and words[1:3] == ["requests", "in"]:
            figures["requests"] = float(words[0])
        elif len(words) == 2 and words[0] in ("50%", "99%"):
            key = "p50_ms" if words[0] == "50%" else "p99_ms"
            figures[key] = wrk_duration_ms(words[1])
        elif "Non-2xx" in line:
            raise RuntimeError(f"wrk saw failures: {line.strip()}")
    return figures


def wrk_duration_ms(text: str) -> float:
    for unit, factor in (("us", 0.001), ("ms", 1.0), ("s", 1000.0), ("m", 60_000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    raise ValueError(text)


def maker(endpoint: str, session_id: str, prefix: str) -> Any:
    if endpoint.startswith("POST"):
        return lambda _i, _j: ("POST", f"{prefix}/checkout", load_gen.BODY)
    return lambda _i, _j: ("GET", f"{prefix}/checkout/{session_id}", None)


def startup_rounds(runs: int) -> dict[str, float]:
    """Medians of alternated runs: svc-sandbox, bare Flask, and bare Flask that also imports
    pydantic and builds one model (the floor of any app with pydantic at its edges)."""
    startup.compile_package()
    bare = [PY, str(HERE / "_bare_flask.py")]
    commands = {
        "svc-sandbox": (SERVE, "/_sandbox"),
        "bare Flask": (bare, "/ping"),
        "bare Flask + pydantic": ([*bare, "8", "--pydantic"], "/ping"),
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (argv, path) in commands.items():
            times[name].append(startup.time_to_first_answer(argv, path))
    return {name: statistics.median(runs_of) for name, runs_of in times.items()}


def startup_instructions(counts: dict[str, int] | None) -> list[str]:
    """The paragraph of the instruction counts to ready (none without valgrind)."""
    if counts is None:
        return ["", "Instructions to ready: not counted (valgrind is not installed)."]
    bare = counts["bare Flask"]
    floor = counts["bare Flask + pydantic"]
    ours = counts["svc-sandbox"]
    return [
        "",
        "Instructions from process start to the built server (valgrind's callgrind, the same "
        "count however busy the machine; bench/startup.py `READY_PROBES`): svc-sandbox "
        f"{ours / 1e6:,.0f} M, bare Flask + waitress {bare / 1e6:,.0f} M "
        f"(**{ours / bare:.2f}×**), bare Flask + pydantic {floor / 1e6:,.0f} M "
        f"({floor / bare:.2f}× bare Flask; svc-sandbox is {ours / floor:.2f}× that floor).",
    ]


MEMORY_PROBE = """
import resource, sys
from svc_sandbox.commerce.schemas import CheckoutBody
from svc_sandbox.sandbox import Sandbox
sandbox = Sandbox(clock_mode="frozen", rate_limits=False)
org = sandbox.orgs.all()[0]
principal = sandbox.orgs.authenticate(sandbox.orgs.tokens_of(org.id)[0].token)
body = CheckoutBody.model_validate({"amount": 500, "description": "memory"})
for _ in range(int(sys.argv[1])):
    sandbox.checkout.create(principal, body)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

BARE_PROBE = """
import resource
import flask, waitress.server
app = flask.Flask("bare")
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def memory(sessions: int) -> dict[str, float]:
    """Peak RSS (MB) of a process holding ``sessions`` open sessions, and of a bare Flask one."""
    ours = int(
        subprocess.run(
            [PY, "-c", MEMORY_PROBE, str(sessions)],
            capture_output=True,
            text=True,
            check=True,
            timeout=900,
        ).stdout.strip()
    )
    bare = int(
        subprocess.run(
            [PY, "-c", BARE_PROBE], capture_output=True, text=True, check=True, timeout=120
        ).stdout.strip()
    )
    return {"svc-sandbox": ours / 1024, "bare Flask": bare / 1024, "sessions": sessions}


def median_of(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def paired_ratios(
    runs: list[dict[str, float]], bare: list[dict[str, float]], key: str, bare_over: bool = False
) -> list[float]:
    """Round by round, this server's figure over the bare app's in the same round (or the
    bare's over this one's): rounds are interleaved, so a pair shares the machine's load."""
    return [
        (b[key] / r[key]) if bare_over else (r[key] / b[key])
        for r, b in zip(runs, bare, strict=True)
    ]


def spread(ratios: list[float]) -> str:
    """The median ratio and, in brackets, the lowest and highest of the rounds."""
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"


def plot(requests: dict[str, Any], curve: list[dict[str, float]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    names = list(next(iter(requests.values())))
    for index, (endpoint, per_server) in enumerate(requests.items()):
        rps = [median_of(per_server[n], "rps") for n in names]
        axes[0].bar([i + index * 0.4 for i in range(len(names))], rps, width=0.4, label=endpoint)
        p99 = [median_of(per_server[n], "p99_ms") for n in names]
        axes[1].bar([i + index * 0.4 for i in range(len(names))], p99, width=0.4, label=endpoint)
    for axis, title in ((axes[0], "requests / s (median)"), (axes[1], "p99 latency ms (median)")):
        axis.set_xticks([i + 0.2 for i in range(len(names))], names, fontsize=8)
        axis.set_title(title)
        axis.legend(fontsize=8)
    axes[2].plot([c["sessions"] for c in curve], [c["seconds"] for c in curve], marker="o")
    axes[2].set_xscale("log")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("open sessions")
    axes[2].set_ylabel("seconds for a 24 h warp (in-process receiver)")
    axes[2].set_title("clock warp scaling")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    return True


def load_average() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def load_description(data: dict[str, Any]) -> str:
    if data["load_generator"] == "wrk":
        how = f"wrk, {load_gen.CLIENTS} keep-alive connections, {WRK_SECONDS} s per round"
    else:
        how = (
            f"the Python load generator, {load_gen.CLIENTS} keep-alive clients × "
            f"{data['per_client']} requests per round"
        )
    return (
        f"Load: {how}, {data['rounds']} rounds, medians over rounds; every server is waitress "
        "with 8 threads; rate limits off (`--no-rate-limits`), frozen clock. The bare app does "
        "the same JSON work on the same two routes: it parses the body and answers a body of "
        "the same shape (bench/checkout_throughput.py)."
    )


def write_page(data: dict[str, Any], png: bool) -> str:
    requests = data["requests"]
    lines = [
        "# Performance",
        "",
        "Generated by `bench/compare.py` (one command; CI does not run it). "
        f"Run {data['when']} on {data['machine']}, {data['cores']} cores, load average "
        f"{data['load']} at the start.",
        "",
        "Absolute numbers depend on the machine and on what else it runs; rounds are "
        "interleaved (each round loads every server in turn) and only the **ratios against the "
        "bare Flask app measured in the same run** mean anything.",
        "",
        load_description(data),
        "",
    ]
    if data["prism"]:
        lines += [f"_{data['prism']}_", ""]
    lines += [
        "## Requests",
        "",
        "| endpoint | server | req/s | ×bare | ×bare per round | p50 ms | p99 ms | p99 ×bare | "
        "CPU µs/req | ×bare (CPU) | ×bare (CPU) per round |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for endpoint, per_server in requests.items():
        bare = per_server["bare Flask"]
        bare_rps, bare_p99, bare_cpu = (median_of(bare, k) for k in ("rps", "p99_ms", "cpu_us"))
        for name, runs in per_server.items():
            rps, p50, p99, cpu = (median_of(runs, k) for k in ("rps", "p50_ms", "p99_ms", "cpu_us"))
            by_round = spread(paired_ratios(runs, bare, "rps"))
            cpu_by_round = spread(paired_ratios(runs, bare, "cpu_us", bare_over=True))
            lines.append(
                f"| {endpoint} | {name} | {rps:.0f} | {rps / bare_rps:.2f} | {by_round} | "
                f"{p50:.2f} | {p99:.2f} | {p99 / bare_p99:.2f} | {cpu:.0f} | "
                f"{bare_cpu / cpu:.2f} | {cpu_by_round} |"
            )
    lines += [
        "",
        "`×bare` is the ratio of the medians over rounds; `×bare per round` pairs each round "
        "with the bare app's in the same round (rounds are interleaved, so a pair saw the "
        "same load): its median, then the lowest and highest round. `×bare (CPU)` is the bare "
        "app's server CPU time per request divided by this server's (1.00 = as cheap as bare "
        "Flask): on a busy machine it is the steadier of the ratios, because req/s also "
        f"measures who else got the cores. The row `{CONTROL}` is the bare app again, in a "
        "second process: its distance from 1.00 is what the machine alone moves a ratio. "
        f"The row `{CALIBRATION}` is the bare app spending {WORK_US} µs more of pure-Python "
        "CPU on every request: under waitress's threads and the GIL, extra work per request "
        "costs more than its own time, and this row shows how far that much work alone moves "
        "the ratios.",
        "",
        "What the gap to bare Flask pays for, on every request: a request id from the seeded "
        "factory and its `X-Request-Id` header; the Host check; the contract check of the "
        "request and the conformance record of the exchange; the request journal (with the "
        "body, for `svc-sandbox record`); the security headers; and the route's own work "
        "(authentication, rate limits, the body parsed into a pydantic model, the session "
        "settled on the sandbox clock under the one lock). The bare app does none of it. "
        "Profiles of the GET route put about two thirds of the difference in the two "
        "request hooks and one third in the route (`bench/checkout_throughput.py` runs the "
        "pair alone).",
    ]
    boot = data["startup"]
    mem = data["memory"]
    lines += [
        "",
        "## Start-up",
        "",
        "Process start to the first answer (`GET /_sandbox`; bare: `GET /ping`), median of "
        f"{data['startup_runs']} alternated runs: svc-sandbox {boot['svc-sandbox'] * 1000:.0f} ms, "
        f"bare Flask + waitress {boot['bare Flask'] * 1000:.0f} ms: "
        f"**{boot['svc-sandbox'] / boot['bare Flask']:.2f}×**. The same bare app that also "
        "imports pydantic and builds one model (the validation library of every edge here, "
        f"settings included) takes {boot['bare Flask + pydantic'] * 1000:.0f} ms "
        f"({boot['bare Flask + pydantic'] / boot['bare Flask']:.2f}× bare Flask): the floor of "
        "any app with pydantic at its edges; svc-sandbox is "
        f"{boot['svc-sandbox'] / boot['bare Flask + pydantic']:.2f}× that floor. Every module "
        "is imported from bytecode, as after a wheel install (the bench compiles the package "
        "first).",
        *startup_instructions(data["startup_instructions"]),
        "",
        "## Memory",
        "",
        f"Peak RSS holding {mem['sessions']:,} open checkout sessions: "
        f"{mem['svc-sandbox']:.0f} MB (a bare Flask process: {mem['bare Flask']:.0f} MB; "
        f"**{mem['svc-sandbox'] / mem['bare Flask']:.1f}×**). Retention settings bound the "
        "history of a long-running instance: `--events-kept` (100,000), `--deliveries-kept` "
        "(100,000 settled), `--webhook-attempts-kept` (10,000); env `SVC_SANDBOX_EVENTS_KEPT`, "
        "`SVC_SANDBOX_DELIVERIES_KEPT`, `SVC_SANDBOX_WEBHOOK_ATTEMPTS_KEPT`. A pending delivery "
        "always keeps its event. Identity records (codes, tokens, refresh families, sign-in "
        "sessions) are dropped `--identity-expired-kept-hours` (24) after they expire (env "
        "`SVC_SANDBOX_IDENTITY_EXPIRED_KEPT_HOURS`); rate-limit counters drop idle keys.",
        "",
        "## Clock warp",
        "",
        "24 h with N open sessions whose receiver answers 500: every session expires (one event) "
        "and every event is attempted 6 times (bench/warp.py). In-process receiver "
        "(`Sandbox.add_webhook_receiver`, no socket):",
        "",
        "| sessions | attempts | seconds | CPU seconds | µs per session | attempts/s |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in data["warp"]["inProcess"]:
        lines.append(
            f"| {row['sessions']:,} | {row['attempts']:,} | {row['seconds']:.2f} | "
            f"{row['cpu_seconds']:.2f} | {row['us_per_session']:.0f} | "
            f"{row['attempts_per_s']:.0f} |"
        )
    over_http = data["warp"]["http"]
    curve = data["warp"]["inProcess"]
    # CPU seconds per session (wall time on a loaded machine also measures the neighbours).
    curve_ratio = (curve[-1]["cpu_seconds"] / curve[-1]["sessions"]) / (
        curve[0]["cpu_seconds"] / curve[0]["sessions"]
    )
    lines += [
        "",
        f"CPU cost per session, largest run / smallest run: **{curve_ratio:.2f}×** (1.00 is "
        "exactly linear; events are indexed by id, due attempts and the scheduler are heaps, "
        "the attempt journal is bounded).",
        "",
        f"Over HTTP to a local keep-alive receiver ({over_http['sessions']:,} sessions, "
        f"{over_http['attempts']:,} attempts): {over_http['attempts_per_s']:.0f} deliveries/s; "
        f"plain POSTs of the same bytes on one keep-alive connection from the same process: "
        f"{over_http['plain_posts_per_s']:.0f}/s (**{over_http['ratio']:.2f}×**).",
        "",
    ]
    scaling = data["scaling"]
    first = scaling[0]
    lines += [
        "## Costs that must not grow with the state",
        "",
        "N link sessions each with a payment prompt in flight, N products, one queued entry per "
        "session and prompt (bench/state_scaling.py). Median µs per request through the WSGI app "
        "(no server); the ratio to the smallest row follows each figure (1.00 = flat). The last "
        "column is the longest any other request waited for the lock while one advance expired "
        "every session (advances let go of the lock every 256 due entries). CPython's cyclic "
        "garbage collector is paused while an advance runs: a full collection stops every "
        "thread whoever holds the lock and walks every object of the state (about 0.5 s at "
        "50,000 sessions, measured with gc.callbacks), which earlier runs showed as waits of "
        "200 ms and more. A wait left is about one batch's hold of the lock (timed in the "
        "advancing thread in an earlier run, 256 expiries held it at most 13 ms at 30,000 "
        "sessions and 27 ms at 100,000): between batches the advance sleeps 0.2 ms, so that "
        "a waiting thread is run before it takes the lock again. The longest wait is a maximum "
        "over one run and moves with the machine's load.",
        "",
        "| sessions | poll with a prompt in flight | product by `p_` token | GET /_sandbox/clock "
        "| GET /_sandbox | longest lock wait during the advance |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in scaling:
        cells = [
            f"{row[key]:.0f} µs ({row[key] / first[key]:.2f}×)"
            for key in ("poll_us", "product_by_token_us", "clock_us", "info_us")
        ]
        lines.append(
            f"| {row['sessions']:,} | "
            + " | ".join(cells)
            + f" | {row['advance_longest_wait_ms']:.1f} ms |"
        )
    lines.append("")
    if png:
        lines += ["![throughput, latency and warp scaling](performance.png)", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=150, help="per client per round")
    parser.add_argument("--startup-runs", type=int, default=5)
    parser.add_argument("--memory-sessions", type=int, default=100_000)
    parser.add_argument("--warp-sessions", default="1000,10000,100000")
    parser.add_argument("--http-sessions", type=int, default=2000)
    parser.add_argument("--scaling-sessions", default="1000,10000,100000")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument(
        "--load",
        choices=["wrk", "python"],
        default="wrk" if shutil.which("wrk") else "python",
        help="load generator (default: wrk when installed)",
    )
    parser.add_argument("--prism-server", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prism_server:
        prism_server(json.loads(args.prism_server))
        return 0
    if args.quick:
        args.rounds, args.requests, args.startup_runs = 1, 30, 1
        args.memory_sessions, args.warp_sessions, args.http_sessions = 1000, "100,1000", 100
        args.scaling_sessions = "100,1000"
    rounds = max(1, min(args.rounds, 20))
    per_client = max(1, min(args.requests, 5000))
    data: dict[str, Any] = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
        "cores": len(os.sched_getaffinity(0)),
        "load": load_average(),
        "rounds": rounds,
        "per_client": per_client,
        "startup_runs": args.startup_runs,
        "prism": prism_note(),
        "load_generator": args.load,
    }
    started = time.perf_counter()
    data["requests"] = request_rounds(rounds, per_client, args.load == "wrk")
    data["startup"] = startup_rounds(max(1, min(args.startup_runs, 20)))
    data["startup_instructions"] = startup.instructions_to_ready()
    data["memory"] = memory(max(1, min(args.memory_sessions, 200_000)))
    sizes = [max(1, min(int(s), warp.MAX_SESSIONS)) for s in args.warp_sessions.split(",")]
    data["warp"] = warp.run(sizes, max(1, min(args.http_sessions, warp.MAX_SESSIONS)))
    scaling_sizes = [
        max(1, min(int(s), state_scaling.MAX_SESSIONS)) for s in args.scaling_sessions.split(",")
    ]
    data["scaling"] = state_scaling.run(scaling_sizes)
    png = plot(data["requests"], data["warp"]["inProcess"], DOCS / "performance.png")
    page = write_page(data, png)
    (DOCS / "performance.md").write_text(page, encoding="utf-8")
    print(page)
    print(
        f"(took {time.perf_counter() - started:.0f} s; peak RSS of the bench itself "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
