"""Browser sessions of the sign-in page, and CSRF tokens for the sign-in and consent forms.

A browser gets a ``browser id`` cookie on its first page with a form; each form carries an
HMAC of that id under the per-process secret of the hosted pages' forms (exposure.FormTokens)
and a POST must present both (double submit, bound to a server key). Like the hosted pages'
tokens, the browser id and the key are not from the seeded id factory on purpose: a seed is
public, so they could be forged, and a page view then draws no seeded id (later ids, tokens
and bodies stay the same). The signed-in session is another cookie naming a stored session,
from the seeded id factory like every token.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.expiry import ExpiryQueue
from svc_sandbox.core.ids import Digested
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.exposure import FormTokens
from svc_sandbox.identity.lifetime import Lapses, ended, not_yet
from svc_sandbox.identity.tokens import digest, kept_after_expiry
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
    #: The sandbox clock has reached its end (identity/lifetime.py): a set back keeps it ended.
    lapsed: bool = False


class BrowserSessionService(Service):
    def __init__(self, ctx: ServiceContext, users: UserService) -> None:
        super().__init__(ctx)
        self.users = users
        self.sessions: dict[str, BrowserSession] = {}
        self.forms = FormTokens()
        self._expiry = ExpiryQueue()
        self._lapses = Lapses(self.sessions)

    @locked
    def prune(self) -> None:
        """Drops sessions expired for longer than ``identity_expired_kept_hours`` (one
        never used, or never signed out of, is no longer kept for good)."""
        kept = kept_after_expiry(self.ctx)
        now = self.clock.now()
        self._lapses.mark(now)

        def until(sha: str) -> datetime | None:
            session = self.sessions.get(sha)
            return None if session is None else session.expires_at + kept

        for sha in self._expiry.expired(now, until):
            del self.sessions[sha]

    @staticmethod
    def new_browser_id() -> str:
        return "br_" + secrets.token_urlsafe(24)

    def csrf_token(self, browser_id: str) -> str:
        return self.forms.issue("identity-browser:" + browser_id)

    def csrf_ok(self, browser_id: str | None, token: str | None) -> bool:
        if not browser_id:
            return False
        return self.forms.valid("identity-browser:" + browser_id, token)

    @locked
    def sign_in(self, user_id: str) -> str:
        """A new signed-in session for ``user_id``; returns the cookie value."""
        self.users.get(user_id)
        self.prune()
        value = self.ids.secret("ses_", 40, Digested(self.sessions, digest))
        now = self.clock.now()
        session = self.sessions[digest(value)] = BrowserSession(
            session_sha256=digest(value),
            user_id=user_id,
            auth_time=now,
            expires_at=now + SESSION_TTL,
        )
        self._lapses.add(digest(value), session)
        self._expiry.add(now + SESSION_TTL + kept_after_expiry(self.ctx), digest(value))
        return value

    @locked
    def current(self, value: str | None) -> tuple[User, BrowserSession] | None:
        """The signed-in user of a session cookie, or None (unknown, expired, user gone, or
        signed in after the current sandbox time: the clock was set back, so the user signs in
        again and an ID token's ``auth_time`` is never after its ``iat``)."""
        self.prune()
        if not value:
            return None
        session = self.sessions.get(digest(value))
        now = self.clock.now()
        if session is None or ended(session, now) or not_yet(session.auth_time, now):
            return None
        user = self.users.find(session.user_id)
        return (user, session) if user is not None else None

    @locked
    def sign_out(self, value: str) -> None:
        self.sessions.pop(digest(value), None)

    def export(self) -> dict[str, Any]:
        self.prune()  # what is due is gone in the export as in every answer
        return {"sessions": [to_json(s) for s in self.sessions.values()]}

    def restore(self, data: dict[str, Any]) -> None:
        self.sessions = {
            s["session_sha256"]: from_json(BrowserSession, s) for s in data["sessions"]
        }
        kept = kept_after_expiry(self.ctx)
        self._expiry = ExpiryQueue((s.expires_at + kept, sha) for sha, s in self.sessions.items())
        self._lapses = Lapses(self.sessions)
