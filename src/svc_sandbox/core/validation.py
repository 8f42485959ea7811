"""Parses request data into pydantic models, turning the first error into a message that
names the field (``price.amount: Input should be greater than or equal to 0``)."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from svc_sandbox.core.errors import ValidationFailed

M = TypeVar("M", bound=BaseModel)

#: What a refusal of a field or parameter nobody reads says after its name.
UNKNOWN = "is not a known field"


_FRIENDLY = {
    "extra_forbidden": UNKNOWN,
    "missing": "is required",
    "int_type": "must be an integer",
    "string_type": "must be a string",
    "bool_type": "must be a boolean",
    "list_type": "must be an array",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",  # one of a tagged union's models
    "decimal_type": "must be a decimal number",
    "decimal_parsing": "must be a decimal number",
}
#: pydantic's subjects of "... should ..." (``String should have at least 1 character``): a
#: message names the field instead, so each becomes "<field> must ...".
_PYDANTIC_SUBJECT = re.compile(r"^(?:Input|String|List|Dictionary|Tuple|Set|Decimal input) should")
#: What pydantic adds to a length refusal (``..., not 0``): the client knows what it sent.
_PYDANTIC_TAIL = re.compile(r" after validation, not \d+$")


def too_long_message(where: str) -> str:
    """An integer past Python's conversion limit, in a body (json_input) or a query value."""
    return f"{where} is a number longer than {sys.get_int_max_str_digits()} digits"


