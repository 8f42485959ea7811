"""The authorize step as a user, without a browser: an app's ``IdentityClient`` builds the
authorization URL, the control plane (``POST /_sandbox/identity/authorize``) plays the user's
sign-in and consent, and the client checks the callback and exchanges the code, exactly as an
app would after a real redirect."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from svc_sandbox.client.identity import IdentityClient
from svc_sandbox.client.models import TokenSet
from svc_sandbox.client.wallet import WalletClient
from svc_sandbox.testing.emulator import Emulator, Tenant


def scripted_callback(
    origin: str,
    user_id: str,
    authorization_url: str,
    *,
    decision: str = "approve",
    granted: Sequence[str] | None = None,
    timeout: float = 30.0,
) -> str:
    """The redirect URL the provider sends the user back with, after ``user_id`` decided."""
    body: dict[str, Any] = {"userId": user_id, "url": authorization_url, "decision": decision}
    if granted is not None:
        body["scopes"] = list(granted)
    answer = httpx.post(
        origin.rstrip("/") + "/_sandbox/identity/authorize", json=body, timeout=timeout
    )
    if answer.status_code != 200:
        raise RuntimeError(f"the authorize step answered {answer.status_code}: {answer.text}")
    return str(answer.json()["redirectUrl"])


def authorize(
    origin: str,
    identity: IdentityClient,
    user_id: str,
    scopes: Sequence[str],
    *,
    resource: str | None = None,
    granted: Sequence[str] | None = None,
) -> TokenSet:
    """Tokens of ``user_id`` for the app (``resource``: {resource_url} for wallet tokens;
    ``granted``: the scopes the user grants, default all asked for)."""
    request = identity.authorization_url(scopes)
    callback = scripted_callback(origin, user_id, request.url, granted=granted)
    return identity.exchange_callback(callback, request, resource=resource)


# --- the plugin's identity fixtures: svc_user, svc_app, svc_authorize ------------------------

#: Every scope of spec §5; ``wallet:send`` is approved for the fixture's app.
ALL_SCOPES = ("openid", "profile", "email", "offline_access", "wallet:read", "wallet:send")
REDIRECT_URI = "http://127.0.0.1:8080/callback"
#: What ``svc_user``'s wallet holds at the start: 10,000.00 ETB.
USER_FUNDS_MINOR = 1_000_000


@dataclass(frozen=True)
class SvcUser:
    """A fresh identity user (KYC approved) with a funded wallet."""

    id: str
    handle: str
    password: str
    email: str
    wallet_minor: int


@dataclass(frozen=True)
class SvcApp:
    """A fresh confidential app of ``svc_org``'s sandbox organization, every scope registered
    and ``wallet:send`` approved. ``api_key`` is that organization's API token (X-Svc-Key)."""

    client_id: str
    client_secret: str
    redirect_uri: str
    scopes: tuple[str, ...]
    organization_id: str
    api_key: str
    issuer: str
    resource: str
    wallet_base_url: str

    def identity_client(self, **options: Any) -> IdentityClient:
        return IdentityClient(
            self.client_id,
            self.client_secret,
            redirect_uri=self.redirect_uri,
            auth_url=self.issuer,
            **options,
        )

    def wallet_client(self, access_token: str, **options: Any) -> WalletClient:
        """The wallet API as the user whose (wallet-bound) ``access_token`` this is."""
        return WalletClient(access_token, self.api_key, base_url=self.wallet_base_url, **options)


def create_user(emulator: Emulator, funds_minor: int = USER_FUNDS_MINOR) -> SvcUser:
    user = emulator.control("POST", "/_sandbox/users", {"kyc": "approved"})
    wallet = emulator.control(
        "POST", f"/_sandbox/wallets/{user['id']}/fund", {"amountMinor": funds_minor}
    )
    return SvcUser(
        user["id"], user["handle"], user["password"], user["email"], wallet["availableMinor"]
    )


def create_app(emulator: Emulator, tenant: Tenant, name: str) -> SvcApp:
    body = {
        "organizationId": tenant.id,
        "name": name[:100],
        "redirectUris": [REDIRECT_URI],
        "scopes": list(ALL_SCOPES),
        "clientType": "confidential",
    }
    app = emulator.control("POST", "/_sandbox/apps", body)
    emulator.control("POST", f"/_sandbox/apps/{app['clientId']}/approve-wallet-send", {})
    roots = emulator.control("GET", "/_sandbox")["roots"]
    return SvcApp(
        app["clientId"],
        app["clientSecret"],
        REDIRECT_URI,
        ALL_SCOPES,
        tenant.id,
        tenant.token,
        roots["auth_url"],
        roots["resource_url"],
        roots["wallet_base_url"],
    )


class Authorizer:
    """``svc_authorize(user, app, scopes=...)``: the user signs in to the app and consents;
    the app's tokens (wallet-bound unless ``resource=None``)."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator

    def __call__(
        self,
        user: SvcUser | str,
        app: SvcApp,
        scopes: Sequence[str] = ALL_SCOPES,
        *,
        resource: str | None | Literal["wallet"] = "wallet",
        granted: Sequence[str] | None = None,
    ) -> TokenSet:
        user_id = user if isinstance(user, str) else user.id
        bound = app.resource if resource == "wallet" else resource
        with app.identity_client() as identity:
            return authorize(
                self.emulator.url, identity, user_id, scopes, resource=bound, granted=granted
            )
