"""Start-up: wall time from process start to the first answered request.

`svc-sandbox serve` against a bare Flask app served by waitress the same way, alternated in one
run (the machines are noisy, so only the ratio means anything). With valgrind on PATH, also
the instructions each executes from process start to its built server (callgrind: the same
count on a busy machine, where wall times move by a third). Usage:
    .venv/bin/python bench/startup.py [runs]
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).parent


def time_to_first_answer(argv: list[str], path: str) -> float:
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        origin = None
        for line in process.stdout:
            found = re.search(r"control_url\s+(http://127\.0\.0\.1:\d+)", line)
            origin = origin or (found.group(1) if found else None)
            if line.startswith("Ready"):
                break
        assert origin, "server printed no URL"
        deadline = started + 60
        while time.perf_counter() < deadline:
            try:
                with urllib.request.urlopen(origin + path, timeout=5) as response:
                    response.read()
                    return time.perf_counter() - started
            except OSError:
                time.sleep(0.005)
        raise TimeoutError(argv)
    finally:
        process.terminate()
        process.wait(timeout=30)


#: What each start-up does before its first answer, as a script: `svc-sandbox serve`'s path up
#: to "Ready" through the same functions (the launcher's import of cli.py, settings from the
#: command line, the Sandbox, the app, the server, the banner), and the bare app's, with and
#: without one pydantic model.
READY_PROBES = {
    "svc-sandbox": """
from svc_sandbox.launcher import load_cli
cli = load_cli()
args = cli.build_parser().parse_args(["serve", "--port", "0", "--clock", "frozen"])
settings = cli.settings_from_args(args)
sandbox, server = cli.build_serving(settings)
cli.banner(sandbox.info(), cli.usable_origins(settings))
server.close()
""",
    "bare Flask": """
from _bare_flask import make_app
from waitress.server import create_server
create_server(make_app(), host="127.0.0.1", port=0, threads=8).close()
""",
    "bare Flask + pydantic": """
from _bare_flask import make_app
from waitress.server import create_server
from pydantic import BaseModel
class Body(BaseModel):
    amount: int
Body.model_validate({"amount": 1})
create_server(make_app(), host="127.0.0.1", port=0, threads=8).close()
""",
}


#: Appended to each probe: the count stops at the built server, not after the teardown.
EXIT_NOW = "\nimport os\nos._exit(0)\n"


def instructions_to_ready() -> dict[str, int] | None:
    """Instructions from process start to a built server (``READY_PROBES``), counted by
    valgrind's callgrind with a fixed hash seed; None when valgrind is not installed. The
    probes run side by side (about a minute each under valgrind); each ends with
    ``os._exit``, so the interpreter's teardown (freeing every module) is not counted."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(HERE)}
    running = {
        name: subprocess.Popen(
            [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null"]
            + [sys.executable, "-c", probe + EXIT_NOW],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name, probe in READY_PROBES.items()
    }
    counts = {}
    for name, process in running.items():
        _, err = process.communicate(timeout=900)
        found = re.search(r"Collected : (\d+)", err)
        if process.returncode != 0 or found is None:
            raise RuntimeError(f"{name}: callgrind failed: {err[-500:]}")
        counts[name] = int(found.group(1))
    return counts


def compile_package() -> None:
    """Bytecode for svc_sandbox, as a wheel install has it (pip compiles at install time, so
    the baseline's Flask is compiled): otherwise, with PYTHONDONTWRITEBYTECODE set, every
    start would measure compiling our modules, not importing them."""
    import compileall

    import svc_sandbox

    compileall.compile_dir(Path(svc_sandbox.__file__).parent, quiet=1)


def main(runs: int = 7) -> None:
    compile_package()
    python = sys.executable
    sandbox = [python, "-m", "svc_sandbox", "serve", "--port", "0", "--clock", "frozen"]
    bare = [python, str(HERE / "_bare_flask.py")]
    ours, base = [], []
    for _ in range(runs):
        ours.append(time_to_first_answer(sandbox, "/_sandbox"))
        base.append(time_to_first_answer(bare, "/ping"))
    ours_median, base_median = statistics.median(ours), statistics.median(base)
    print(f"runs: {runs}")
    print(f"svc-sandbox serve  median {ours_median * 1000:7.1f} ms")
    print(f"bare Flask         median {base_median * 1000:7.1f} ms")
    print(f"ratio (svc-sandbox / bare Flask): {ours_median / base_median:.2f}")
    counts = instructions_to_ready()
    if counts is not None:
        bare_count = counts["bare Flask"]
        for name, count in counts.items():
            ratio = count / bare_count
            print(f"{name:<22} {count / 1e6:8.1f} M instructions to ready ({ratio:.2f}x)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
