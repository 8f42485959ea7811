"""Checks of the client's arguments before anything is sent: a ``ValueError`` naming the
parameter, with the rule of the spec it breaks (§2, §4, §8)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from svc_sandbox.core.validation import root_url_problem

HEX_ID = re.compile(r"^[0-9a-f]{24}$")
PRODUCT_REF = re.compile(r"^(p_[A-Za-z0-9_-]+|[0-9a-f]{24})$")
#: §4 ``checkoutLink``: "string starting ``cl_``", any text after it (the contract's
#: CheckoutLinkToken), as a pattern both ``fullmatch`` and pydantic take.
CHECKOUT_LINK = re.compile(r"^cl_[\s\S]*$")
PHONE = re.compile(r"^(2519[0-9]{8}|09[0-9]{8}|9[0-9]{8})$")
#: Whole-value shapes (``pattern`` full-matches: a trailing newline is not "$"'s to forgive).
HTTP_URL = re.compile(r"https?://\S.*")
ABSOLUTE_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S.*")  # RFC 3986: a scheme, then more
GATEWAYS = ("telebirr", "mpesa", "cbe")
#: The highest ``page`` the service answers (the contract's ``Page`` maximum, 2^53 - 1).
MAX_PAGE = 2**53 - 1


def integer(name: str, value: Any, minimum: int = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer (santim), not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def seconds(name: str, value: Any) -> float:
    """A positive, finite number of seconds (a timeout, a poll interval)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    if math.isinf(value):
        raise ValueError(f"{name} must be finite")
    return float(value)


def text(name: str, value: Any, minimum: int = 0, maximum: int | None = None) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, not {type(value).__name__}")
    if minimum and not value.strip():
        raise ValueError(f"{name} must not be blank")
    if maximum is not None and len(value) > maximum:
        raise ValueError(f"{name} must be at most {maximum} characters, got {len(value)}")
    return value


def trimmed_text(name: str, value: Any, maximum: int) -> str:
    """A required text the service trims (§4 title, custom description): 1..``maximum``
    characters once surrounding whitespace is gone; sent as given."""
    text(name, value, 1)
    if len(value.strip()) > maximum:
        raise ValueError(
            f"{name} must be at most {maximum} characters after trimming, got {len(value.strip())}"
        )
    return str(value)


def function(name: str, value: Any) -> Any:
    """Something to call (a ``sleep``), checked before the first request goes out."""
    if not callable(value):
        raise ValueError(f"{name} must be a function, not {type(value).__name__}")
    return value


#: RFC 6750 §2.1 ``b64token``: what a bearer token can be in a header (a JWT, an opaque
#: token, an API key); anything else could not be sent, or would be sent as another token.
BEARER_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def bearer_token(name: str, value: Any) -> str:
    text(name, value, 1)
    if not BEARER_TOKEN.fullmatch(value):
        raise ValueError(
            f"{name} must be a token as a bearer header carries it (RFC 6750: letters, digits "
            "and -._~+/, then any =), not text with spaces, line breaks or other characters"
        )
    return str(value)


def choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return str(value)


def pattern(name: str, value: Any, regex: re.Pattern[str], shape: str) -> str:
    if not isinstance(value, str) or not regex.fullmatch(value):
        raise ValueError(f"{name} must be {shape}, got {value!r}")
    return value


def hex_id(name: str, value: Any) -> str:
    return pattern(name, value, HEX_ID, "24 lowercase hex characters")


def product_ref(name: str, value: Any) -> str:
    return pattern(name, value, PRODUCT_REF, "a p_... token or 24 lowercase hex characters")


def phone(name: str, value: Any) -> str:
    """A phone the service takes: its shape once surrounding whitespace is trimmed (the
    contract's Phone); sent as given."""
    shape = "a phone as 2519XXXXXXXX, 09XXXXXXXX or 9XXXXXXXX"
    pattern(name, value.strip() if isinstance(value, str) else value, PHONE, shape)
    return str(value)


def url(name: str, value: Any) -> str:
    return pattern(name, text(name, value, 1, 2048), HTTP_URL, "an absolute http(s) URL")


def base_url(name: str, value: Any) -> str:
    """An API root: an absolute http(s) URL with a host and, when given, a port number (what
    httpx cannot send is refused here, not on the first call)."""
    url(name, value)
    try:
        parsed = httpx.URL(value)
    except httpx.InvalidURL as exc:
        raise ValueError(f"{name} must be an absolute http(s) URL ({exc}), got {value!r}") from None
    if not parsed.host or " " in value:
        raise ValueError(f"{name} must be an absolute http(s) URL with a host, got {value!r}")
    if parsed.port is not None and not 0 < parsed.port <= 65535:
        raise ValueError(f"{name} has no valid port (1..65535), got {value!r}")
    problem = root_url_problem(value)
    if problem:
        raise ValueError(f"{name} {problem}, got {value!r}")
    return str(value)


