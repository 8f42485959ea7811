"""The SHA-256 digests kept in place of a secret (an app's secret, a user's password, a token,
a code, a browser session), their shape, and the one way a secret is compared in constant
time."""

from __future__ import annotations

import hashlib
import hmac
import re

#: What ``sha256_hex`` makes: an import refuses a digest of any other shape (state_format.py).
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
SHA256_HEX_WORDS = "64 lowercase hex characters (a SHA-256 digest)"


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def constant_time_equal(given: str, expected: str) -> bool:
    """Whether two texts are equal, in time that does not tell where they differ. Compared as
    bytes: ``hmac.compare_digest`` of two ``str`` raises TypeError when either holds a
    non-ASCII character (a 500), and a request, a form or a stored record can hold one.
    ``surrogatepass``: a lone surrogate (JSON's ``"\\ud800"``) encodes too."""
    return hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )
