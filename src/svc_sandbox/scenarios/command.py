"""``svc-sandbox run`` and ``svc-sandbox record``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from svc_sandbox.arguments import (
    EMULATOR_URL_HELP,
    emulator_url_default,
    http_url,
    positive_int,
    positive_seconds,
    whole_number,
)
from svc_sandbox.core.validation import http_url_problem
from svc_sandbox.settings import ROOT_DEFAULTS

if TYPE_CHECKING:
    from svc_sandbox.scenarios.model import Scenario
    from svc_sandbox.scenarios.targets import Target

# The scenario machinery (YAML, HTTP clients, the runner) is imported by the commands that use
# it, not by every `svc-sandbox` start: `serve` builds this parser too (start-up, issue 10).

DEFAULT_PATHS = ["scenarios"]
#: Exit status when no scenario was selected (pytest's "no tests collected").
NOTHING_RAN = 5


def add_parsers(sub: Any) -> None:
    run = sub.add_parser("run", help="run YAML scenarios (docs/scenarios.md)")
    run.add_argument("paths", nargs="*", help="scenario files or folders (default: scenarios/)")
    run.add_argument(
        "--library",
        action="store_true",
        help="run the shipped scenario library too (docs/scenarios.md)",
    )
    run.add_argument(
        "--base-url", type=http_url, help="run against a running server (its {base_url} or origin)"
    )
    run.add_argument(
        "--target",
        choices=["emulator", "real"],
        default="emulator",
        help="what --base-url is: an svc-sandbox emulator (default) or another server, where "
        "control and webhook steps are skipped",
    )
    run.add_argument("--token", help="API token for --target real (default: env SVC_TOKEN)")
    run.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="another root of --target real, such as pay_url=https://... (repeatable)",
    )
    run.add_argument("--tag", action="append", default=[], help="only scenarios with this tag")
    run.add_argument("-k", dest="keyword", help="only scenarios whose name contains this")
    run.add_argument(
        "--seed",
        type=whole_number,
        help="seed of the in-process sandbox of a scenario without its own seed (default 1)",
    )
    run.add_argument("--junit", metavar="PATH", help="write a JUnit XML report")
    run.add_argument("--json", metavar="PATH", help="write a JSON report")
    run.add_argument("--fail-fast", action="store_true", help="stop at the first failure")
    run.add_argument(
        "--timeout", type=positive_seconds, default=10.0, help="seconds each HTTP request may take"
    )

    record = sub.add_parser(
        "record", help="turn a running emulator's request journal into a scenario file"
    )
    record.add_argument(
        "--url", type=http_url, default=emulator_url_default(), help=EMULATOR_URL_HELP
    )
    record.add_argument("--out", required=True, help="the scenario file to write")
    record.add_argument("--name", default="recorded flow", help="the scenario's name")
    record.add_argument("--limit", type=positive_int, default=1000, help="journal entries to read")


#: Where a wheel keeps the scenario library (_build_hooks.py copies scenarios/ there).
PACKAGED_LIBRARY = "library"


def library_folder() -> str:
    """The scenario library: package data in a wheel, else the repository's scenarios/."""
    packaged = Path(__file__).resolve().parent / PACKAGED_LIBRARY
    if packaged.is_dir():
        return str(packaged)
    return str(Path(__file__).resolve().parents[3] / "scenarios")


def select(scenarios: list[Scenario], tags: list[str], keyword: str | None) -> list[Scenario]:
    chosen = scenarios
    if tags:
        chosen = [s for s in chosen if set(tags) & set(s.tags)]
    if keyword:
        chosen = [s for s in chosen if keyword.lower() in s.name.lower()]
    return chosen


def nothing_selected(
    scenarios: list[Scenario], tags: list[str], keyword: str | None, paths: list[str]
) -> str:
    """Why a run has nothing to run: no files, or which filter matched none."""
    where = ", ".join(paths)
    if not scenarios:
        return f"nothing to run: no scenario files under {where}"
    filters = []
    if tags and not select(scenarios, tags, None):
        filters.append(" ".join(f"--tag {t}" for t in tags))
    if keyword and not select(scenarios, [], keyword):
        filters.append(f"-k {keyword}")
    if filters:
        which = " and ".join(filters) + (" match" if len(filters) > 1 else " matches")
    else:
        which = " ".join(f"--tag {t}" for t in tags) + f" with -k {keyword} match"
    return f"nothing to run: {which} none of the {len(scenarios)} scenario(s) under {where}"