def uri(name: str, value: Any) -> str:
    """Any absolute URI (a success URL may be an app's deep link); the emulator checks the
    rest (§2 "URI string")."""
    return pattern(name, text(name, value, 1, 2048), ABSOLUTE_URI, "an absolute URI")


def gateway(name: str, value: Any) -> str:
    return choice(name, value, GATEWAYS)


def string_map(name: str, value: Any, scalars: bool = False) -> dict[str, Any]:
    """Metadata: at most 20 keys of 1..40 characters; string values (or, for checkouts,
    numbers and booleans, which the service stores as strings)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping of strings")
    if len(value) > 20:
        raise ValueError(f"{name} can have at most 20 keys, got {len(value)}")
    allowed: tuple[type, ...] = (str, int, float, bool) if scalars else (str,)
    for key, item in value.items():
        if not isinstance(key, str) or not 1 <= len(key) <= 40:
            raise ValueError(f"{name} keys must be strings of 1 to 40 characters, got {key!r}")
        if not isinstance(item, allowed):
            kinds = "a string, number or boolean" if scalars else "a string"
            raise ValueError(f"{name}.{key} must be {kinds}, not {type(item).__name__}")
        if isinstance(item, str) and len(item) > 500:
            raise ValueError(f"{name}.{key} must be at most 500 characters")
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"{name}.{key} must be a finite number (JSON has no {item})")
    return dict(value)


def page_query(page: Any, limit: Any, status: Any, statuses: Sequence[str]) -> dict[str, Any]:
    query: dict[str, Any] = {
        "page": integer("page", page, minimum=1, maximum=MAX_PAGE),
        "limit": integer("limit", limit, minimum=1, maximum=100),
    }
    if status is not None:
        query["status"] = choice("status", status, statuses)
    return query


def customer(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError("customer must be a mapping with email, phone, name, externalId")
    known = {"email", "phone", "name", "externalId", "external_id"}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ValueError(f"customer.{unknown[0]} is not a customer field ({', '.join(known)})")
    body: dict[str, Any] = {}
    if value.get("email") is not None:
        email = text("customer.email", value["email"], 1, 254)
        if "@" not in email:
            raise ValueError(f"customer.email must be an email address, got {email!r}")
        body["email"] = email
    if value.get("phone") is not None:
        body["phone"] = phone("customer.phone", value["phone"])
    if value.get("name") is not None:
        body["name"] = text("customer.name", value["name"], 0, 120)
    external = value.get("externalId", value.get("external_id"))
    if external is not None:
        body["externalId"] = text("customer.externalId", external, 1, 200)
    return body


def media(value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError("media must be a list of http(s) URLs")
    if len(value) > 20:
        raise ValueError(f"media can have at most 20 items, got {len(value)}")
    return [url(f"media[{i}]", item) for i, item in enumerate(value)]


def price(
    amount: int | None, minimum_amount: int | None, default_amount: int | None
) -> dict[str, int]:
    given = {
        "amount": amount,
        "minimumAmount": minimum_amount,
        "defaultAmount": default_amount,
    }
    names = {
        "amount": "amount",
        "minimumAmount": "minimum_amount",
        "defaultAmount": "default_amount",
    }
    return {key: integer(names[key], v) for key, v in given.items() if v is not None}


#: The price arguments each pricing model takes (the service refuses the others, but for the
#: value the product's Price shows: a free product's amount 0).
PRICE_ARGUMENTS = {
    "fixed": ("amount",),
    "pwyw": ("minimum_amount", "default_amount"),
    "free": (),
}


def price_for(
    model: str, amount: int | None, minimum_amount: int | None, default_amount: int | None
) -> dict[str, int]:
    """``price`` for a product of ``model``: an argument the model does not take is refused."""
    given = {"amount": amount, "minimum_amount": minimum_amount, "default_amount": default_amount}
    for name, value in given.items():
        echo = model == "free" and name == "amount" and value == 0
        if value is not None and name not in PRICE_ARGUMENTS[model] and not echo:
            owner = next(m for m, names in PRICE_ARGUMENTS.items() if name in names)
            raise ValueError(f"{name} can only be set on {owner} products, not {model}")
    return price(amount, minimum_amount, default_amount)


#: The contract's Idempotency-Key: printable ASCII, no space at either end (a header value's
#: surrounding spaces are not part of it, RFC 9110 §5.5).
IDEMPOTENCY_KEY = re.compile(r"[!-~]([ -~]*[!-~])?")


def idempotency_key(value: Any, minimum: int = 1) -> str:
    """An ``Idempotency-Key`` (a withdrawal's header, a wallet send's field): 1 (the
    wallet: 8) to 255 printable ASCII characters, no space at either end."""
    key = text("idempotency_key", value, 1, 255)
    if len(key) < minimum:
        raise ValueError(f"idempotency_key must be at least {minimum} characters")
    if not IDEMPOTENCY_KEY.fullmatch(key):
        raise ValueError(
            "idempotency_key must be printable ASCII with no space at either end "
            "(it is sent as a header)"
        )
    return key
