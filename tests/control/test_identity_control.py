"""The identity control plane: users, apps and their management, sessions, consent presets."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import Client, authorize_as, authorize_params, user_id, wallet_app


def test_create_user_with_seeded_defaults_then_update(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    created = svc_http.post("/_sandbox/users", json={})
    assert created.status_code == 201
    user = created.json
    assert len(user["id"]) == 24 and user["handle"].startswith("user-")  # type: ignore[index]
    assert user["email"].endswith("@users.sandbox.test") and user["password"]  # type: ignore[index]
    assert user["kyc"] == "approved"  # type: ignore[index]
    updated = svc_http.patch(
        f"/_sandbox/users/{user['id']}",
        json={"kyc": "rejected", "name": "Meron T."},  # type: ignore[index]
    ).json
    assert updated["kyc"] == "rejected" and updated["name"] == "Meron T."  # type: ignore[index]
    listed = svc_http.get("/_sandbox/users").json["items"]  # type: ignore[index]
    assert [u["id"] for u in listed][-1] == user["id"]  # type: ignore[index]
    assert svc_sandbox.users.find(user["id"]).kyc == "rejected"  # type: ignore[index,union-attr]


@pytest.mark.parametrize(
    ("body", "status", "mentions"),
    [
        ({"handle": "abebe"}, 409, "taken"),
        ({"email": "abebe@users.sandbox.test"}, 409, "email abebe@users.sandbox.test is taken"),
        ({"handle": "meron", "email": "Abebe@Users.Sandbox.Test"}, 409, "email"),
        ({"handle": "Not A Handle"}, 400, "handle"),
        ({"email": "nope"}, 400, "email"),
        ({"kyc": "maybe"}, 400, "kyc"),
        ({"unknown": 1}, 400, "unknown"),
    ],
)
def test_bad_user_bodies_change_nothing(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    body: dict[str, object],
    status: int,
    mentions: str,
) -> None:
    before = svc_sandbox.export()
    response = svc_http.post("/_sandbox/users", json=body)
    assert response.status_code == status
    assert mentions in response.json["error"]  # type: ignore[index]
    assert svc_sandbox.export() == before


def test_an_email_is_one_users(svc_http: FlaskClient, svc_sandbox: Sandbox) -> None:
    """The sign-in finds a user by email: a second user with it could never sign in by it."""
    tigist = user_id(svc_sandbox, "tigist")
    before = svc_sandbox.export()
    for email in ("abebe@users.sandbox.test", "ABEBE@users.sandbox.test"):
        taken = svc_http.patch(f"/_sandbox/users/{tigist}", json={"email": email})
        assert taken.status_code == 409 and f"email {email} is taken" == taken.json["error"]  # type: ignore[index]
    assert svc_sandbox.export() == before
    # The default address of a handle is checked too: it would be taken the same way.
    svc_http.patch(f"/_sandbox/users/{tigist}", json={"email": "meron@users.sandbox.test"})
    before = svc_sandbox.export()
    defaulted = svc_http.post("/_sandbox/users", json={"handle": "meron"})
    assert defaulted.status_code == 409 and "email" in defaulted.json["error"]  # type: ignore[index]
    assert svc_sandbox.export() == before
    own = svc_http.patch(f"/_sandbox/users/{tigist}", json={"email": "Meron@users.sandbox.test"})
    assert own.status_code == 200 and own.json["email"] == "Meron@users.sandbox.test"  # type: ignore[index]


#: A field sent as ``null`` on every identity control body: refused, never read as left out.
NULLS = [
    ("POST", "/_sandbox/users", {"name": None}, "name"),
    ("POST", "/_sandbox/users", {"emailVerified": None}, "emailVerified"),
    ("PATCH", "/_sandbox/users/{user}", {"handle": None}, "handle"),
    ("PATCH", "/_sandbox/users/{user}", {"kyc": None}, "kyc"),
    ("PATCH", "/_sandbox/users/{user}", {"name": "Abebe K.", "password": None}, "password"),
    ("PUT", "/_sandbox/users/{user}/consents/{client}", {"scopes": None}, "scopes"),
    ("POST", "/_sandbox/identity/authorize", {"userId": "{user}", "url": None}, "url"),
    ("POST", "/_sandbox/apps", {"name": "a", "redirectUris": None}, "redirectUris"),
    ("POST", "/_sandbox/apps", {"name": "a", "organizationId": None}, "organizationId"),
    ("PATCH", "/_sandbox/apps/{client}", {"name": None}, "name"),
    ("PATCH", "/_sandbox/apps/{client}", {"logoUrl": None}, "logoUrl"),
    ("POST", "/_sandbox/apps/{client}/approve-wallet-send", {"approved": None}, "approved"),
]


@pytest.mark.parametrize(("method", "route", "body", "field"), NULLS)
def test_null_is_refused_naming_the_field(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    method: str,
    route: str,
    body: dict[str, object],
    field: str,
) -> None:
    names = {"user": user_id(svc_sandbox), "client": wallet_app(svc_sandbox).client_id}
    body = {k: v.format(**names) if isinstance(v, str) else v for k, v in body.items()}
    before = svc_sandbox.export()
    response = svc_http.open(route.format(**names), method=method, json=body)
    assert response.status_code == 400
    assert response.json["error"] == f"{field} must not be null"  # type: ignore[index]
    assert svc_sandbox.export() == before


@pytest.mark.parametrize(
    ("change", "mentions"),
    [
        ({"redirectUris": ["http://example.com/cb"]}, "https"),
        ({"redirectUris": ["https://example.com/cb#x"]}, "fragment"),
        ({"redirectUris": []}, "redirectUris"),
        ({"scopes": ["profile"]}, "openid"),
        ({"scopes": ["openid", "admin"]}, "admin"),
        ({"clientType": "public", "scopes": ["openid", "wallet:send"]}, "confidential"),
        ({"name": ""}, "name"),
    ],
)
def test_app_registration_rules(
    svc_http: FlaskClient, svc_sandbox: Sandbox, change: dict[str, object], mentions: str
) -> None:
    body = {
        "name": "App",
        "redirectUris": ["https://app.example/cb"],
        "scopes": ["openid"],
        **change,
    }
    before = svc_sandbox.export()
    response = svc_http.post("/_sandbox/apps", json=body)
    assert response.status_code == 400
    assert mentions in response.json["error"]  # type: ignore[index]
    assert svc_sandbox.export() == before


@pytest.mark.parametrize(
    "uri",
    [
        "http://localhost:3000/cb",
        "http://127.0.0.1/cb",
        "http://[::1]:8080/cb/",
        "https://shop.example/oauth/callback",
    ],
)
def test_loopback_http_and_https_redirect_uris_are_accepted(
    svc_http: FlaskClient, uri: str
) -> None:
    body = {"name": "App", "redirectUris": [uri], "scopes": ["openid"]}
    assert svc_http.post("/_sandbox/apps", json=body).status_code == 201


def test_app_lifecycle(svc_http: FlaskClient, svc_sandbox: Sandbox) -> None:
    created = svc_http.post(
        "/_sandbox/apps",
        json={
            "name": "Shop",
            "redirectUris": ["https://shop.example/cb"],
            "scopes": ["openid", "profile"],
            "clientType": "confidential",
        },
    ).json
    client_id = created["clientId"]  # type: ignore[index]
    assert created["clientSecret"].startswith("cs_")  # type: ignore[index]
    assert created["grantTypes"] == ["authorization_code"]  # type: ignore[index]
    assert "clientSecret" not in svc_http.get(f"/_sandbox/apps/{client_id}").json  # type: ignore[operator]
    assert created["clientSecret"] not in str(svc_sandbox.export())  # type: ignore[index]
    edited = svc_http.patch(
        f"/_sandbox/apps/{client_id}", json={"scopes": ["openid", "offline_access"]}
    ).json
    assert edited["grantTypes"] == ["authorization_code", "refresh_token"]  # type: ignore[index]
    assert svc_http.post(f"/_sandbox/apps/{client_id}/disable", json={}).json["disabled"]  # type: ignore[index]
    assert not svc_http.post(f"/_sandbox/apps/{client_id}/enable", json={}).json["disabled"]  # type: ignore[index]
    deleted = svc_http.delete(f"/_sandbox/apps/{client_id}", json={})
    assert deleted.json["deleted"] is True  # type: ignore[index]
    assert svc_http.get(f"/_sandbox/apps/{client_id}").status_code == 404
    assert svc_sandbox.oauth_apps.find(client_id).deleted  # type: ignore[union-attr]


def test_app_of_an_organization_without_developer_mode_or_kyc(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    org = svc_http.post("/_sandbox/orgs", json={"name": "New", "kyc": "pending"}).json
    body = {
        "organizationId": org["id"],  # type: ignore[index]
        "name": "App",
        "redirectUris": ["https://app.example/cb"],
        "scopes": ["openid"],
    }
    response = svc_http.post("/_sandbox/apps", json=body)
    assert response.status_code == 403 and "KYC" in response.json["error"]  # type: ignore[index]
    svc_http.patch(f"/_sandbox/orgs/{org['id']}", json={"developerMode": False})  # type: ignore[index]
    response = svc_http.post("/_sandbox/apps", json=body)
    assert response.status_code == 403 and "Developer Mode" in response.json["error"]  # type: ignore[index]
    svc_sandbox.settings.app_kyc = "skip"
    svc_http.patch(f"/_sandbox/orgs/{org['id']}", json={"developerMode": True})  # type: ignore[index]
    assert svc_http.post("/_sandbox/apps", json=body).status_code == 201


def test_deleted_app_is_unknown_to_authorize_and_token(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    client = wallet_app(svc_sandbox)
    svc_http.delete(f"/_sandbox/apps/{client.client_id}", json={})
    response = svc_http.get("/auth/oauth2/authorize", query_string=authorize_params(client))
    assert response.status_code == 400 and "invalid_client" in response.text


def test_preset_consent_skips_the_consent_page(svc_http: FlaskClient, svc_sandbox: Sandbox) -> None:
    client = wallet_app(svc_sandbox)
    user = user_id(svc_sandbox, "tigist")
    preset = svc_http.put(
        f"/_sandbox/users/{user}/consents/{client.client_id}", json={"scopes": ["profile"]}
    ).json
    assert preset["scopes"] == ["openid", "profile"]  # type: ignore[index]
    session = svc_http.post(f"/_sandbox/users/{user}/session", json={}).json
    cookie = session["cookie"]  # type: ignore[index]
    svc_http.set_cookie(cookie["name"], cookie["value"], path=cookie["path"])
    response = svc_http.get(
        "/auth/oauth2/authorize", query_string=authorize_params(client, scope="openid profile")
    )
    assert response.status_code == 302 and "code=" in response.headers["Location"]


def test_a_preset_consent_replaces_the_one_before(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    """PUT sets the consent to what it names (it used to add to the one before), so an
    authorize for a scope no longer named shows the consent page again."""
    client = wallet_app(svc_sandbox)
    user = user_id(svc_sandbox, "tigist")
    path = f"/_sandbox/users/{user}/consents/{client.client_id}"
    svc_http.put(path, json={"scopes": ["profile", "email"]})
    preset = svc_http.put(path, json={"scopes": ["profile"]}).json
    assert preset["scopes"] == ["openid", "profile"]  # type: ignore[index]
    consents = svc_http.get(f"/_sandbox/users/{user}").json["consents"]  # type: ignore[index]
    assert consents == {client.client_id: ["openid", "profile"]}
    session = svc_http.post(f"/_sandbox/users/{user}/session", json={}).json
    cookie = session["cookie"]  # type: ignore[index]
    svc_http.set_cookie(cookie["name"], cookie["value"], path=cookie["path"])
    response = svc_http.get(
        "/auth/oauth2/authorize", query_string=authorize_params(client, scope="openid email")
    )
    assert response.status_code == 200 and 'name="grant"' in response.text


def test_authorize_as_takes_a_url_and_reports_page_errors(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    client = wallet_app(svc_sandbox)
    user = user_id(svc_sandbox)
    bad = Client(client.client_id, client.secret, "https://evil.example/cb")
    response = svc_http.post(
        "/_sandbox/identity/authorize",
        json={"userId": user, "params": authorize_params(bad)},
    )
    assert response.status_code == 400 and response.json["code"] == "redirect_uri_mismatch"  # type: ignore[index]
    narrowed = authorize_as(svc_http, client, user, scopes=["email"])
    assert narrowed["iss"] == svc_sandbox.settings.issuer
    consents = svc_http.get(f"/_sandbox/users/{user}").json["consents"]  # type: ignore[index]
    assert consents == {client.client_id: ["openid", "email"]}


@pytest.mark.parametrize(
    ("setup", "overrides", "code"),
    [
        (None, {"client_id": "0" * 24}, "invalid_client"),
        (None, {"client_id": "nope"}, "invalid_client"),
        ("disable", {}, "invalid_client"),
        (None, {"redirect_uri": "https://evil.example/cb"}, "redirect_uri_mismatch"),
        (None, {"redirect_uri": None}, "invalid_request"),
    ],
    ids=["unknown client", "malformed client", "disabled client", "mismatch", "no redirect"],
)
def test_authorize_as_answers_400_for_what_is_not_redirected(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    setup: str | None,
    overrides: dict[str, str | None],
    code: str,
) -> None:
    """docs/control-plane.md: "An unknown or disabled client or a redirect URI mismatch is not
    redirected: 400 {error, code}" (the token endpoint's invalid_client stays 401)."""
    client = wallet_app(svc_sandbox)
    if setup == "disable":
        svc_http.post(f"/_sandbox/apps/{client.client_id}/disable", json={})
    before = svc_sandbox.export()
    response = svc_http.post(
        "/_sandbox/identity/authorize",
        json={"userId": user_id(svc_sandbox), "params": authorize_params(client, **overrides)},
    )
    assert response.status_code == 400
    assert response.json["code"] == code and response.json["error"]  # type: ignore[index]
    assert "WWW-Authenticate" not in response.headers
    assert svc_sandbox.export() == before


