"""OAuth apps (spec §5 "Identity provider" 1, 2, 5): registration by an organization, redirect
URIs, scopes, client types, secrets (only a hash stored), disable, delete, approval."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.digests import constant_time_equal, sha256_hex
from svc_sandbox.core.errors import Forbidden, ValidationFailed, found
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.core.validation import SHOWN_CHARACTERS, cut, url_characters_problem
from svc_sandbox.core.validation import shown as shown_value
from svc_sandbox.identity.cors import web_origin
from svc_sandbox.identity.scopes import OFFLINE_ACCESS, OPENID, SCOPES, WALLET_SEND, ordered
from svc_sandbox.orgs.organizations import KycStatus, OrganizationService

ClientType = Literal["confidential", "public"]
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def secret_hash(secret: str) -> str:
    return sha256_hex(secret)


def check_redirect_uri(uri: str) -> str:
    """Spec §5.2: HTTPS, or http on a loopback host for development; no fragment."""
    return check_app_url(uri, "redirectUris", fragment=False)


def check_app_url(uri: str, field: str, fragment: bool = True) -> str:
    """The rule of §5.2's redirect URIs, also for an app's website and logo, which the consent
    page shows as a link and an image, and a user's picture, issued as the ``picture`` claim
    that apps show: https, or http on a loopback host (never javascript:, data: or another
    scheme)."""
    if len(uri) > 2000:
        raise ValidationFailed(f"{field} must be at most 2000 characters each")
    shown = cut(uri, SHOWN_CHARACTERS)  # a refusal repeats a long URL cut
    problem = url_characters_problem(uri)
    if problem:  # before parsing: urlsplit drops a tab or a line feed unseen
        raise ValidationFailed(f"{field}: {shown_value(uri)} {problem}")
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - reading it raises ValueError for a bad port
    except ValueError:
        raise ValidationFailed(f"{field}: {shown} is not a valid URL") from None
    host = parts.hostname or ""
    if not fragment and (parts.fragment or "#" in uri):
        raise ValidationFailed(f"{field}: {shown} must not have a fragment")
    if parts.scheme == "https" and host:
        return uri
    if parts.scheme == "http" and host in LOOPBACK_HOSTS:
        return uri
    raise ValidationFailed(
        f"{field}: {shown} must be https, or http on localhost, 127.0.0.1 or [::1]"
    )


def grant_types_for(scopes: list[str]) -> list[str]:
    """Spec §5.5: grant types are recomputed from the scopes; offline_access enables refresh."""
    kinds = ["authorization_code"]
    if OFFLINE_ACCESS in scopes:
        kinds.append("refresh_token")
    return kinds


@dataclass
class App:
    client_id: str
    org_id: str
    name: str
    client_type: ClientType
    redirect_uris: list[str]
    #: The scopes registered (may include wallet:send, which only works once approved).
    scopes: list[str]
    created_at: datetime
    website: str | None = None
    logo_url: str | None = None
    secret_sha256: str | None = None
    wallet_send_approved: bool = False
    disabled: bool = False
    deleted: bool = False
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code"])

    @property
    def allowed_scopes(self) -> frozenset[str]:
        """What the app may ask for: wallet:send only once approved, confidential only."""
        allowed = set(self.scopes)
        if not (self.wallet_send_approved and self.client_type == "confidential"):
            allowed.discard(WALLET_SEND)
        return frozenset(allowed)

    def permitted(self, scopes: list[str]) -> list[str]:
        """``scopes`` less those the app may no longer have (``wallet:send`` approval
        withdrawn, scopes removed by an edit, spec §5.5): what a token issued now may carry."""
        allowed = self.allowed_scopes
        return [s for s in scopes if s in allowed]

    @property
    def usable(self) -> bool:
        return not (self.disabled or self.deleted)

    def to_public(self) -> dict[str, Any]:
        return {
            "clientId": self.client_id,
            "organizationId": self.org_id,
            "name": self.name,
            "clientType": self.client_type,
            "redirectUris": list(self.redirect_uris),
            "scopes": list(self.scopes),
            "allowedScopes": ordered(self.allowed_scopes),
            "grantTypes": list(self.grant_types),
            "website": self.website,
            "logoUrl": self.logo_url,
            "walletSendApproved": self.wallet_send_approved,
            "disabled": self.disabled,
            "deleted": self.deleted,
            "createdAt": isoformat(self.created_at),
        }


class AppService(Service):
    def __init__(self, ctx: ServiceContext, orgs: OrganizationService) -> None:
        super().__init__(ctx)
        self.orgs = orgs
        self.apps: dict[str, App] = {}
        #: Secrets shown by GET /_sandbox for the seeded apps (a real provider shows none).
        self.seeded_secrets: dict[str, str] = {}

    def _check_scopes(self, scopes: list[str], client_type: str) -> list[str]:
        if not scopes:
            raise ValidationFailed("scopes must list at least openid")
        unknown = [s for s in scopes if s not in SCOPES]
        if unknown:
            raise ValidationFailed(f"scopes: {unknown[0]} is not a scope of this provider")
        if OPENID not in scopes:
            raise ValidationFailed("scopes must include openid")
        if WALLET_SEND in scopes and client_type != "confidential":
            raise ValidationFailed("scopes: wallet:send is for confidential clients only")
        return ordered(list(dict.fromkeys(scopes)))

    @staticmethod
    def _check_uris(uris: list[str]) -> list[str]:
        if not uris:
            raise ValidationFailed("redirectUris must list at least one URI")
        return [check_redirect_uri(u) for u in dict.fromkeys(uris)]

    @locked
    def create(
        self,
        org_id: str,
        name: str,
        redirect_uris: list[str],
        scopes: list[str],
        client_type: ClientType = "confidential",
        website: str | None = None,
        logo_url: str | None = None,
    ) -> tuple[App, str | None]:
        """Registers an app; returns it and its secret (confidential only), shown once."""
        org = self.orgs.get(org_id)
        if not org.developer_mode:
            raise Forbidden("Developer Mode is off for this organization: turn it on first")
        if self.settings.app_kyc == "require" and org.kyc is not KycStatus.APPROVED:
            raise Forbidden("Complete KYC for this organization before registering an app")
        if client_type not in ("confidential", "public"):
            raise ValidationFailed("clientType must be one of confidential, public")
        if not name or len(name) > 120:
            raise ValidationFailed("name must be 1 to 120 characters")
        uris = self._check_uris(redirect_uris)
        checked_scopes = self._check_scopes(scopes, client_type)
        website = check_app_url(website, "website") if website else None
        logo_url = check_app_url(logo_url, "logoUrl") if logo_url else None
        return self.register(org.id, name, uris, checked_scopes, client_type, website, logo_url)

    @locked
    def register(
        self,
        org_id: str,
        name: str,
        redirect_uris: list[str],
        scopes: list[str],
        client_type: ClientType,
        website: str | None = None,
        logo_url: str | None = None,
    ) -> tuple[App, str | None]:
        """Registers an app whose fields are checked (``create``) or are the seeded constants
        (identity/seed.py; a test checks them by ``create``'s rules): checking their URLs at
        every start would load RFC 3986's grammar, 30 ms of start-up, for constants."""
        app = App(
            client_id=self.ids.object_id(self.apps),
            org_id=org_id,
            name=name,
            client_type=client_type,
            # Copies: the seeded apps pass module constants, which no record may share.
            redirect_uris=list(redirect_uris),
            scopes=list(scopes),
            website=website,
            logo_url=logo_url,
            created_at=self.clock.now(),
        )
        app.grant_types = grant_types_for(app.scopes)
        secret = None
        if client_type == "confidential":
            secret = self.ids.secret("cs_", 40)
            app.secret_sha256 = secret_hash(secret)
        self.apps[app.client_id] = app
        return app, secret

    @locked
    def find(self, client_id: str) -> App | None:
        """The app, deleted ones included (check ``usable``); None if never registered."""
        return self.apps.get(client_id)

    @locked
    def get(self, client_id: str) -> App:
        app = self.apps.get(client_id)
        if app is not None and app.deleted:
            app = None
        return found(app, f"app {client_id} not found")

    @locked
    def all(self, org_id: str | None = None) -> list[App]:
        return [
            a
            for a in self.apps.values()
            if not a.deleted and (org_id is None or a.org_id == org_id)
        ]

    @locked
    def web_origins(self, client_id: str | None = None) -> set[str]:
        """The origins of the pages the usable apps (or the one app ``client_id``) return to
        (their redirect URIs): the pages that may call the provider (identity/cors.py)."""
        return {
            origin
            for app in self.apps.values()
            if not app.deleted and not app.disabled
            if client_id is None or app.client_id == client_id
            for origin in map(web_origin, app.redirect_uris)
            if origin is not None
        }

    @locked
    def update(
        self,
        client_id: str,
        name: str | None = None,
        redirect_uris: list[str] | None = None,
        scopes: list[str] | None = None,
        website: str | None = None,
        logo_url: str | None = None,
    ) -> App:
        app = self.get(client_id)
        new_uris = self._check_uris(redirect_uris) if redirect_uris is not None else None
        new_scopes = self._check_scopes(scopes, app.client_type) if scopes is not None else None
        if website:
            check_app_url(website, "website")
        if logo_url:
            check_app_url(logo_url, "logoUrl")
        if name is not None and (not name or len(name) > 120):
            raise ValidationFailed("name must be 1 to 120 characters")
        if name is not None:
            app.name = name
        if new_uris is not None:
            app.redirect_uris = new_uris
        if new_scopes is not None:
            app.scopes = new_scopes
            app.grant_types = grant_types_for(new_scopes)
        if website is not None:
            app.website = website or None
        if logo_url is not None:
            app.logo_url = logo_url or None
        return app

    @locked
    def rotate_secret(self, client_id: str) -> tuple[App, str]:
        """A new secret; the old one stops working at once (spec §5.5)."""
        app = self.get(client_id)
        if app.client_type != "confidential":
            raise ValidationFailed("a public client has no secret to rotate")
        secret = self.ids.secret("cs_", 40)
        app.secret_sha256 = secret_hash(secret)
        self.seeded_secrets.pop(client_id, None)
        return app, secret

    @locked
    def set_disabled(self, client_id: str, disabled: bool) -> App:
        app = self.get(client_id)
        app.disabled = disabled
        return app

    @locked
    def delete(self, client_id: str) -> App:
        app = self.get(client_id)
        app.deleted = True
        app.secret_sha256 = None
        self.seeded_secrets.pop(client_id, None)
        return app

    @locked
    def approve_wallet_send(self, client_id: str, approved: bool = True) -> App:
        app = self.get(client_id)
        if approved and app.client_type != "confidential":
            raise ValidationFailed("wallet:send is for confidential clients only")
        app.wallet_send_approved = approved
        if approved and WALLET_SEND not in app.scopes:
            app.scopes = ordered([*app.scopes, WALLET_SEND])
        return app

    @staticmethod
    def secret_matches(app: App, secret: str) -> bool:
        """Constant-time comparison of a presented secret with the stored hash."""
        expected = app.secret_sha256 or secret_hash("\0no secret")
        matches = constant_time_equal(secret_hash(secret), expected)
        return matches and app.secret_sha256 is not None

    def export(self) -> dict[str, Any]:
        return {
            "apps": [to_json(a) for a in self.apps.values()],
            "seededSecrets": dict(self.seeded_secrets),
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.apps = {a["client_id"]: from_json(App, a) for a in data["apps"]}
        self.seeded_secrets = dict(data["seededSecrets"])
