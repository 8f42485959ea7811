"""Ethiopian mobile numbers in the three formats of spec §2: 2519XXXXXXXX, 09XXXXXXXX, 9XXXXXXXX."""

from __future__ import annotations

import re

PHONE = re.compile(r"^(?:2519\d{8}|09\d{8}|9\d{8})$")
PHONE_FORMATS = "2519XXXXXXXX, 09XXXXXXXX or 9XXXXXXXX"


def check_phone(value: str) -> str:
    """``value`` unchanged when it is a phone in one of the spec's formats, else ValueError."""
    if not PHONE.match(value):
        raise ValueError(f"must be a phone number in the format {PHONE_FORMATS}")
    return value
