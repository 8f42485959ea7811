"""The one seeded random source: every id, token and secret comes from here.

A draw that names a record of its kind already is drawn again (``taken``): a create never
replaces a record. In an uninterrupted run that never happens (96 random bits), so the same
seed still makes the same ids; it matters after an import whose id source is behind its
records (ids copied from another export), which would otherwise re-draw existing ids."""

from __future__ import annotations

import hashlib
import random
import re
import string
import threading
from collections.abc import Callable, Container, Mapping
from typing import Any

from svc_sandbox.core.errors import Conflict

_TOKEN_ALPHABET = string.ascii_letters + string.digits
_URLSAFE_ALPHABET = _TOKEN_ALPHABET + "-_"

_OBJECT_ID = re.compile("[0-9a-f]{24}")
#: What ``is_object_id`` takes, in the words of a refusal.
OBJECT_ID_SHAPE = "24 lowercase hex characters"
#: Draws in a row that may each name a taken record before a create gives up: with a source
#: that is not degenerate (``degenerate_problem``) a second one is already beyond belief.
MAX_DRAWS = 64
#: Draws a probe of an imported source takes: a generator stuck on one value repeats at once.
_PROBE_DRAWS = 8


def is_object_id(value: str, prefix: str = "") -> bool:
    """Whether ``value`` has the shape of an id ``object_id`` draws with this ``prefix``."""
    return value.startswith(prefix) and _OBJECT_ID.fullmatch(value, len(prefix)) is not None


class Digested:
    """Records kept under a digest of their value (hashed tokens), as a ``taken`` container:
    ``value in Digested(records, digest)`` asks whether ``digest(value)`` is a key."""

    def __init__(self, records: Mapping[str, Any], digest: Callable[[str], str]) -> None:
        self.records = records
        self.digest = digest

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and self.digest(value) in self.records


class IdFactory:
    def __init__(self, seed: int | str) -> None:
        self.seed = seed
        self._random = random.Random(seed)

    def unused(self, draw: Callable[[], str], taken: Container[str]) -> str:
        """``draw()``, drawn again while it names a record of ``taken``."""
        for _ in range(MAX_DRAWS):
            value = draw()
            if value not in taken:
                return value
        raise Conflict(
            f"the id source drew {MAX_DRAWS} taken ids in a row: import a state whose ids come "
            "from an export"
        )

    def object_id(self, taken: Container[str] = (), prefix: str = "") -> str:
        """``prefix`` and 24 lowercase hex characters, the shape of every resource id."""
        return self.unused(lambda: f"{prefix}{self._random.getrandbits(96):024x}", taken)

    def text(self, length: int, alphabet: str = _TOKEN_ALPHABET) -> str:
        """``length`` characters of ``alphabet``, each drawn as ``random.choice`` draws (the
        alphabet's bit length of random bits, drawn again while past its end), written out:
        three calls a character cost a fresh Sandbox (its seeded tokens and secrets) about a
        tenth of its instructions. The same seed gives the same characters as ``choice`` did."""
        size = len(alphabet)
        bits = size.bit_length()
        draw = self._random.getrandbits
        chosen = []
        for _ in range(length):
            index = draw(bits)
            while index >= size:
                index = draw(bits)
            chosen.append(alphabet[index])
        return "".join(chosen)

    def product_token(self, taken: Container[str] = ()) -> str:
        return self.unused(lambda: "p_" + self.text(16, _URLSAFE_ALPHABET), taken)

    def api_token(self, environment: str, taken: Container[str] = ()) -> str:
        prefix = api_token_prefix(environment)
        return self.unused(lambda: prefix + self.text(32), taken)

    def secret(self, prefix: str = "", length: int = 32, taken: Container[str] = ()) -> str:
        return self.unused(lambda: prefix + self.text(length), taken)

    def export(self) -> dict[str, Any]:
        version, internal, gauss = self._random.getstate()
        return {"seed": self.seed, "state": [version, list(internal), gauss]}

    def restore(self, data: dict[str, Any]) -> None:
        self.seed = data["seed"]
        version, internal, gauss = data["state"]
        self._random.setstate((version, tuple(internal), gauss))


def api_token_prefix(environment: str) -> str:
    """What an API token of ``environment`` starts with (spec §5: live and test keys)."""
    return "svc_live_" if environment == "production" else "svc_test_"


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
        self._issued = 0
        self._key_stream(self._seed)

    def _key_stream(self, key: bytes) -> None:
        self._key = key
        # The hash of ``key:requests:`` so far; each id hashes on from a copy of it (the same
        # digest as hashing the whole text, without building it and a new hasher per id).
        self._prefix = hashlib.blake2b(key + b":requests:", digest_size=12)

    def next(self) -> str:
        with self._lock:
            count = self._issued
            self._issued += 1
            prefix = self._prefix
        digest = prefix.copy()
        digest.update(str(count).encode())
        return "req_" + digest.hexdigest()

    def restart(self) -> None:
        """Back to the stream of a fresh start (a reset)."""
        with self._lock:
            self._issued = 0
            self._key_stream(self._seed)

    def branch(self, material: str) -> None:
        """A new stream, keyed by this one's key, its count and ``material`` (an import's id
        source)."""
        with self._lock:
            seen = self._key + b":" + str(self._issued).encode() + b":" + material.encode()
            self._issued = 0
            self._key_stream(hashlib.blake2b(seen, digest_size=16).hexdigest().encode())


def degenerate_problem(state: list[Any]) -> str | None:
    """Why an exported ``ids.state`` can be no source of ids (None when it can): a generator
    whose next draws repeat (the all-zero Mersenne Twister state draws 0 forever: every id
    000..., every token p_aaaa...)."""
    version, internal, gauss = state
    probe = random.Random()
    try:
        probe.setstate((version, tuple(internal), gauss))
    except ValueError:  # version and length are the format's: the position is past the words
        return (
            f"state[1][624] is {internal[-1]}, which must be 0 to 624 (the generator's position "
            "among its words: take one from an export)"
        )
    draws = {probe.getrandbits(96) for _ in range(_PROBE_DRAWS)}
    if len(draws) < _PROBE_DRAWS:
        return (
            "state is a degenerate generator state: its next draws repeat (take one from an export)"
        )
    return None
