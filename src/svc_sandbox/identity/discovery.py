"""The provider metadata of spec §4 (OpenID Connect Discovery 1.0 and RFC 8414): the same
document at both well-known paths."""

from __future__ import annotations

from typing import Any

from svc_sandbox.identity.grants import PROMPT_VALUES
from svc_sandbox.identity.scopes import SCOPES, claim_names
from svc_sandbox.settings import Settings


def metadata(settings: Settings) -> dict[str, Any]:
    issuer = settings.issuer
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/oauth2/authorize",
        "token_endpoint": f"{issuer}/oauth2/token",
        "userinfo_endpoint": f"{issuer}/oauth2/userinfo",
        "introspection_endpoint": f"{issuer}/oauth2/introspect",
        "revocation_endpoint": f"{issuer}/oauth2/revoke",
        "jwks_uri": f"{issuer}/jwks",
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
            "none",
        ],
        "introspection_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
            "none",
        ],
        "revocation_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
            "none",
        ],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "authorization_response_iss_parameter_supported": True,
        "claims_supported": [
            *claim_names(frozenset(SCOPES), settings.claims_prefix),
            "iss",
            "aud",
            "exp",
            "iat",
            "auth_time",
            "nonce",
            "at_hash",
        ],
        "prompt_values_supported": list(PROMPT_VALUES),
        "claims_parameter_supported": False,
        "request_parameter_supported": False,
        "request_uri_parameter_supported": False,
    }
