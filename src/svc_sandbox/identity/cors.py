"""CORS for the identity provider's endpoints a browser app calls itself: an OAuth 2.1
public client running in a page (a single-page app with PKCE) reads the discovery document
and the keys, exchanges its code, asks userinfo and revokes at sign-out with ``fetch``.

Who may: the pages of registered apps, an origin of a redirect URI of an app that is not
deleted or disabled (what Auth0's allowed web origins and Keycloak's "+" web origins default
to); a token or revocation request only from its own client's pages (another app's page
would spend that client's rate limit). Any other page gets no CORS and stays refused
(exposure.cross_site_problem): it could otherwise fill the request journal and the
conformance report. The control plane, the commerce and wallet APIs grant none: they take
secrets a page must not hold."""

from __future__ import annotations

from collections.abc import Callable, Collection
from urllib.parse import urlsplit

#: Under {auth_url}: what the pages of registered apps may call.
CORS_PATHS = frozenset(
    {
        "/.well-known/openid-configuration",
        "/.well-known/oauth-authorization-server",
        "/jwks",
        "/oauth2/token",
        "/oauth2/userinfo",
        "/oauth2/revoke",
    }
)
#: Of those, the ones whose request names its client (a preflight does not: no body).
CLIENT_PATHS = frozenset({"/oauth2/token", "/oauth2/revoke"})
#: A preflight's answer: what a page may send, and for how long the browser keeps the answer.
ALLOW_METHODS = "GET, POST"
ALLOW_HEADERS = "Authorization, Content-Type"
MAX_AGE_SECONDS = "600"
#: What a page may read of an answer besides the CORS-safelisted headers.
EXPOSE_HEADERS = "WWW-Authenticate, Retry-After, X-Request-Id"
DEFAULT_PORTS = {"http": 80, "https": 443}


def web_origin(url: str) -> str | None:
    """The origin a browser sends (``Origin``) for a page at ``url``: scheme, host and a port
    that is not the scheme's default; None for a URL no page is served at (``myapp:/cb``)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host:
        return None
    host = f"[{host}]" if ":" in host else host
    shown_port = "" if port is None or port == DEFAULT_PORTS[scheme] else f":{port}"
    return f"{scheme}://{host}{shown_port}"


def allowed_origin(
    relative: str | None,
    origin: str,
    app_origins: Callable[[], Collection[str]],
    client_origins: Collection[str] | None = None,
) -> str | None:
    """The Access-Control-Allow-Origin a request from ``origin`` gets at ``relative``, its
    path under {auth_url} (the discovery document at the origin, RFC 8414 §3, as the one
    under {auth_url}; None: elsewhere), or None: no CORS. ``client_origins``: the origins of
    the client a token or revocation request names (None: it names none, a preflight)."""
    if relative not in CORS_PATHS:
        return None
    if relative in CLIENT_PATHS and client_origins is not None:
        return origin if origin in client_origins else None
    return origin if origin in app_origins() else None
