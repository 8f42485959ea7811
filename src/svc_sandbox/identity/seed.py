"""The seeded identity state: test users, a confidential app with the wallet scopes approved
and a public app, both owned by the seeded sandbox organization; what GET /_sandbox shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_sandbox.identity.scopes import SELF_SERVE, WALLET_SEND, ordered

if TYPE_CHECKING:
    from svc_sandbox.identity.apps import ClientType
    from svc_sandbox.sandbox import Sandbox

#: handle, given name, family name, KYC, password (fixed, so docs and tests can quote them).
SEEDED_USERS = (
    ("abebe", "Abebe", "Kebede", "approved", "abebe-sandbox-pass"),
    ("tigist", "Tigist", "Haile", "approved", "tigist-sandbox-pass"),
    ("dawit", "Dawit", "Mekonnen", "not_started", "dawit-sandbox-pass"),
)
SEEDED_REDIRECT_URIS = [
    "http://127.0.0.1:8080/callback",
    "http://localhost:8080/callback",
    "https://app.sandbox.test/callback",
]

#: The seeded apps: name, redirect URIs, scopes, client type, website, logo. No logo: an
#: address under .test never resolves, so every out-of-the-box consent page showed a broken
#: image and logged a failed load in the browser's console.
SEEDED_APPS: tuple[tuple[str, list[str], list[str], ClientType, str | None, str | None], ...] = (
    (
        "Sandbox Wallet App",
        SEEDED_REDIRECT_URIS,
        ordered([*SELF_SERVE, WALLET_SEND]),
        "confidential",
        "https://app.sandbox.test",
        None,
    ),
    ("Sandbox Public App", SEEDED_REDIRECT_URIS, ordered(SELF_SERVE), "public", None, None),
)


def seed_identity(sandbox: Sandbox) -> None:
    for handle, given, family, kyc, password in SEEDED_USERS:
        sandbox.users.create(
            handle=handle,
            given_name=given,
            family_name=family,
            name=f"{given} {family}",
            kyc=kyc,
            password=password,
        )
    org = next(o for o in sandbox.orgs.all() if o.environment.value == "sandbox")
    apps = sandbox.oauth_apps
    # Registered as given (``register``): constants that tests/identity/test_seed.py checks
    # by the rules ``create`` applies to an app a client registers.
    wallet_app, secret = apps.register(org.id, *SEEDED_APPS[0])
    apps.approve_wallet_send(wallet_app.client_id)
    assert secret is not None
    apps.seeded_secrets[wallet_app.client_id] = secret
    apps.register(org.id, *SEEDED_APPS[1])
    sandbox.signing_keys.active()


def identity_info(sandbox: Sandbox) -> dict[str, Any]:
    apps = []
    for app in sandbox.oauth_apps.all():
        view = app.to_public()
        view["clientSecret"] = sandbox.oauth_apps.seeded_secrets.get(app.client_id)
        apps.append(view)
    return {
        "issuer": sandbox.settings.issuer,
        "discovery": sandbox.settings.issuer + "/.well-known/openid-configuration",
        "resource": sandbox.settings.root("resource_url"),
        "claimsNamespace": sandbox.settings.claims_prefix,
        "users": [u.to_public() for u in sandbox.users.all()],
        "apps": apps,
        "signingKeys": [k.to_public() for k in sandbox.signing_keys.keys],
    }
