"""A browser app calls the identity provider itself (an OAuth 2.1 public client in a page):
the pages of registered apps (an origin of a usable app's redirect URI) may read discovery,
the keys, userinfo, and call token and revocation for their own client; nothing else grants
CORS (identity/cors.py). The seeded apps return to http://localhost:8080/callback.

"""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.identity.cors import web_origin
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.web import MAX_BODY_BYTES
from tests.identity.helpers import AUTH, Client

APP_PAGE = "http://localhost:8080"
ELSEWHERE = "http://localhost:5173"


def from_page(origin: str, **more: str) -> dict[str, str]:
    """The headers a page's fetch carries (Fetch Metadata as Chromium sends them)."""
    return {"Origin": origin, "Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors", **more}


#: (method, path, the page's origin, the Access-Control-Allow-Origin it gets; None: a 403)
CASES = [
    ("GET", f"{AUTH}/.well-known/openid-configuration", APP_PAGE, APP_PAGE),
    ("GET", f"{AUTH}/.well-known/oauth-authorization-server", APP_PAGE, APP_PAGE),
    ("GET", "/.well-known/openid-configuration/auth", APP_PAGE, APP_PAGE),  # RFC 8414 §3
    ("GET", f"{AUTH}/jwks", APP_PAGE, APP_PAGE),
    ("POST", f"{AUTH}/oauth2/token", APP_PAGE, APP_PAGE),
    ("GET", f"{AUTH}/oauth2/userinfo", APP_PAGE, APP_PAGE),
    ("POST", f"{AUTH}/oauth2/revoke", APP_PAGE, APP_PAGE),
    # Any other site's page: refused, so it fills neither the journal nor the report.
    ("GET", f"{AUTH}/.well-known/openid-configuration", ELSEWHERE, None),
    ("GET", f"{AUTH}/jwks", ELSEWHERE, None),
    ("POST", f"{AUTH}/oauth2/token", ELSEWHERE, None),
    ("GET", f"{AUTH}/oauth2/userinfo", ELSEWHERE, None),
    ("POST", f"{AUTH}/oauth2/introspect", APP_PAGE, None),  # a confidential client's, a server's
    ("GET", f"{AUTH}/oauth2/authorize", APP_PAGE, None),  # a page navigates there, never fetches
    ("GET", "/api/products", APP_PAGE, None),  # an API token is a server's secret
    ("GET", "/wallet/balance", APP_PAGE, None),
    ("GET", "/_sandbox", APP_PAGE, None),
]


@pytest.mark.parametrize(("method", "path", "origin", "allowed"), CASES)
def test_who_may_read_what(
    http: FlaskClient, public: Client, method: str, path: str, origin: str, allowed: str | None
) -> None:
    form = {"client_id": public.client_id} if method == "POST" else None
    response = http.open(path, method=method, headers=from_page(origin), data=form)
    assert response.headers.get("Access-Control-Allow-Origin") == allowed
    if allowed is None:
        assert response.status_code == 403
        assert "this endpoint grants no CORS" in response.get_data(as_text=True)
    else:
        assert response.status_code != 403
        assert response.headers["Access-Control-Expose-Headers"] == (
            "WWW-Authenticate, Retry-After, X-Request-Id"
        )
        assert "Origin" in response.headers["Vary"]


@pytest.mark.parametrize("path", ["/oauth2/token", "/oauth2/userinfo", "/oauth2/revoke"])
def test_a_preflight_from_an_apps_page_says_what_it_may_send(http: FlaskClient, path: str) -> None:
    asked = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization",
    }
    response = http.options(AUTH + path, headers=from_page(APP_PAGE, **asked))
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == APP_PAGE
    assert response.headers["Access-Control-Allow-Methods"] == "GET, POST"
    assert response.headers["Access-Control-Allow-Headers"] == "Authorization, Content-Type"
    assert response.headers["Access-Control-Max-Age"] == "600"
    refused = http.options(AUTH + path, headers=from_page(ELSEWHERE, **asked))
    assert refused.status_code == 403 and "Access-Control-Allow-Origin" not in refused.headers


def test_a_server_without_origin_gets_no_cors_headers(http: FlaskClient) -> None:
    response = http.get(f"{AUTH}/jwks")
    assert response.status_code == 200
    assert not any(name.startswith("Access-Control-") for name, _ in response.headers)


