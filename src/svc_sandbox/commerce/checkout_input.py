"""The input rules of POST /checkout that the spec words to the letter (§4, §7, §8).

Pydantic checks types and shapes at the edge; the custom-amount fields, metadata and phone
numbers are checked here by hand, because §7 quotes their messages exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.numbers import number_text

MIN_CUSTOM_AMOUNT = 100
MAX_AMOUNT = 100_000_000_000  # as the product money fields: far above any real figure
DESCRIPTION_MAX = 120
METADATA_MAX_KEYS = 20
METADATA_KEY_MAX = 40
METADATA_VALUE_MAX = 500

PRODUCT_ID_REQUIRED = "productId is required"
DESCRIPTION_REQUIRED = (
    "description is required when productId is omitted (what the buyer is paying for)"
)
DESCRIPTION_TOO_LONG = "description must be at most 120 characters"
AMOUNT_REQUIRED = (
    "amount is required when productId is omitted: an integer in ETB minor units, "
    "at least 100 (1.00 ETB)"
)
METADATA_NOT_OBJECT = "metadata must be an object of string values"
METADATA_TOO_MANY = "metadata can have at most 20 keys"

#: The three phone formats of §2 Customer; all normalize to 2519XXXXXXXX.
#: ASCII digits only: ``\d`` would also take Arabic-Indic and other Unicode digits.
_PHONE = re.compile(r"(?:2519|09|9)([0-9]{8})")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
PHONE_FORMATS = "2519XXXXXXXX, 09XXXXXXXX or 9XXXXXXXX"


def is_integer(value: Any) -> bool:
    """A JSON integer: not a boolean, not a float (150.0 is not an integer amount)."""
    return isinstance(value, int) and not isinstance(value, bool)


def custom_description(value: Any) -> str:
    """§4: required, 1..120 characters after trimming."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationFailed(DESCRIPTION_REQUIRED)
    text = value.strip()
    if len(text) > DESCRIPTION_MAX:
        raise ValidationFailed(DESCRIPTION_TOO_LONG)
    return text


def custom_amount(value: Any) -> int:
    """§4/§8: an integer number of santim, at least 100."""
    if not is_integer(value) or value < MIN_CUSTOM_AMOUNT:
        raise ValidationFailed(AMOUNT_REQUIRED)
    if value > MAX_AMOUNT:
        raise ValidationFailed(f"amount must be at most {MAX_AMOUNT}")
    result: int = value
    return result


def pwyw_amount(value: Any, minimum: int) -> int:
    """§4: required for a pay-what-you-want product, at or above its minimum."""
    if value is None:
        raise ValidationFailed("amount is required for pay-what-you-want products")
    if not is_integer(value):
        raise ValidationFailed("amount must be an integer in ETB minor units")
    check_pwyw_bounds(value, minimum)
    result: int = value
    return result


def check_pwyw_bounds(value: int, minimum: int, shown: Callable[[int], str] = str) -> None:
    """§4 "at or above the product's minimum", and the ceiling of every amount; the figures
    ``shown`` as santim (the API) or as ETB (the product page, whose form asks in ETB)."""
    if value < minimum:
        raise ValidationFailed(f"amount must be at least {shown(minimum)} (the product's minimum)")
    if value > MAX_AMOUNT:
        raise ValidationFailed(f"amount must be at most {shown(MAX_AMOUNT)}")


IGNORED_AMOUNT = (
    "amount must be an integer in ETB minor units (ignored for fixed and free products)"
)


def ignored_amount(value: Any) -> None:
    """§4: ``amount`` is "Ignored for fixed and free", and typed integer: any integer (-5
    too: a client may send a placeholder the real service ignores) or null is ignored,
    another type (a string, 1.5) is a client bug, refused."""
    if value is not None and not is_integer(value):
        raise ValidationFailed(IGNORED_AMOUNT)


def stringify(value: Any) -> str:
    """How a metadata or collected-field value is stored: numbers and booleans as JSON
    writes them (``true``, ``1.5``, ``100`` for ``1e2``: Python wrote ``100.0``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return number_text(value)
    return str(value)


def metadata_key_problem(key: str) -> str | None:
    """What is wrong with a metadata key (checkout's and the product schema's one rule)."""
    if 1 <= len(key) <= METADATA_KEY_MAX:
        return None
    return f"must be 1 to {METADATA_KEY_MAX} characters"


def metadata(value: Any) -> dict[str, str]:
    """§4/§7/§8: at most 20 keys of 1..40 characters; string, number or boolean values,
    stored as strings of at most 500 characters."""
    if not isinstance(value, dict):
        raise ValidationFailed(METADATA_NOT_OBJECT)
    if len(value) > METADATA_MAX_KEYS:
        raise ValidationFailed(METADATA_TOO_MANY)
    stored: dict[str, str] = {}
    for key, item in value.items():
        problem = metadata_key_problem(key)
        if problem:
            raise ValidationFailed(f"metadata keys {problem}")
        if not isinstance(item, str | int | float | bool):
            raise ValidationFailed(f"metadata.{key} must be a string, number or boolean")
        text = stringify(item)
        if len(text) > METADATA_VALUE_MAX:
            raise ValidationFailed(
                f"metadata.{key} must be at most {METADATA_VALUE_MAX} characters"
            )
        stored[key] = text
    return stored


def merge_metadata(*layers: dict[str, str]) -> dict[str, str]:
    """§2 Order.metadata: product, then checkout link, then request; later wins."""
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update(layer)
    return merged


PHONE_MESSAGE = f"must be a phone number like {PHONE_FORMATS}"
EMAIL_MESSAGE = "must be a valid email address"


def normalize_phone(value: str) -> str:
    """One of the three formats of §2, as 2519XXXXXXXX (ValueError otherwise)."""
    match = _PHONE.fullmatch(value.strip())
    if match is None:
        raise ValueError(PHONE_MESSAGE)
    return "2519" + match.group(1)


#: A checkout link's token (§4 ``checkoutLink``: "string starting ``cl_``"). That is its one
#: shape: any such string is taken, and one that names no applicable link is ignored, never
#: an error (§4); another string is a client bug, refused.
CHECKOUT_LINK_PREFIX = "cl_"
CHECKOUT_LINK_MESSAGE = f"must be a checkout link token: a string starting {CHECKOUT_LINK_PREFIX}"


def check_checkout_link(value: str) -> str:
    if not value.startswith(CHECKOUT_LINK_PREFIX):
        raise ValueError(CHECKOUT_LINK_MESSAGE)
    return value


def check_email(value: str) -> str:
    value = value.strip()
    if len(value) > 254 or not _EMAIL.fullmatch(value):
        raise ValueError(EMAIL_MESSAGE)
    return value
