"""Start-up: wall time from process start to the first answered request.

`svc-sandbox serve` against a bare Flask app served by waitress the same way, alternated in one
run (the machines are noisy, so only the ratio means anything). Usage:
    .venv/bin/python bench/startup.py [runs]
"""

from __future__ import annotations

import re
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
    sandbox = [python, "-m", "svc_sandbox.cli", "serve", "--port", "0", "--clock", "frozen"]
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


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
