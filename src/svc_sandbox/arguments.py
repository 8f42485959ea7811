"""Argument types of the commands that call a server (``run``, ``record``, ``contract test``,
``conformance``): a bad value is a usage error (exit 2 naming the option), never a traceback
from deep inside an HTTP client."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

from svc_sandbox.core.validation import http_url_problem

T = TypeVar("T")


def http_url(text: str) -> str:
    """An absolute http(s) URL with a host (``--base-url``, ``--url``)."""
    problem = http_url_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{text!r} {problem}")
    return text


def _parsed(text: str, convert: Callable[[str], T], what: str) -> T:
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0 (``--timeout``)."""
    value = _parsed(text, float, "a number of seconds")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds above 0")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1 (``--max-examples``, ``--limit``)."""
    value = _parsed(text, int, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value
