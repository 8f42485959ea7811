"""The parameters of an OAuth authorization request (spec §4) that a client sets itself, shared
by the identity provider (identity/grants.py) and the Python client (client/identity.py)."""

from __future__ import annotations

#: What a client builds into every authorization request and checks back on the callback
#: (its state, PKCE pair and nonce): the provider reads them all; the client refuses them in
#: ``authorization_url``'s ``extra``.
REQUEST_PARAMS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "nonce",
)
