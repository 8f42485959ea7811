"""The one seeded random source: every id, token and secret comes from here."""

from __future__ import annotations

import hashlib
import random
import re
import string
import threading
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


class RequestIds:
    """The ``X-Request-Id`` stream: the ``n``-th id of a stream is a hash of the stream's key and
    ``n``. A fresh start, and a reset, begin the stream keyed by the seed (so a reset gives
    the ids of a fresh start). An import branches it: the new key is a hash of the old key,
    the count reached and the imported id source, so the ids go on without repeating any this
    process (or the one that exported) gave out, and the same seed, requests and documents
    give the same ids. It is not exported (an export is the same whatever was read); it
    never draws from the ``IdFactory`` (reads never shift resource ids); its own small lock,
    so taking one never waits for the state lock (a long advance, an export)."""

    def __init__(self, seed: int | str) -> None:
        self._seed = str(seed).encode()
        self._lock = threading.Lock()
        self._key = self._seed
        self._issued = 0

    def next(self) -> str:
        with self._lock:
            count = self._issued
            self._issued += 1
            key = self._key
        return (
            "req_"
            + hashlib.blake2b(key + b":requests:" + str(count).encode(), digest_size=12).hexdigest()
        )

    def restart(self) -> None:
        """Back to the stream of a fresh start (a reset)."""
        with self._lock:
            self._key, self._issued = self._seed, 0

    def branch(self, material: str) -> None:
        """A new stream, keyed by this one's key, its count and ``material`` (an import's id
        source)."""
        with self._lock:
            seen = self._key + b":" + str(self._issued).encode() + b":" + material.encode()
            self._key, self._issued = hashlib.blake2b(seen, digest_size=16).hexdigest().encode(), 0
