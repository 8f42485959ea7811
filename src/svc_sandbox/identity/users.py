"""Users of the identity provider (spec §2 "Identity claims"), shared with the wallet API:
one user, one wallet. ``User.id`` is the ``sub``: a stable, seeded 24-hex id."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.digests import constant_time_equal, sha256_hex
from svc_sandbox.core.emails import email_key
from svc_sandbox.core.errors import Conflict, ValidationFailed, found
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.core.validation import one_of
from svc_sandbox.identity.apps import check_app_url
from svc_sandbox.identity.params import has_control_characters

KYC_STATUSES = ("not_started", "pending", "approved", "rejected")
HANDLE_SHAPE = re.compile(r"[a-z0-9][a-z0-9_-]{1,29}")
HANDLE_WORDS = "2 to 30 characters: lowercase letters, digits, '-' or '_'"
EMAIL_SHAPE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def default_email(handle: str) -> str:
    return f"{handle}@users.sandbox.test"


def _check_password(password: str) -> None:
    """A password the sign-in accepts: it refuses a parameter with control characters, so a
    user given one could never sign in."""
    if has_control_characters(password):
        raise ValidationFailed(
            "password must not contain control characters (the sign-in refuses them)"
        )


def password_hash(password: str) -> str:
    """Sandbox passwords are stored hashed like secrets (SHA-256; no need for a slow KDF)."""
    return sha256_hex(password)


@dataclass
class User:
    id: str
    handle: str
    name: str
    given_name: str
    family_name: str
    picture: str
    email: str
    email_verified: bool
    #: "approved" means the user may send from their wallet (spec §5 wallet API).
    kyc: str
    password: str
    created_at: datetime
    password_sha256: str = ""

    def claims(self, namespace: str) -> dict[str, Any]:
        """Every claim of spec §2 (the scope filter is applied by the caller)."""
        return {
            "sub": self.id,
            "name": self.name,
            "picture": self.picture,
            "given_name": self.given_name,
            "family_name": self.family_name,
            f"{namespace}/handle": self.handle,
            "email": self.email,
            "email_verified": self.email_verified,
        }

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "handle": self.handle,
            "name": self.name,
            "givenName": self.given_name,
            "familyName": self.family_name,
            "picture": self.picture,
            "email": self.email,
            "emailVerified": self.email_verified,
            "kyc": self.kyc,
            "password": self.password,
            "createdAt": isoformat(self.created_at),
        }


class UserService(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.users: dict[str, User] = {}

    @locked
    def create(
        self,
        handle: str | None = None,
        name: str | None = None,
        given_name: str | None = None,
        family_name: str | None = None,
        email: str | None = None,
        email_verified: bool = True,
        picture: str | None = None,
        kyc: str = "approved",
        password: str | None = None,
    ) -> User:
        """A user; every claim is optional and gets a seeded default. Everything given is
        checked before an id is drawn, so a refused request changes nothing."""
        if handle is not None:
            self._check_handle(handle, None)
            if email is None:
                email = default_email(handle)
        if email is not None:
            self._check_email(email, None)
        if picture is not None:
            check_app_url(picture, "picture")
        if password is not None:
            _check_password(password)
        one_of(kyc, KYC_STATUSES, "kyc")
        user_id = self.ids.object_id(self.users)
        handle = handle if handle is not None else f"user-{user_id[:8]}"
        given = given_name if given_name is not None else (name or "Test").split(" ")[0]
        family = family_name if family_name is not None else f"User {user_id[:6]}"
        if name is None:
            name = f"{given} {family}"
        email = email if email is not None else default_email(handle)
        password = password if password is not None else self.ids.secret("pw_", 16)
        user = User(
            id=user_id,
            handle=handle,
            name=name,
            given_name=given,
            family_name=family,
            picture=picture or f"https://avatars.sandbox.test/{handle}.png",
            email=email,
            email_verified=email_verified,
            kyc=kyc,
            password=password,
            password_sha256=password_hash(password),
            created_at=self.clock.now(),
        )
        self.users[user.id] = user
        return user

    def _check_handle(self, handle: str, user_id: str | None) -> None:
        if not HANDLE_SHAPE.fullmatch(handle):
            raise ValidationFailed(f"handle must be {HANDLE_WORDS}")
        other = self._by_handle(handle)
        if other is not None and other.id != user_id:
            raise Conflict(f"handle {handle} is taken")

    def _check_email(self, email: str, user_id: str | None) -> None:
        """An address, and no other user's: the sign-in finds a user by it."""
        if not EMAIL_SHAPE.fullmatch(email) or len(email) > 254:
            raise ValidationFailed("email must be an email address")
        other = self._by_email(email)
        if other is not None and other.id != user_id:
            raise Conflict(f"email {email} is taken")

    @locked
    def update(
        self,
        user_id: str,
        *,
        handle: str | None = None,
        name: str | None = None,
        given_name: str | None = None,
        family_name: str | None = None,
        email: str | None = None,
        email_verified: bool | None = None,
        picture: str | None = None,
        kyc: str | None = None,
        password: str | None = None,
    ) -> User:
        """Changes claims, KYC or password; ``None`` leaves a field as it is. Every value is
        checked before anything changes."""
        user = self.get(user_id)
        if handle is not None:
            self._check_handle(handle, user.id)
        if email is not None:
            self._check_email(email, user.id)
        if picture is not None:
            check_app_url(picture, "picture")
        if kyc is not None:
            one_of(kyc, KYC_STATUSES, "kyc")
        if password is not None:
            _check_password(password)
        changes = {
            "handle": handle,
            "name": name,
            "given_name": given_name,
            "family_name": family_name,
            "email": email,
            "email_verified": email_verified,
            "picture": picture,
            "kyc": kyc,
            "password": password,
        }
        for key, value in changes.items():
            if value is not None:
                setattr(user, key, value)
        if password is not None:
            user.password_sha256 = password_hash(password)
        return user

    @locked
    def find(self, user_id: str) -> User | None:
        return self.users.get(user_id)

    @locked
    def get(self, user_id: str) -> User:
        return found(self.users.get(user_id), f"user {user_id} not found")

    def _by_handle(self, handle: str) -> User | None:
        return next((u for u in self.users.values() if u.handle == handle), None)

    def _by_email(self, email: str) -> User | None:
        """Addresses compare as ``email_key`` reads them (without case, in one Unicode form;
        handles are lowercase only): ``Abebe@…`` is abebe's."""
        wanted = email_key(email)
        return next((u for u in self.users.values() if email_key(u.email) == wanted), None)

    @locked
    def by_handle(self, handle: str) -> User | None:
        return self._by_handle(handle)

    @locked
    def all(self) -> list[User]:
        return list(self.users.values())

    @locked
    def check_password(self, handle_or_email: str, password: str) -> User | None:
        """The user whose handle or email and password match, compared in constant time."""
        user = self._by_handle(handle_or_email) or self._by_email(handle_or_email)
        given = password_hash(password)
        expected = user.password_sha256 if user is not None else password_hash("\0")
        if constant_time_equal(given, expected) and user is not None:
            return user
        return None

    def export(self) -> dict[str, Any]:
        return {"users": [to_json(u) for u in self.users.values()]}

    def restore(self, data: dict[str, Any]) -> None:
        self.users = {u["id"]: from_json(User, u) for u in data["users"]}