@pytest.mark.parametrize(
    "url", ["http://[::1", "http://[::1/auth/oauth2/authorize?client_id=x", "http://h]/?a=1"]
)
def test_authorize_as_refuses_a_url_that_cannot_be_read(
    svc_http: FlaskClient, svc_sandbox: Sandbox, url: str
) -> None:
    """A URL urlsplit cannot read (an unclosed IPv6 bracket) is a 400 naming ``url``."""
    before = svc_sandbox.export()
    response = svc_http.post(
        "/_sandbox/identity/authorize", json={"userId": user_id(svc_sandbox), "url": url}
    )
    assert response.status_code == 400
    assert response.json == {"error": "url cannot be parsed as a URL", "code": "validation_failed"}
    assert svc_sandbox.export() == before


def test_unknown_user_is_404(svc_http: FlaskClient) -> None:
    assert svc_http.get("/_sandbox/users/" + "0" * 24).status_code == 404
    response = svc_http.post("/_sandbox/users/" + "0" * 24 + "/session", json={})
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("method", "route", "body"),
    [
        ("PUT", "/_sandbox/users/{user}/consents/{client}", {"scopes": ["profile"]}),
        ("POST", "/_sandbox/users/{user}/apps/{client}/disconnect", {}),
    ],
    ids=["preset consent", "disconnect"],
)
@pytest.mark.parametrize("deleted", [False, True], ids=["never registered", "deleted"])
def test_an_unknown_app_is_404_for_a_users_consent_and_disconnect(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    method: str,
    route: str,
    body: dict[str, object],
    deleted: bool,
) -> None:
    user = user_id(svc_sandbox)
    authorize_as(svc_http, wallet_app(svc_sandbox), user, scopes=["email"])  # a consent to keep
    client = "not-a-client"
    if deleted:
        app = {"name": "Gone", "redirectUris": ["https://gone.example/cb"], "scopes": ["openid"]}
        client = svc_http.post("/_sandbox/apps", json=app).json["clientId"]  # type: ignore[index]
        svc_http.delete(f"/_sandbox/apps/{client}", json={})
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.open(route.format(user=user, client=client), method=method, json=body)
    assert (response.status_code, response.json["error"]) == (404, f"app {client} not found")  # type: ignore[index]
    assert svc_http.get("/_sandbox/state").data == before
