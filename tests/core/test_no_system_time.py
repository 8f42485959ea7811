"""Only core/clock.py may read the system time: everything else goes through the sandbox clock."""

from __future__ import annotations

import re
from pathlib import Path

import svc_sandbox

SRC = Path(svc_sandbox.__file__).parent
FORBIDDEN = re.compile(
    r"time\.time\(|time\.monotonic\(|datetime\.now\(|datetime\.utcnow\(|date\.today\(|"
    r"time\.perf_counter\("
)


def test_only_the_clock_module_reads_the_system_time() -> None:
    offenders = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if path.name != "clock.py" and FORBIDDEN.search(path.read_text())
    ]
    assert offenders == []


def test_the_scan_would_catch_an_offender() -> None:
    assert FORBIDDEN.search("stamp = datetime.now(UTC)")
    assert FORBIDDEN.search("t0 = time.time()")