def make_target(args: argparse.Namespace) -> Target:
    from svc_sandbox.scenarios.targets import EmulatorTarget, InProcessTarget, RealTarget

    if args.root and args.target != "real":
        raise ValueError("--root is for --target real: an emulator serves its own roots")
    if not args.base_url:
        if args.target == "real":
            raise ValueError("--target real needs --base-url")
        return InProcessTarget(seed=args.seed or 1)
    if args.target == "emulator":
        return EmulatorTarget(args.base_url, timeout=args.timeout)
    roots: dict[str, str] = {}
    for item in args.root:
        name, _, url = item.partition("=")
        if name not in ROOT_DEFAULTS or not url:
            names = ", ".join(ROOT_DEFAULTS)
            raise ValueError(f"--root {item}: expected NAME=URL with NAME one of {names}")
        problem = http_url_problem(url)
        if problem:
            raise ValueError(f"--root {item}: the URL {problem}")
        roots[name] = url.rstrip("/")
    token = args.token or os.environ.get("SVC_TOKEN")
    if not token:
        # Every step sending ${token} would be skipped and the run pass: a CI job whose
        # secret is missing must not go green.
        raise ValueError("--target real needs a token: --token or env SVC_TOKEN")
    return RealTarget(args.base_url, token, roots, timeout=args.timeout)


def run_command(args: argparse.Namespace) -> int:
    from svc_sandbox.outputs import cannot_write
    from svc_sandbox.scenarios.console import ConsoleReport
    from svc_sandbox.scenarios.loader import load_paths
    from svc_sandbox.scenarios.model import ScenarioError
    from svc_sandbox.scenarios.reports import write_json, write_junit
    from svc_sandbox.scenarios.results import ERROR, FAILED
    from svc_sandbox.scenarios.runner import Runner

    paths = [*args.paths, *([library_folder()] if args.library else [])] or DEFAULT_PATHS
    try:
        loaded = load_paths(paths)
        scenarios = select(loaded, args.tag, args.keyword)
        target = make_target(args)
    except ScenarioError as exc:
        print(f"svc-sandbox: {exc.describe()}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"svc-sandbox: {exc}", file=sys.stderr)
        return 2
    if not scenarios:  # as pytest: a filter with a typo must not pass a CI job
        print(
            f"svc-sandbox: {nothing_selected(loaded, args.tag, args.keyword, paths)}",
            file=sys.stderr,
        )
        return NOTHING_RAN
    report = ConsoleReport()
    report.start(len(scenarios), target.description)
    started, finished = report.hooks()
    runner = Runner(target, seed=args.seed, fail_fast=args.fail_fast)
    try:
        results = runner.run_all(scenarios, started, finished)
    finally:
        report.progress.stop()
    report.finish(results)
    written = True
    for path, write in ((args.json, write_json), (args.junit, write_junit)):
        try:
            if path:
                write(path, results, target.description)
        except OSError as exc:
            print(cannot_write(path, exc), file=sys.stderr)
            written = False
    if any(r.status in (FAILED, ERROR) for r in results):
        return 1
    return 0 if written else 2


def record_command(args: argparse.Namespace) -> int:
    import urllib.error
    import urllib.parse
    import urllib.request

    import yaml

    from svc_sandbox.core.journal import JOURNAL_ENTRIES
    from svc_sandbox.outputs import cannot_write, write_file
    from svc_sandbox.scenarios.recorder import NOT_RECORDED_HEADER

    query = urllib.parse.urlencode({"name": args.name, "limit": args.limit})
    url = f"{args.url.rstrip('/')}/_sandbox/scenario?{query}"
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            text = answer.read().decode("utf-8")
            left_out = answer.headers.get(NOT_RECORDED_HEADER)
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", "replace")
        print(f"svc-sandbox: {url} answered {error.code}: {detail}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"svc-sandbox: cannot read {url}: {exc}", file=sys.stderr)
        return 2
    steps = len(yaml.safe_load(text)["steps"])
    if not steps:  # a file `run` would refuse (a scenario has at least one step)
        print(
            f"svc-sandbox: nothing to record: the request journal of {args.url} is empty "
            f"(no file written)",
            file=sys.stderr,
        )
        return 2
    try:
        write_file(args.out, text)
    except OSError as exc:
        print(cannot_write(args.out, exc), file=sys.stderr)
        return 2
    if left_out:
        print(
            f"svc-sandbox: warning: {left_out} earlier request(s) of this session are not in "
            f"the recording (the journal keeps the newest {JOURNAL_ENTRIES}, and no reset "
            "starts what it kept): its first steps may need what they made. Record sooner "
            "after a POST /_sandbox/reset",
            file=sys.stderr,
        )
    print(json.dumps({"out": args.out, "steps": steps}))
    return 0
