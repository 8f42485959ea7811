"""Tokens of the identity provider: grants, access tokens (opaque or RFC 9068 JWT), refresh
token families, ID tokens; verification for userinfo and for the wallet resource server;
introspection (RFC 7662) and revocation (RFC 7009).

Lifetimes (spec §5, §8): access 1 h, ID 10 h, refresh 30 days; when a token is live is
identity/lifetime.py's rule (every check asks it). Tokens are stored by the SHA-256 of their
value, so a lookup compares digests, never the secret itself.

Records past their lifetime are kept ``Settings.identity_expired_kept_hours`` more (so an
error still says "expired" or "revoked"), then dropped: an access token on its own; a grant
with every refresh token of its family and the rest of its access tokens once the family's
last token is that far past its expiry (a rotated refresh token is kept as long as its family
lives, so a second use still revokes the family, spec §5.8).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.digests import sha256_hex
from svc_sandbox.core.expiry import ExpiryQueue
from svc_sandbox.core.ids import Digested
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.identity.apps import App, AppService
from svc_sandbox.identity.errors import InsufficientScope, InvalidGrant, InvalidScope, InvalidToken
from svc_sandbox.identity.keys import KeyService
from svc_sandbox.identity.lifetime import Lapses, ended, not_yet
from svc_sandbox.identity.scopes import OFFLINE_ACCESS, OPENID, claim_names, scope_string
from svc_sandbox.identity.users import UserService

ACCESS_TTL = timedelta(hours=1)
ID_TOKEN_TTL = timedelta(hours=10)
REFRESH_TTL = timedelta(days=30)
ACCESS_JWT_TYPES = ("at+jwt", "application/at+jwt")
#: A token with two dots whose parts do not decode (RFC 7515 §7.1, the JWS compact form).
MALFORMED_JWT = (
    "access token is malformed: a JWT is three base64url parts joined by dots, the first a "
    "JSON object (its header)"
)


def digest(value: str) -> str:
    return sha256_hex(value)


def kept_after_expiry(ctx: ServiceContext) -> timedelta:
    """How long an expired identity record is kept before it is dropped (a setting)."""
    return timedelta(hours=ctx.settings.identity_expired_kept_hours)


def epoch(instant: datetime) -> int:
    return int(instant.timestamp())


def issuable(app: App, scopes: list[str]) -> list[str]:
    """The scopes a token issued now carries: the granted (maybe narrowed) ``scopes`` that
    ``app`` is still allowed. Withdrawn ones are dropped, which the token response's ``scope``
    shows (spec §4: "may be fewer than requested"); none left is ``invalid_scope``."""
    remaining = app.permitted(scopes)
    if not remaining:
        raise InvalidScope(
            f"scope: none of {scope_string(scopes)} is allowed for this app any more"
        )
    return remaining


def at_hash(access_token: str) -> str:
    """OpenID Connect Core §3.1.3.6: left half of SHA-256, base64url without padding."""
    half = hashlib.sha256(access_token.encode("ascii")).digest()[:16]
    return base64.urlsafe_b64encode(half).rstrip(b"=").decode()


@dataclass
class Grant:
    """One authorization of a user for a client: the code and every token issued from it
    (a refresh token family) share it; revoking it revokes them all."""

    id: str
    user_id: str
    client_id: str
    scopes: list[str]
    auth_time: datetime
    created_at: datetime
    nonce: str | None = None
    revoked: bool = False
    revoked_reason: str | None = None


@dataclass
class AccessToken:
    jti: str
    grant_id: str
    client_id: str
    user_id: str
    scopes: list[str]
    #: {resource_url} for a JWT access token; None for an opaque one.
    resource: str | None
    issued_at: datetime
    expires_at: datetime
    token_sha256: str
    revoked: bool = False
    #: The sandbox clock has reached its end (identity/lifetime.py): a set back keeps it ended.
    lapsed: bool = False


@dataclass
class RefreshToken:
    token_sha256: str
    grant_id: str
    client_id: str
    user_id: str
    issued_at: datetime
    expires_at: datetime
    #: Used once already (rotated): a second use is the compromise signal of spec §5.8.
    rotated: bool = False
    revoked: bool = False
    #: The sandbox clock has reached its end (identity/lifetime.py): a set back keeps it ended.
    lapsed: bool = False


@dataclass
class Family:
    """The records of one grant (derived from them, so not exported): the digests of its
    access and refresh tokens, and the latest expiry of any of them (the grant's creation
    while it has none)."""

    ends: datetime
    access: dict[str, None] = field(default_factory=dict)
    refresh: list[str] = field(default_factory=list)

    def lasts_to(self, expires_at: datetime) -> None:
        self.ends = max(self.ends, expires_at)


@dataclass(frozen=True)
class ResourceGrant:
    """What the wallet resource server learns from a valid JWT access token."""

    sub: str
    client_id: str
    scopes: frozenset[str]
    jti: str
    expires_at: datetime


class TokenService(Service):
    def __init__(
        self, ctx: ServiceContext, users: UserService, apps: AppService, keys: KeyService
    ) -> None:
        super().__init__(ctx)
        self.users = users
        self.apps = apps
        self.keys = keys
        self.grants: dict[str, Grant] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        #: jti -> digest of the access token (JWT access tokens are checked by jti).
        self.jti_index: dict[str, str] = {}
        self._index()

    def _index(self) -> None:
        """The derived indexes of the records: each grant's family, and when access tokens
        and families come due to be dropped."""
        kept = kept_after_expiry(self.ctx)
        self.families = {g.id: Family(ends=g.created_at) for g in self.grants.values()}
        #: Grants dropped since the authorization service last asked (it drops their codes).
        self._dropped_grants: list[str] = []
        # A token naming no grant is only in an import taken with state_references = skip:
        # it has no family, and answers as an unknown token where it is used.
        for sha, access in self.access.items():
            family = self.families.get(access.grant_id)
            if family is not None:
                family.access[sha] = None
                family.lasts_to(access.expires_at)
        for sha, refresh in self.refresh.items():
            family = self.families.get(refresh.grant_id)
            if family is not None:
                family.refresh.append(sha)
                family.lasts_to(refresh.expires_at)
        self._access_expiry = ExpiryQueue(
            (a.expires_at + kept, sha) for sha, a in self.access.items()
        )
        self._family_expiry = ExpiryQueue(
            (family.ends + kept, gid) for gid, family in self.families.items()
        )
        self._access_lapses = Lapses(self.access)
        self._refresh_lapses = Lapses(self.refresh)

    @locked
    def prune(self) -> None:
        """Drops what is past its lifetime by more than the setting (module docstring): the
        due entries only, so a call that finds none costs one comparison."""
        now = self.clock.now()
        kept = kept_after_expiry(self.ctx)
        self._access_lapses.mark(now)
        self._refresh_lapses.mark(now)

        def access_until(sha: str) -> datetime | None:
            access = self.access.get(sha)
            return None if access is None else access.expires_at + kept

        def family_until(grant_id: str) -> datetime | None:
            # A family refreshed since it was queued comes due again at its new end.
            family = self.families.get(grant_id)
            return None if family is None else family.ends + kept

        for sha in self._access_expiry.expired(now, access_until):
            access = self.access[sha]
            self._drop_access(sha, access)
            family = self.families.get(access.grant_id)
            if family is not None:
                family.access.pop(sha, None)
        for grant_id in self._family_expiry.expired(now, family_until):
            family = self.families[grant_id]
            for sha in family.access:
                self._drop_access(sha, self.access[sha])
            for sha in family.refresh:
                del self.refresh[sha]
            del self.families[grant_id]
            del self.grants[grant_id]
            self._dropped_grants.append(grant_id)

    def take_dropped_grants(self) -> list[str]:
        """The grants dropped since the last call (the codes redeemed into them go too)."""
        dropped, self._dropped_grants = self._dropped_grants, []
        return dropped

    def _drop_access(self, sha: str, access: AccessToken) -> None:
        del self.access[sha]
        if self.jti_index.get(access.jti) == sha:
            del self.jti_index[access.jti]

    def kept_until(self, grant_id: str) -> datetime | None:
        """When grant ``grant_id`` may be dropped (its family's end plus the setting), or
        None when it is gone (a code redeemed into it goes with it)."""
        family = self.families.get(grant_id)
        return None if family is None else family.ends + kept_after_expiry(self.ctx)

    # --- issuing ------------------------------------------------------------------------

    @locked
    def new_grant(
        self,
        user_id: str,
        client_id: str,
        scopes: list[str],
        auth_time: datetime,
        nonce: str | None,
    ) -> Grant:
        self.prune()
        grant = Grant(
            id=self.ids.object_id(self.grants),
            user_id=user_id,
            client_id=client_id,
            scopes=list(scopes),
            auth_time=auth_time,
            created_at=self.clock.now(),
            nonce=nonce,
        )
        self.grants[grant.id] = grant
        self.families[grant.id] = Family(ends=grant.created_at)
        self._family_expiry.add(grant.created_at + kept_after_expiry(self.ctx), grant.id)
        return grant

    @locked
    def issue(
        self,
        grant: Grant,
        app: App,
        scopes: list[str],
        resource: str | None,
        with_nonce: bool,
    ) -> dict[str, Any]:
        """The token response of spec §4 for ``scopes`` (from ``issuable``); a refresh token
        while the grant has ``offline_access`` and the app is still allowed it. No prune here:
        the caller pruned, and a grant just made has no token yet, so with
        ``identity_expired_kept_hours`` 0 a prune would drop it before its first token."""
        now = self.clock.now()
        family = self.families[grant.id]
        kept = kept_after_expiry(self.ctx)
        jti = self.ids.object_id(self.jti_index)
        expires = now + ACCESS_TTL
        if resource is not None:
            value = self.keys.sign(
                {
                    "iss": self.settings.issuer,
                    "aud": resource,
                    "sub": grant.user_id,
                    "client_id": grant.client_id,
                    "scope": scope_string(scopes),
                    "iat": epoch(now),
                    "exp": epoch(expires),
                    "jti": jti,
                },
                typ="at+jwt",
            )
        else:
            value = self.ids.secret("at_", 43, Digested(self.access, digest))
        access = self.access[digest(value)] = AccessToken(
            jti=jti,
            grant_id=grant.id,
            client_id=grant.client_id,
            user_id=grant.user_id,
            scopes=list(scopes),
            resource=resource,
            issued_at=now,
            expires_at=expires,
            token_sha256=digest(value),
        )
        self.jti_index[jti] = digest(value)
        self._access_lapses.add(digest(value), access)
        family.access[digest(value)] = None
        family.lasts_to(expires)
        self._access_expiry.add(expires + kept, digest(value))
        response: dict[str, Any] = {
            "access_token": value,
            "token_type": "Bearer",
            "expires_in": int(ACCESS_TTL.total_seconds()),
            "scope": scope_string(scopes),
            "id_token": self._id_token(grant, scopes, value, with_nonce),
        }
        if OFFLINE_ACCESS in app.permitted(grant.scopes):
            refresh = self.ids.secret("rt_", 48, Digested(self.refresh, digest))
            refreshing = self.refresh[digest(refresh)] = RefreshToken(
                token_sha256=digest(refresh),
                grant_id=grant.id,
                client_id=grant.client_id,
                user_id=grant.user_id,
                issued_at=now,
                expires_at=now + REFRESH_TTL,
            )
            self._refresh_lapses.add(digest(refresh), refreshing)
            family.refresh.append(digest(refresh))
            family.lasts_to(now + REFRESH_TTL)
            response["refresh_token"] = refresh
        return response

    def _id_token(self, grant: Grant, scopes: list[str], access: str, with_nonce: bool) -> str:
        now = self.clock.now()
        claims: dict[str, Any] = {
            "iss": self.settings.issuer,
            "sub": grant.user_id,
            "aud": grant.client_id,
            "exp": epoch(now + ID_TOKEN_TTL),
            "iat": epoch(now),
            "auth_time": epoch(grant.auth_time),
            "at_hash": at_hash(access),
        }
        if with_nonce and grant.nonce is not None:
            claims["nonce"] = grant.nonce
        claims.update(self.claims_of(grant.user_id, frozenset(scopes)))
        return self.keys.sign(claims, typ="JWT")

    @locked
    def claims_of(self, user_id: str, scopes: frozenset[str]) -> dict[str, Any]:
        """The claims of spec §2 that ``scopes`` release (userinfo and the ID token)."""
        user = self.users.get(user_id)
        namespace = self.settings.claims_prefix
        every = user.claims(namespace)
        # In the scope table's order: a set's order follows the per-process string hash, and
        # the claims' order is part of the signed bytes (same seed, same tokens).
        return {"sub": user.id} | {name: every[name] for name in claim_names(scopes, namespace)}

    # --- refresh ------------------------------------------------------------------------

    @locked
    def refresh_grant(
        self, value: str, app: App, scope: str | None, resource: str | None
    ) -> dict[str, Any]:
        """Rotates a refresh token (spec §4, §5.8); one use only."""
        self.prune()
        token = self.refresh.get(digest(value))
        grant = self.grants.get(token.grant_id) if token is not None else None
        if token is None or grant is None or token.client_id != app.client_id:
            raise InvalidGrant("refresh_token is unknown, or was issued to another client")
        if token.rotated:
            self._revoke_grant(grant, "a rotated refresh token was used again")
            raise InvalidGrant(
                "refresh_token was already used; every token of its family is now revoked"
            )
        if token.revoked or grant.revoked:
            raise InvalidGrant("refresh_token is revoked")
        now = self.clock.now()
        if ended(token, now):
            raise InvalidGrant("refresh_token expired (refresh tokens live 30 days)")
        if not_yet(token.issued_at, now):
            raise InvalidGrant(
                "refresh_token was issued after the current sandbox time (the clock was set back)"
            )
        scopes = list(grant.scopes)
        if scope is not None:
            asked = [s for s in scope.split(" ") if s]
            wider = [s for s in asked if s not in grant.scopes]
            if wider or not asked:
                raise InvalidScope(
                    f"scope may only narrow the granted scopes ({scope_string(grant.scopes)})"
                )
            scopes = [s for s in grant.scopes if s in asked]
        # openid stays even when the narrowed scope leaves it out (spec §5: "Required"): the
        # response still carries an ID token and the access token still opens userinfo.
        kept = issuable(app, scopes)
        scopes = [s for s in grant.scopes if s in kept or s == OPENID]
        token.rotated = True
        return self.issue(grant, app, scopes, resource, with_nonce=False)

    # --- revoking -----------------------------------------------------------------------

    def _revoke_grant(self, grant: Grant, reason: str) -> None:
        """The grant and its family (found by the family index: no scan of every token)."""
        grant.revoked = True
        grant.revoked_reason = reason
        family = self.families[grant.id]
        for sha in family.access:
            self.access[sha].revoked = True
        for sha in family.refresh:
            self.refresh[sha].revoked = True

    @locked
    def revoke_grant(self, grant_id: str, reason: str) -> None:
        self.prune()
        grant = self.grants.get(grant_id)
        if grant is not None:  # else dropped with its tokens: nothing is left to revoke
            self._revoke_grant(grant, reason)

    @locked
    def revoke_refresh_of(self, user_id: str | None, client_id: str | None) -> int:
        """Disconnect (spec §5.6, one user and app) and app deletion (every user): refresh
        tokens stop at once; access tokens live until they expire. Returns how many stopped."""
        self.prune()
        now = self.clock.now()
        count = 0
        for token in self.refresh.values():
            if user_id in (None, token.user_id) and client_id in (None, token.client_id):
                grant = self.grants.get(token.grant_id)
                # Counted when it still worked: a rotated or ended one had stopped already.
                count += grant is not None and self._refresh_active(token, grant, now)
                token.revoked = True
        return count

    @locked
    def revoke(self, value: str, app: App) -> None:
        """RFC 7009: revokes an access token, or a refresh token and its whole family. Tokens
        of other clients and unknown values are ignored (the answer is 200 either way)."""
        self.prune()
        access = self.access.get(digest(value))
        if access is not None and access.client_id == app.client_id:
            access.revoked = True
        refresh = self.refresh.get(digest(value))
        if refresh is not None and refresh.client_id == app.client_id:
            self.revoke_grant(refresh.grant_id, "refresh token revoked")

    # --- checking -----------------------------------------------------------------------

    @locked
    def introspect(self, value: str, app: App) -> dict[str, Any]:
        """RFC 7662: inactive for revoked, expired, unknown or another client's tokens."""
        self.prune()
        now = self.clock.now()
        access = self.access.get(digest(value))
        if access is not None and access.client_id == app.client_id:
            if access.revoked or not self._current(access, now):
                return {"active": False}
            aud = access.resource or access.client_id
            described = self._active(access, access.scopes, "Bearer", aud)
            return {**described, "jti": access.jti}
        refresh = self.refresh.get(digest(value))
        grant = self.grants.get(refresh.grant_id) if refresh is not None else None
        if refresh is not None and grant is not None and refresh.client_id == app.client_id:
            if not self._refresh_active(refresh, grant, now):
                return {"active": False}
            scopes = app.permitted(grant.scopes)
            return self._active(refresh, scopes, "refresh_token", refresh.client_id)
        return {"active": False}

    def _active(
        self, token: AccessToken | RefreshToken, scopes: list[str], token_type: str, aud: str
    ) -> dict[str, Any]:
        return {
            "active": True,
            "scope": scope_string(scopes),
            "client_id": token.client_id,
            "sub": token.user_id,
            "exp": epoch(token.expires_at),
            "iat": epoch(token.issued_at),
            "token_type": token_type,
            "aud": aud,
            "iss": self.settings.issuer,
        }

    def _refresh_active(self, refresh: RefreshToken, grant: Grant, now: datetime) -> bool:
        """Whether a refresh token works at ``now``: neither revoked nor rotated, its grant
        not revoked, within its lifetime (introspection's ``active``)."""
        if refresh.revoked or refresh.rotated or grant.revoked:
            return False
        return self._current(refresh, now)

    @staticmethod
    def _current(token: AccessToken | RefreshToken, now: datetime) -> bool:
        """Within its lifetime at ``now`` (identity/lifetime.py): introspection's ``active``
        and every other check of a token ask this."""
        return not ended(token, now) and not not_yet(token.issued_at, now)

    def _live(self, record: AccessToken | None, what: str) -> AccessToken:
        if record is None:
            raise InvalidToken(f"{what} is not known to this provider")
        if record.revoked:
            raise InvalidToken(f"{what} was revoked")
        now = self.clock.now()
        if ended(record, now):
            raise InvalidToken(f"{what} expired")
        if not_yet(record.issued_at, now):
            raise InvalidToken(f"{what} iat is in the future")
        return record

    @locked
    def userinfo_token(self, value: str) -> AccessToken:
        """The access token behind a userinfo bearer: opaque, or a JWT verified in full, with
        ``openid`` among its scopes (OpenID Connect Core §5.3: userinfo answers tokens of an
        OpenID Connect request; RFC 6750 §3.1 ``insufficient_scope`` otherwise)."""
        self.prune()
        if value.count(".") == 2:
            record = self._verify_jwt(value)
        else:
            record = self._live(self.access.get(digest(value)), "access token")
        if OPENID not in record.scopes:
            raise InsufficientScope("userinfo needs an access token with the openid scope", OPENID)
        return record

    @locked
    def verify_resource_token(self, token: str) -> ResourceGrant:
        """The resource server's check (wallet API): a valid, live JWT access token bound to
        {resource_url}; ``InvalidToken`` with a description otherwise."""
        self.prune()
        if token.count(".") != 2:
            raise InvalidToken("access token is not a JWT bound to the resource (use resource)")
        record = self._verify_jwt(token)
        return ResourceGrant(
            sub=record.user_id,
            client_id=record.client_id,
            scopes=frozenset(record.scopes),
            jti=record.jti,
            expires_at=record.expires_at,
        )

    def _verify_jwt(self, token: str) -> AccessToken:
        """RS256 only (pinned), ``typ`` at+jwt, a published ``kid``, ``iss`` = issuer, ``aud``
        = {resource_url}, ``exp``/``iat`` on the sandbox clock, known and not revoked."""
        import jwt  # on first use (see keys.py)

        try:
            header = jwt.get_unverified_header(token)
        except jwt.DecodeError:
            # pyjwt's words for these quote Python's decoders ("'utf-8' codec can't decode
            # byte 0xb7 in position 1"): say what a JWT must be instead.
            raise InvalidToken(MALFORMED_JWT) from None
        except jwt.PyJWTError as exc:  # a header that decodes but breaks a rule (a kid)
            raise InvalidToken(f"access token is malformed: {exc}") from None
        if header.get("alg") != "RS256":
            raise InvalidToken("access token must be signed with RS256")
        if str(header.get("typ", "")).lower() not in ACCESS_JWT_TYPES:
            raise InvalidToken("access token typ must be at+jwt")
        kid = header.get("kid")
        key = self.keys.find(kid) if isinstance(kid, str) else None
        if key is None:
            raise InvalidToken("access token kid is not a published signing key")
        try:
            claims = jwt.decode(
                token,
                key.private_key.public_key(),
                algorithms=["RS256"],
                audience=self.settings.root("resource_url"),
                issuer=self.settings.issuer,
                options={
                    "require": ["iss", "aud", "sub", "exp", "iat", "jti", "client_id"],
                    # Time is checked below against the sandbox clock, not the system's.
                    "verify_exp": False,
                    "verify_iat": False,
                    "verify_nbf": False,
                },
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"access token rejected: {exc}") from None
        now = epoch(self.clock.now())
        exp, iat = claims["exp"], claims["iat"]
        if not isinstance(exp, int) or not isinstance(iat, int):
            raise InvalidToken("access token exp and iat must be integers")
        if exp <= now:
            raise InvalidToken("access token expired")
        if iat > now:
            raise InvalidToken("access token iat is in the future")
        record = self._live(self._by_jti(str(claims["jti"])), "access token")
        if record.token_sha256 != digest(token):
            raise InvalidToken("access token is not the one this provider issued")
        return record

    def _by_jti(self, jti: str) -> AccessToken | None:
        sha = self.jti_index.get(jti)
        return self.access.get(sha) if sha is not None else None

    # --- state --------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        self.prune()  # what is due is gone in the export as in every answer
        return {
            "grants": [to_json(g) for g in self.grants.values()],
            "access": [to_json(a) for a in self.access.values()],
            "refresh": [to_json(r) for r in self.refresh.values()],
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.grants = {g["id"]: from_json(Grant, g) for g in data["grants"]}
        self.access = {a["token_sha256"]: from_json(AccessToken, a) for a in data["access"]}
        self.refresh = {r["token_sha256"]: from_json(RefreshToken, r) for r in data["refresh"]}
        self.jti_index = {a.jti: sha for sha, a in self.access.items()}
        self._index()
