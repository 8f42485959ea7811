"""The one seeded random source: every id, token and secret comes from here."""

from __future__ import annotations

import random
import re
import string
from typing import Any

_TOKEN_ALPHABET = string.ascii_letters + string.digits
_URLSAFE_ALPHABET = _TOKEN_ALPHABET + "-_"


_OBJECT_ID = re.compile("[0-9a-f]{24}")


def is_object_id(value: str) -> bool:
    """Whether ``value`` has the shape of an id ``object_id`` draws."""
    return _OBJECT_ID.fullmatch(value) is not None


class IdFactory:
    def __init__(self, seed: int | str) -> None:
        self.seed = seed
        self._random = random.Random(seed)

    def object_id(self) -> str:
        """24 lowercase hex characters, the shape of every resource id."""
        return f"{self._random.getrandbits(96):024x}"

    def text(self, length: int, alphabet: str = _TOKEN_ALPHABET) -> str:
        return "".join(self._random.choice(alphabet) for _ in range(length))

    def product_token(self) -> str:
        return "p_" + self.text(16, _URLSAFE_ALPHABET)

    def api_token(self, environment: str) -> str:
        prefix = "svc_live_" if environment == "production" else "svc_test_"
        return prefix + self.text(32)

    def secret(self, prefix: str = "", length: int = 32) -> str:
        return prefix + self.text(length)

    def export(self) -> dict[str, Any]:
        version, internal, gauss = self._random.getstate()
        return {"seed": self.seed, "state": [version, list(internal), gauss]}

    def restore(self, data: dict[str, Any]) -> None:
        self.seed = data["seed"]
        version, internal, gauss = data["state"]
        self._random.setstate((version, tuple(internal), gauss))
