"""Browser sessions of the sign-in page, and CSRF tokens for the sign-in and consent forms.

A browser gets a ``browser id`` cookie on its first page; each form carries
``HMAC-SHA256(csrf key, browser id)`` and a POST must present both (double submit, bound to
a server key). The signed-in session is another cookie naming a stored session. Both come
from the seeded id factory, so they are reproducible like everything else.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.identity.tokens import digest
from svc_sandbox.identity.users import User, UserService

#: How long a sign-in lasts (not in the spec; see docs/spec-gaps.md).
SESSION_TTL = timedelta(hours=12)
SESSION_COOKIE = "svc_sandbox_session"
BROWSER_COOKIE = "svc_sandbox_browser"


@dataclass
class BrowserSession:
    session_sha256: str
    user_id: str
    auth_time: datetime
    expires_at: datetime


class BrowserSessionService(Service):
    def __init__(self, ctx: ServiceContext, users: UserService) -> None:
        super().__init__(ctx)
        self.users = users
        self.sessions: dict[str, BrowserSession] = {}
        self.csrf_key = ""

    @locked
    def _key(self) -> bytes:
        """The CSRF key (drawn when the identity state is seeded)."""
        if not self.csrf_key:
            self.csrf_key = self.ids.secret("", 32)
        return self.csrf_key.encode()

    @locked
    def new_browser_id(self) -> str:
        return self.ids.secret("br_", 24)

    def csrf_token(self, browser_id: str) -> str:
        return hmac.new(self._key(), browser_id.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, browser_id: str | None, token: str | None) -> bool:
        if not browser_id or not token:
            return False
        return hmac.compare_digest(self.csrf_token(browser_id).encode(), token.encode())

    @locked
    def sign_in(self, user_id: str) -> str:
        """A new signed-in session for ``user_id``; returns the cookie value."""
        self.users.get(user_id)
        value = self.ids.secret("ses_", 40)
        now = self.clock.now()
        self.sessions[digest(value)] = BrowserSession(
            session_sha256=digest(value),
            user_id=user_id,
            auth_time=now,
            expires_at=now + SESSION_TTL,
        )
        return value

    @locked
    def current(self, value: str | None) -> tuple[User, BrowserSession] | None:
        """The signed-in user of a session cookie, or None (unknown, expired, user gone)."""
        if not value:
            return None
        session = self.sessions.get(digest(value))
        if session is None or self.clock.now() >= session.expires_at:
            return None
        user = self.users.find(session.user_id)
        return (user, session) if user is not None else None

    @locked
    def sign_out(self, value: str) -> None:
        self.sessions.pop(digest(value), None)

    def export(self) -> dict[str, Any]:
        return {
            "csrfKey": self.csrf_key,
            "sessions": [to_json(s) for s in self.sessions.values()],
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.csrf_key = data["csrfKey"]
        self.sessions = {
            s["session_sha256"]: from_json(BrowserSession, s) for s in data["sessions"]
        }
