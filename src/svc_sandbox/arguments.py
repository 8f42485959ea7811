"""Argument types of the commands: a bad value is a usage error (exit 2 naming the option),
never a traceback from deep inside an HTTP client. Numbers are ASCII decimal text
(core/numbers.py), as the SVC_SANDBOX_* variables read them."""

from __future__ import annotations

import argparse
import math
import os

from svc_sandbox.core.numbers import DECIMAL_TEXT, WHOLE_TEXT, decimal_text, whole_text
from svc_sandbox.core.validation import http_url_problem


def http_url(text: str) -> str:
    """An absolute http(s) URL with a host (``--base-url``, ``--url``)."""
    problem = http_url_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{text!r} {problem}")
    return text


#: Where ``conformance`` and ``record`` find a running emulator unless ``--url`` says.
EMULATOR_URL_HELP = (
    "origin of the running emulator (default: $SVC_SANDBOX_URL, which svc-sandbox exec sets "
    "for its command, else http://127.0.0.1:8700)"
)


def emulator_url_default() -> str:
    """``--url``'s default: the emulator ``svc-sandbox exec`` started (on a free port, named in
    SVC_SANDBOX_URL for its command), else ``serve``'s default origin. argparse checks it
    with the option's type, as if it had been typed."""
    return os.environ.get("SVC_SANDBOX_URL") or "http://127.0.0.1:8700"


def whole_number(text: str) -> int:
    """A whole number in ASCII digits (``--port``, ``--seed``, ...): core/numbers.py's rule,
    where ``int()`` would take ``١_٠`` as 10."""
    value = whole_text(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not {WHOLE_TEXT}")
    return value


def number(text: str) -> float:
    """A number in ASCII digits (``--clock-factor 0.5``): ``float()`` would also take ``1_5``,
    ``1e1``, ``inf`` and other scripts' digits."""
    value = decimal_text(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not {DECIMAL_TEXT}")
    return float(value)


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0 (``--timeout``), in ASCII digits."""
    seconds = decimal_text(text)
    if seconds is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds")
    value = float(seconds)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds above 0")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1 (``--max-examples``, ``--limit``)."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value
