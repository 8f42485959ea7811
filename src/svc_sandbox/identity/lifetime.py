"""When an identity record is live: one rule for codes, access tokens (JWT and opaque), refresh
tokens and sign-in sessions, asked by every check (userinfo, the wallet, introspection, the
token endpoint, the sign-in pages), so that no two of them disagree.

* A record ends at its expiry cut to the whole second: the ``exp`` its JWT and introspection
  show (RFC 7519 NumericDate). It is live strictly before that instant.
* Once the sandbox clock has reached that instant the record stays ended: setting the clock
  back does not revive it. Its service marks it ``lapsed`` as the clock passes (each call and
  each move of the clock prunes first, and a set back prunes before it moves, sandbox.py); the
  flag is a field of the record, so an export keeps it.
* A record issued after the current sandbox time (the clock was set back past its ``iat``) is
  not live yet, as a client checking ``iat`` against the sandbox clock sees it; so an ID token's
  ``auth_time`` is never after its ``iat`` (docs/spec-gaps.md, "Setting the clock backwards").
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

from svc_sandbox.core.expiry import ExpiryQueue


class Lapsing(Protocol):
    expires_at: datetime
    lapsed: bool


def whole_second(instant: datetime) -> datetime:
    """``instant`` cut to the whole second (the sandbox clock never reads before 1970, so this
    is the floor, as a JWT's NumericDate is)."""
    return instant.replace(microsecond=0)


def ended(record: Lapsing, now: datetime) -> bool:
    """Past its lifetime at ``now``, or at any time the clock reached while it existed."""
    return record.lapsed or now >= whole_second(record.expires_at)


def not_yet(issued_at: datetime, now: datetime) -> bool:
    """Issued after ``now``, in whole seconds as ``iat`` is (the clock was set back)."""
    return now < whole_second(issued_at)


class Lapses:
    """The records of one kind by the instant they end (a heap, as ExpiryQueue): ``mark`` flags
    each one the clock has reached, so a call costs a look at the soonest entry."""

    def __init__(self, records: Mapping[str, Lapsing]) -> None:
        self._records = records
        self._queue = ExpiryQueue(
            (whole_second(r.expires_at), key) for key, r in records.items() if not r.lapsed
        )

    def add(self, key: str, record: Lapsing) -> None:
        self._queue.add(whole_second(record.expires_at), key)

    def mark(self, now: datetime) -> None:
        def until(key: str) -> datetime | None:
            record = self._records.get(key)
            return None if record is None or record.lapsed else whole_second(record.expires_at)

        for key in self._queue.expired(now, until):
            self._records[key].lapsed = True
