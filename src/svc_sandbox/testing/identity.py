"""The authorize step as a user, without a browser: an app's ``IdentityClient`` builds the
authorization URL, the control plane (``POST /_sandbox/identity/authorize``) plays the user's
sign-in and consent, and the client checks the callback and exchanges the code, exactly as an
app would after a real redirect."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from svc_sandbox.client.identity import IdentityClient
from svc_sandbox.client.models import TokenSet


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
