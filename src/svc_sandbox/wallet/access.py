"""Who a wallet call acts for: the two factors of spec §5 "Wallet API", checked in one order.

1. ``Authorization: Bearer <access token>``, from the header only (a token in the query string
   or the body is not looked at): a JWT bound to {resource_url}, verified by the identity
   provider, of an app that still exists and a user who still exists; else 401
   ``invalid_token`` with an RFC 6750 challenge.
2. ``X-Svc-Key``: a valid, unrevoked API token of the organization that owns the token's app
   (``wallet_key_org = "any"``: of any organization); else 401 ``jamidev_key_required``.
3. The route's scope among the token's scopes, and ``wallet:send`` only for a confidential
   app; else 403 ``insufficient_scope`` naming the scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from svc_sandbox.core.authorization import HTTP_SPACE
from svc_sandbox.core.errors import Unauthorized
from svc_sandbox.identity.bearer import NoBearerToken, bearer_token
from svc_sandbox.identity.errors import InsufficientScope, InvalidToken
from svc_sandbox.identity.scopes import WALLET_SEND
from svc_sandbox.wallet.errors import key_required

if TYPE_CHECKING:
    from svc_sandbox.sandbox import Sandbox


@dataclass(frozen=True)
class WalletCaller:
    """A user, through an app, with the organization key that came along."""

    user: Any
    client_id: str
    org_id: str
    scopes: frozenset[str]


def authenticate(
    sandbox: Sandbox, authorization: str | None, key: str | None, scope: str
) -> WalletCaller:
    try:
        token = bearer_token(authorization)
    except NoBearerToken as missing:  # issue 12: error="invalid_token" even without a token
        raise InvalidToken(missing.message) from None
    grant = sandbox.access_tokens.verify_resource_token(token)
    app = sandbox.oauth_apps.find(grant.client_id)
    if app is None or app.deleted:
        raise InvalidToken("The app this token was issued to has been deleted")
    if sandbox.settings.wallet_refuse_disconnected and grant.client_id not in (
        sandbox.oauth.consents_of(grant.sub)
    ):
        raise InvalidToken("The user disconnected the app this token was issued to")
    user = sandbox.users.find(grant.sub)
    if user is None:
        raise InvalidToken("The user of this token no longer exists")
    org_id = _key_org(sandbox, key, app.org_id)
    if scope not in grant.scopes:
        raise InsufficientScope(f"This call needs the {scope} scope", scope)
    if scope == WALLET_SEND and app.client_type != "confidential":
        raise InsufficientScope(f"{scope} is for confidential clients only", scope)
    return WalletCaller(user, grant.client_id, org_id, grant.scopes)


def _key_org(sandbox: Sandbox, key: str | None, owner_org_id: str) -> str:
    """The organization of a valid X-Svc-Key, or 401 ``jamidev_key_required``."""
    # Only HTTP's space and tab trimmed, as around a bearer token: a key with NBSP or NEL
    # around it is malformed (``str.strip()`` took it).
    key = (key or "").strip(HTTP_SPACE)
    if not key:
        raise key_required("X-Svc-Key is required: send your organization's API token")
    try:
        principal = sandbox.orgs.authenticate(key)
    except Unauthorized as refused:
        raise key_required(f"X-Svc-Key is not a valid API key: {refused.message}") from None
    if sandbox.settings.wallet_key_org == "owner" and principal.org.id != owner_org_id:
        raise key_required("X-Svc-Key must be an API token of the organization that owns the app")
    return principal.org.id
