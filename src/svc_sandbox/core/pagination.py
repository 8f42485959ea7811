"""The page envelope shared by products, orders and withdrawals."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from svc_sandbox.core.errors import ValidationFailed

T = TypeVar("T")

MAX_LIMIT = 100
DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class PageRequest:
    page: int = 1
    limit: int = DEFAULT_LIMIT


def _positive_int(raw: str | None, name: str, default: int, maximum: int | None) -> int:
    if raw is None:
        return default
    bound = f"between 1 and {maximum}" if maximum else "at least 1"
    # ASCII digits only, as the contract's `integer` reads a query value: int() would also
    # take " 1", "+1", "1_0" and other scripts' digits.
    if not (raw.isascii() and raw.isdigit()):
        raise ValidationFailed(f"{name} must be an integer {bound}")
    value = int(raw, 10)
    if value < 1 or (maximum is not None and value > maximum):
        raise ValidationFailed(f"{name} must be an integer {bound}")
    return value


def parse_page_request(args: dict[str, str]) -> PageRequest:
    """Reads ``page`` and ``limit`` from query arguments, naming the field when one is bad."""
    return PageRequest(
        page=_positive_int(args.get("page"), "page", 1, None),
        limit=_positive_int(args.get("limit"), "limit", DEFAULT_LIMIT, MAX_LIMIT),
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