def field_path(loc: tuple[int | str, ...]) -> str:
    """``price.amount``, ``media[2]``: a name the client sent (an unknown field, a metadata
    key) is cut like any repeated value, so a 300,000-character name is named, not echoed."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            name = cut(part, SHOWN_CHARACTERS)
            path += f".{name}" if path else name
    return path or "body"


#: pydantic's last ``loc`` part when a dict's key (not its value) is refused.
_DICT_KEY = "[key]"


def describe(error: dict[str, Any]) -> str:
    loc = tuple(p for p in error["loc"] if not str(p).startswith("function-"))
    if error["type"] == "int_parsing_size":  # pydantic's "exceeded maximum size": a query value
        return too_long_message(field_path(loc))
    message = _FRIENDLY.get(error["type"], error["msg"])
    if error["type"].startswith("literal_") or error["type"] == "enum":
        message = error["msg"].replace("Input should be", "must be")
    elif message == error["msg"]:
        message = _PYDANTIC_SUBJECT.sub("must", message).replace("Value error, ", "")
        message = _PYDANTIC_TAIL.sub("", message)
    if loc[-1:] == (_DICT_KEY,):
        # ("metadata", "<key>", "[key]"): the rule is about the keys, not about this key.
        return f"{field_path(loc[:-2])} keys {message}"
    return f"{field_path(loc)} {message}"


#: How much of a value a message repeats: a 300,000-character id is named, not echoed.
SHOWN_CHARACTERS = 80
#: What ends a string ``cut`` shortened.
ELLIPSIS = "…"


def cut(text: str, limit: int) -> str:
    """``text`` as a message or a record keeps it: whole up to ``limit`` characters, else its
    first ``limit - 1`` and an ellipsis (the one rule for a string too long to repeat)."""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + ELLIPSIS


def shown(value: Any) -> str:
    """``repr(value)`` for a message, cut to ``SHOWN_CHARACTERS`` with an ellipsis."""
    return cut(repr(value), SHOWN_CHARACTERS)


def unknown_field(name: str, where: str = "") -> str:
    """``<where><name> is not a known field``, the name cut as ``field_path`` cuts it (the
    wording pydantic's ``extra_forbidden`` gets through ``describe``)."""
    return f"{where}{cut(name, SHOWN_CHARACTERS)} {_FRIENDLY['extra_forbidden']}"


def parse(model: type[M], data: Any) -> M:
    if not isinstance(data, dict):
        raise ValidationFailed("body must be a JSON object")
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        raise ValidationFailed(describe(dict(exc.errors()[0]))) from None


def one_of(value: str, allowed: Sequence[str], field: str) -> str:
    """``value`` if it is one of ``allowed``; otherwise a 400 naming ``field`` and the choices."""
    if value not in allowed:
        raise ValidationFailed(f"{field} must be one of {', '.join(allowed)}")
    return value


def optional_one_of(value: str | None, allowed: Sequence[str], field: str) -> str | None:
    """As ``one_of``, letting None (an absent filter) through."""
    return None if value is None else one_of(value, allowed, field)


def ascii_digits(value: str, max_length: int = 18) -> bool:
    """True for 1 to ``max_length`` ASCII digits: ``str.isdigit`` alone takes ``²`` and
    Arabic-Indic digits, and ``int()`` of thousands of digits raises ValueError."""
    return 0 < len(value) <= max_length and value.isascii() and value.isdigit()


def query_integer(raw: str | None, name: str, default: int, maximum: int) -> int:
    """A query parameter's whole number from 1 to ``maximum`` (``default`` when absent), or
    400 ``<name> must be an integer between 1 and <maximum>``. ASCII digits only, as the
    contracts' ``integer`` reads a query value (``int()`` would also take `` 1``, ``+1``,
    ``1_0`` and other scripts' digits); leading zeros aside, no more digits than ``maximum``
    has, so ``int()`` never meets a text past Python's 4300-digit conversion limit."""
    if raw is None:
        return default
    significant = raw.lstrip("0") or "0"
    if not (ascii_digits(significant, len(str(maximum))) and 1 <= int(significant) <= maximum):
        raise ValidationFailed(f"{name} must be an integer between 1 and {maximum}")
    return int(significant)


def repeated(name: str) -> str:
    """A parameter sent more than once: the one wording of every family (identity's OAuth
    parameters, the query of every route that reads single values, the contract check)."""
    return f"{name} is repeated: send it once"


def grouped(pairs: Iterable[tuple[str, str]]) -> dict[str, str | list[str]]:
    """Name-value pairs (a query's, a form's) as a mapping: a name sent once maps to its value,
    a name sent more than once to the list of its values in the order sent. Each value is
    appended in place (a list rebuilt per repeat was quadratic: 100,000 repeats took 35 s)."""
    values: dict[str, list[str]] = {}
    for name, value in pairs:
        values.setdefault(name, []).append(value)
    return {name: found[0] if len(found) == 1 else found for name, found in values.items()}


class SingleValues(Mapping[str, str]):
    """A query string read one value per name: reading a name sent more than once is 400
    ``<name> is repeated: send it once`` (taking the first let ``?limit=1&limit=200`` through
    where ``?limit=200`` is refused). ``values`` maps each name to every value sent."""

    def __init__(self, values: Mapping[str, Sequence[str]]) -> None:
        self._values = values

    def __getitem__(self, name: str) -> str:
        found = self._values[name]
        if len(found) > 1:
            raise ValidationFailed(repeated(name))
        return found[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


MAX_URL_LENGTH = 2048


def unreadable_url_problem(url: str) -> str | None:
    """Why ``urlsplit`` cannot read ``url`` (an unclosed IPv6 bracket, ``http://[::1``), or
    None: for a URL only taken apart, where any other text is the reader's business."""
    try:
        urlsplit(url)
    except ValueError:
        return "cannot be parsed as a URL"
    return None


def http_url_problem(url: str) -> str | None:
    """Why ``url`` is not an absolute http(s) URL this sandbox can call or compare, or None.

    Parsed, not pattern-matched: a host is required, a port must be 1..65535, and what
    ``urlsplit`` cannot read (``http://[::1``) is refused here rather than later, where
    reading it again would raise."""
    if len(url) > MAX_URL_LENGTH:
        return f"must be at most {MAX_URL_LENGTH} characters"
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError when out of 0..65535 or not a number
    except ValueError:
        return "must be an absolute http(s) URL (it cannot be parsed)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an absolute http(s) URL with a host"
    if port == 0:
        return "must have a port between 1 and 65535"
    return url_characters_problem(url)


#: Why a URL is no root (``root_url_problem``).
NOT_A_ROOT = "must be a root to append paths to, without a query, a fragment or credentials"


def root_url_problem(url: str) -> str | None:
    """Why ``url`` (an http(s) URL ``http_url_problem`` takes) cannot be a root that paths are
    appended to, or None: ``/api?x=1`` made ``/api?x=1/balance``, and credentials made httpx
    send Basic auth in place of the token. Shared by the settings' roots and the client's
    ``base_url``."""
    parts = urlsplit(url)
    if parts.query or parts.fragment or "#" in url or "@" in parts.netloc:
        return NOT_A_ROOT
    return None


def is_rfc3986_uri(text: str) -> bool:
    """True when ``text`` is an absolute URI as RFC 3986's grammar writes it."""
    # Imported on first use (its regular expressions take 10 ms to build): a start checks no
    # URL with it (the seeded apps are registered as given, tests/identity/test_seed.py).
    from rfc3986_validator import validate_rfc3986  # type: ignore[import-untyped]

    return bool(validate_rfc3986(text, rule="URI"))


def url_characters_problem(url: str) -> str | None:
    """Why the characters of ``url`` make it no URI, or None: the one rule of every URL field
    (webhook endpoints, redirectUrls, product media, an app's redirect URIs, website and
    logo, a user's picture, the root settings). No spaces or control characters (C0, DEL,
    C1: ``urlsplit`` silently drops a tab or a line feed), ASCII only (an IRI is refused, not
    encoded: the sender could not send it and a host would compare in two forms), and RFC
    3986's characters (no ``<``, ``|``, ``{``, no ``%`` without two hex digits)."""
    if any(c.isspace() or unicodedata.category(c) == "Cc" for c in url):
        return "must not contain spaces or control characters"
    if not url.isascii():
        return (
            "must be ASCII, as RFC 3986 writes a URI: percent-encode other characters "
            "(é is %C3%A9) and write an international host name in its xn-- form"
        )
    if not is_rfc3986_uri(url):
        return (
            'must be a URI as RFC 3986 writes it: no <, >, ", {, }, |, \\, ^ or `, '
            "[ ] only around an IP address, % only before two hex digits"
        )
    return None


#: Schemes a browser runs, reads locally or keeps to itself (a web page's link to one does
#: nothing, or worse: ``feed:javascript:``): never a place to send a buyer after paying.
UNSAFE_SCHEMES = frozenset(
    {
        "javascript",
        "vbscript",
        "data",
        "file",
        "blob",
        "about",
        "filesystem",
        "view-source",
        "chrome",
        "chrome-extension",
        "moz-extension",
        "resource",
        "feed",
        "jar",
    }
)
#: What ``{CHECKOUT_ID}`` becomes (a session id), so a URL is checked as it will be used.
_SAMPLE_SESSION_ID = "0" * 24


def success_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a ``successUrl`` (§2: a URI string), or None. An http(s) URL as
    ``http_url_problem`` reads it; any other absolute URI (an app's deep link,
    ``myapp://paid?id={CHECKOUT_ID}``) as RFC 3986 reads it, unless its scheme is one a
    browser runs or reads locally. Checked with ``{CHECKOUT_ID}`` replaced, as it is used."""
    if len(url) > MAX_URL_LENGTH:
        return f"must be at most {MAX_URL_LENGTH} characters"
    used = url.replace("{CHECKOUT_ID}", _SAMPLE_SESSION_ID)
    if not is_rfc3986_uri(used):
        return "must be an absolute URI (http(s), or an app's scheme such as myapp://paid)"
    scheme = used.split(":", 1)[0].lower()
    if scheme in ("http", "https"):
        return http_url_problem(used)
    if scheme in UNSAFE_SCHEMES:
        return f"must not use the {scheme}: scheme"
    return None


#: A ``Host`` value the sandbox reads (RFC 9110 §7.2, RFC 3986 §3.2.2): a DNS name or IPv4
#: address, or an IPv6 literal in brackets, then an optional port of digits. Nothing else:
#: userinfo, a path, a query, a list (waitress joins two Host lines with ", ").
HOST_FIELD = re.compile(r"(?P<name>[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{1,5}))?")
MAX_PORT = 65535


def host_name(header: str) -> str | None:
    """The name of a plain ``host[:port]`` value (``[::1]:8700`` -> ``::1``), lowercased; None
    for anything else (RFC 9112 §3.2: a server answers 400 to an invalid Host)."""
    found = HOST_FIELD.fullmatch(header)
    if found is None or int(found["port"] or 0) > MAX_PORT:
        return None
    return found["name"].strip("[]").lower()
