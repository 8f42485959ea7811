"""Identity state (issue 11 item 11): reset, export and import; determinism."""

from __future__ import annotations

from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import AUTH, Client, tokens_for, wallet_app


def test_export_import_round_trips_users_apps_codes_tokens_consents_keys(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    http.post("/_sandbox/identity/keys/rotate", json={})
    http.post("/_sandbox/users", json={"handle": "meron"})
    state = http.get("/_sandbox/state").json
    services = state["services"]  # type: ignore[index]
    for name in ("users", "oauthApps", "signingKeys", "tokens", "authorizations"):
        assert services[name], name
    fresh = Sandbox(clock_mode="frozen")
    other = create_app(fresh).test_client()
    assert other.put("/_sandbox/state", json=state).status_code == 200
    assert other.get("/_sandbox/state").json == state
    info = other.get(
        f"{AUTH}/oauth2/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    assert info.status_code == 200
    assert fresh.users.by_handle("meron") is not None
    assert other.get(f"{AUTH}/jwks").json == http.get(f"{AUTH}/jwks").json


def test_reset_forgets_everything_but_the_seed(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    seeded = http.get("/_sandbox").json["identity"]  # type: ignore[index]
    tokens = tokens_for(http, svc_sandbox, confidential)
    http.post("/_sandbox/users", json={"handle": "meron"})
    http.post("/_sandbox/reset", json={})
    assert http.get("/_sandbox").json["identity"] == seeded  # type: ignore[index]
    info = http.get(
        f"{AUTH}/oauth2/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    assert info.status_code == 401


def test_same_seed_and_requests_give_the_same_tokens() -> None:
    def run() -> dict[str, object]:
        sandbox = Sandbox(clock_mode="frozen", seed=5)
        http = create_app(sandbox).test_client()
        return tokens_for(http, sandbox, wallet_app(sandbox))

    assert run() == run()


def test_seeded_users_and_apps_are_listed(http: FlaskClient) -> None:
    identity = http.get("/_sandbox").json["identity"]  # type: ignore[index]
    handles = {u["handle"]: u for u in identity["users"]}
    assert {"abebe", "tigist", "dawit"} <= set(handles)
    assert all(u["password"] and len(u["id"]) == 24 for u in identity["users"])
    (wallet,) = [a for a in identity["apps"] if a["clientType"] == "confidential"]
    assert wallet["clientSecret"].startswith("cs_")
    assert "wallet:send" in wallet["allowedScopes"] and wallet["walletSendApproved"]
    sandbox_org = next(
        o for o in http.get("/_sandbox").json["organizations"] if o["environment"] == "sandbox"
    )  # type: ignore[index]
    assert wallet["organizationId"] == sandbox_org["id"]
