"""RSA signing keys (spec §5, JWKS), generated from the seed so runs are reproducible.

How the key material follows from the seed: each key draws 64 hex characters from the seeded
id factory (its ``material``); ``random.Random(material)`` then draws the two 1024-bit primes
(top two bits and the low bit set, trial division, then Miller-Rabin with 5 seeded bases as
FIPS 186-4 table C.3 allows for 1024-bit primes, ``gcd(e, p-1) = 1``),
and cryptography builds the private key from them (``RSAPrivateNumbers``). cryptography has no
seeded generator, so the search for primes is the only part written here. Same seed, same
keys; an export keeps each key's material, so an import brings back the same keys.

Rotation: the new key signs from then on; the previous one stays in the JWKS until every token
it signed has expired (the longest-lived is the ID token, 10 hours).
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.digests import sha256_hex
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json

# pyjwt and cryptography are imported where a key is first built or used, not at start-up
# (they cost about a tenth of the whole start), so a run that signs nothing never loads them.
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import rsa

KEY_BITS = 2048
PUBLIC_EXPONENT = 65537
#: The longest a signed token lives (ID token, spec §8): how long a retired key is published.
LONGEST_TOKEN = timedelta(hours=10)
#: What ``kid_of`` makes: an import takes no other key id (the JWKS's ``kid`` is non-empty).
KID_SHAPE = re.compile(r"[0-9a-f]{16}")


def kid_of(material: str) -> str:
    """A key's id: the start of its material's digest, so it follows from the material."""
    return sha256_hex(material)[:16]


def _odd_primes_below(limit: int) -> list[int]:
    """The sieve of Eratosthenes (trial division of each number cost ~8 ms of start-up)."""
    composite = bytearray(limit)
    for n in range(3, int(limit**0.5) + 1, 2):
        if not composite[n]:
            composite[n * n :: 2 * n] = b"\x01" * len(range(n * n, limit, 2 * n))
    return [n for n in range(3, limit, 2) if not composite[n]]


_SMALL_PRIMES = _odd_primes_below(5000)


def _is_probable_prime(n: int, rng: random.Random, rounds: int = 5) -> bool:
    if any(n % p == 0 for p in _SMALL_PRIMES):
        return n in _SMALL_PRIMES
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for _ in range(rounds):
        x = pow(rng.randrange(2, n - 2), d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(rng: random.Random, bits: int) -> int:
    while True:
        candidate = rng.getrandbits(bits) | (3 << (bits - 2)) | 1
        if (candidate - 1) % PUBLIC_EXPONENT and _is_probable_prime(candidate, rng):
            return candidate


@functools.lru_cache(maxsize=64)
def rsa_key_from(material: str, bits: int = KEY_BITS) -> rsa.RSAPrivateKey:
    """The RSA private key that ``material`` determines (cached: tests build many sandboxes
    with the same seed, and the search for primes takes a fraction of a second)."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    rng = random.Random(material)
    p = _prime(rng, bits // 2)
    q = _prime(rng, bits // 2)
    while q == p:
        q = _prime(rng, bits // 2)
    phi = (p - 1) * (q - 1)
    d = pow(PUBLIC_EXPONENT, -1, phi)
    public = rsa.RSAPublicNumbers(PUBLIC_EXPONENT, p * q)
    numbers = rsa.RSAPrivateNumbers(
        p,
        q,
        d,
        rsa.rsa_crt_dmp1(d, p),
        rsa.rsa_crt_dmq1(d, q),
        rsa.rsa_crt_iqmp(p, q),
        public,
    )
    return numbers.private_key()


@dataclass
class SigningKey:
    kid: str
    material: str
    created_at: datetime
    retired_at: datetime | None = None
    #: When a retired key leaves the JWKS (it signed nothing still alive after that).
    published_until: datetime | None = None
    #: The latest sandbox instant it signed a token at: after the clock is set back, later
    #: than the moment it is retired, and its tokens live from there.
    last_signed_at: datetime | None = None

    @property
    def private_key(self) -> rsa.RSAPrivateKey:
        return rsa_key_from(self.material)

    def jwk(self) -> dict[str, Any]:
        from jwt.algorithms import RSAAlgorithm

        jwk: dict[str, Any] = RSAAlgorithm.to_jwk(self.private_key.public_key(), as_dict=True)
        # pyjwt adds key_ops; RFC 7517 §4.3: "use" and "key_ops" SHOULD NOT be used together.
        jwk.pop("key_ops", None)
        return {"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256", **jwk}

    def to_public(self) -> dict[str, Any]:
        return {
            "kid": self.kid,
            "createdAt": isoformat(self.created_at),
            "retiredAt": isoformat(self.retired_at) if self.retired_at else None,
            "publishedUntil": (isoformat(self.published_until) if self.published_until else None),
        }


class KeyService(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.keys: list[SigningKey] = []

    def _new_key(self) -> SigningKey:
        # The kid follows from the material, so the (slower) key itself is only built when
        # something is first signed or the JWKS is first read.
        material = self.ids.text(64, "0123456789abcdef")
        key = SigningKey(kid=kid_of(material), material=material, created_at=self.clock.now())
        self.keys.append(key)
        return key

    @locked
    def active(self) -> SigningKey:
        if not self.keys:
            return self._new_key()
        return self.keys[-1]

    @locked
    def rotate(self) -> SigningKey:
        """A new signing key; the previous one stays published until every token it signed
        has expired: ``LONGEST_TOKEN`` after now, or after its last signature if the clock was
        set back to before that."""
        now = self.clock.now()
        for key in self.keys:
            if key.retired_at is None:
                key.retired_at = now
                last = key.last_signed_at
                key.published_until = max(now, last or now) + LONGEST_TOKEN
        return self._new_key()

    @locked
    def published(self) -> list[SigningKey]:
        now = self.clock.now()
        self.active()
        return [k for k in self.keys if k.published_until is None or now < k.published_until]

    @locked
    def jwks(self) -> dict[str, Any]:
        return {"keys": [k.jwk() for k in self.published()]}

    @locked
    def find(self, kid: str) -> SigningKey | None:
        """A key that verifies tokens now: published in the JWKS."""
        return next((k for k in self.published() if k.kid == kid), None)

    @locked
    def sign(self, claims: dict[str, Any], typ: str) -> str:
        import jwt

        key = self.active()
        now = self.clock.now()
        if key.last_signed_at is None or now > key.last_signed_at:
            key.last_signed_at = now
        return jwt.encode(
            claims, key.private_key, algorithm="RS256", headers={"kid": key.kid, "typ": typ}
        )

    def export(self) -> dict[str, Any]:
        return {"keys": [to_json(k) for k in self.keys]}

    def restore(self, data: dict[str, Any]) -> None:
        self.keys = [from_json(SigningKey, k) for k in data["keys"]]