def test_the_pages_of_a_disabled_or_deleted_app_are_refused(
    http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    body = {"name": "SPA", "redirectUris": [f"{ELSEWHERE}/cb"], "scopes": ["openid"]}
    app = http.post("/_sandbox/apps", json={**body, "clientType": "public"}).json
    assert app is not None
    token, form = f"{AUTH}/oauth2/token", {"client_id": app["clientId"]}

    def granted() -> str | None:
        sent = http.post(token, data=form, headers=from_page(ELSEWHERE))
        return sent.headers.get("Access-Control-Allow-Origin")

    assert granted() == ELSEWHERE
    assert http.post(f"/_sandbox/apps/{app['clientId']}/disable", json={}).status_code == 200
    assert granted() is None
    assert http.post(f"/_sandbox/apps/{app['clientId']}/enable", json={}).status_code == 200
    assert http.delete(f"/_sandbox/apps/{app['clientId']}", json={}).status_code == 200
    assert granted() is None


def test_a_token_request_is_granted_only_to_its_own_clients_pages(
    http: FlaskClient, public: Client
) -> None:
    """Another app's page could spend this client's token limit (20 a minute) by naming it."""
    body = {"name": "Other", "redirectUris": [f"{ELSEWHERE}/cb"], "scopes": ["openid"]}
    other = http.post("/_sandbox/apps", json={**body, "clientType": "public"}).json
    assert other is not None
    for endpoint in ("token", "revoke"):
        url = f"{AUTH}/oauth2/{endpoint}"
        for client_id, page, allowed in (
            (public.client_id, APP_PAGE, True),
            (other["clientId"], APP_PAGE, False),  # a registered page, another client
            (public.client_id, ELSEWHERE, False),
            (other["clientId"], ELSEWHERE, True),
        ):
            sent = http.post(url, data={"client_id": client_id}, headers=from_page(page))
            assert (sent.status_code != 403) is allowed, (endpoint, client_id, page)
            assert sent.headers.get("Access-Control-Allow-Origin") == (page if allowed else None)


@pytest.mark.parametrize(
    ("redirect_uri", "origin"),
    [
        ("https://App.Example:443/cb?x=1", "https://app.example"),
        ("http://localhost:80/cb", "http://localhost"),
        ("http://127.0.0.1:8080/callback", "http://127.0.0.1:8080"),
        ("http://[::1]:8847/callback", "http://[::1]:8847"),
        ("com.example.app:/callback", None),  # a native app's scheme: no page
    ],
)
def test_a_redirect_uri_is_the_origin_its_page_sends(redirect_uri: str, origin: str | None) -> None:
    assert web_origin(redirect_uri) == origin


def test_an_exchange_from_the_apps_page_is_read_by_it(http: FlaskClient, public: Client) -> None:
    """The answer a page reads: RFC 6749's error body, no-store, and the CORS grant."""
    form = {
        "grant_type": "authorization_code",
        "code": "nope",
        "redirect_uri": public.redirect_uri,
        "code_verifier": "verifier-" + "v" * 50,
        "client_id": public.client_id,
    }
    response = http.post(f"{AUTH}/oauth2/token", data=form, headers=from_page(APP_PAGE))
    assert response.status_code == 400 and response.json["error"] == "invalid_grant"  # type: ignore[index]
    assert response.headers["Access-Control-Allow-Origin"] == APP_PAGE
    assert response.headers["Cache-Control"] == "no-store"


def test_a_token_request_from_an_apps_page_is_journaled_whole(
    http: FlaskClient, public: Client
) -> None:
    """The client is read from the form before the endpoint runs: the body stays whole for
    the endpoint, the journal and so a recording."""
    form = {"grant_type": "authorization_code", "code": "nope", "client_id": public.client_id}
    sent = http.post(f"{AUTH}/oauth2/token", data=form, headers=from_page(APP_PAGE))
    assert sent.headers["Access-Control-Allow-Origin"] == APP_PAGE
    [entry] = http.get("/_sandbox/requests?limit=1&path=/oauth2/token").json["items"]  # type: ignore[index]
    assert entry["form"]["client_id"] == public.client_id


@pytest.mark.parametrize("path", ["/oauth2/token", "/oauth2/revoke"])
def test_another_sites_oversized_post_is_refused_before_its_body_is_read(
    http: FlaskClient, path: str
) -> None:
    """Reading the client from a body too large raised werkzeug's 413 before the guard: any
    site's page got past the cross-site refusal (and the Host check) into the journal."""
    big = {"client_id": "x", "pad": "p" * (MAX_BODY_BYTES + 1)}
    refused = http.post(AUTH + path, data=big, headers=from_page(ELSEWHERE))
    assert refused.status_code == 403 and "this endpoint grants no CORS" in refused.text
    elsewhere = {**from_page(APP_PAGE), "Host": "evil.example"}
    assert http.post(AUTH + path, data=big, headers=elsewhere).status_code == 400
    journal = http.get(f"/_sandbox/requests?path={path}").json
    assert journal is not None
    # The other site's request is in no record; the wrong Host is, as every one is.
    assert [entry["status"] for entry in journal["items"]] == [400]
