"""The page envelope shared by products, orders and withdrawals."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from svc_sandbox.core.validation import query_integer

T = TypeVar("T")

MAX_LIMIT = 100
DEFAULT_LIMIT = 20
#: The highest ``page`` (§8 gives none): the largest integer every JSON client reads exactly
#: (JavaScript's ``Number.MAX_SAFE_INTEGER``), so the envelope's ``page`` is the one asked for.
#: A bound also keeps ``int()`` off texts past Python's 4300-digit conversion limit.
MAX_PAGE = 2**53 - 1


@dataclass(frozen=True)
class PageRequest:
    page: int = 1
    limit: int = DEFAULT_LIMIT


def parse_page_request(args: Mapping[str, str]) -> PageRequest:
    """Reads ``page`` and ``limit`` from query arguments, naming the field when one is bad."""
    return PageRequest(
        page=query_integer(args.get("page"), "page", 1, MAX_PAGE),
        limit=query_integer(args.get("limit"), "limit", DEFAULT_LIMIT, MAX_LIMIT),
    )


def paginate(
    items: Sequence[T], request: PageRequest, render: Callable[[T], Any]
) -> dict[str, Any]:
    start = (request.page - 1) * request.limit
    window = items[start : start + request.limit]
    return {
        "items": [render(item) for item in window],
        "total": len(items),
        "page": request.page,
        "limit": request.limit,
    }
