"""Organizations and their API tokens (spec §5.2): an environment switch retires tokens for good."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.core.errors import SandboxError
from svc_sandbox.sandbox import Sandbox
from tests.helpers import token_of

RETIRED = "This token was created before the organization switched environment. Create a new token."


def switch_away_and_back(client: FlaskClient, org_id: str) -> None:
    for environment in ("production", "sandbox"):
        response = client.patch(f"/_sandbox/orgs/{org_id}", json={"environment": environment})
        assert response.status_code == 200, response.json


def tokens_listed(client: FlaskClient, org_id: str) -> dict[str, dict[str, Any]]:
    response = client.get(f"/_sandbox/orgs/{org_id}")
    assert response.status_code == 200, response.json
    return {t["token"]: t for t in response.json["tokens"]}  # type: ignore[index]


def products_status(client: FlaskClient, token: str) -> tuple[int, Any]:
    response = client.get("/api/products", headers={"Authorization": f"Bearer {token}"})
    return response.status_code, response.json


@pytest.fixture
def retired(svc_http: FlaskClient, svc_sandbox: Sandbox, token: str) -> str:
    """The seeded sandbox organization's id, after a switch to production and back."""
    org_id = svc_sandbox.orgs.authenticate(token).org.id
    switch_away_and_back(svc_http, org_id)
    return org_id


def test_the_control_plane_lists_a_retired_token_as_not_usable(
    svc_http: FlaskClient, retired: str, token: str
) -> None:
    new = svc_http.post(f"/_sandbox/orgs/{retired}/tokens", json={}).json["token"]  # type: ignore[index]
    listed = tokens_listed(svc_http, retired)
    assert {k: listed[token][k] for k in ("revoked", "retired", "usable")} == {
        "revoked": False,
        "retired": True,
        "usable": False,
    }
    assert {k: listed[new][k] for k in ("revoked", "retired", "usable")} == {
        "revoked": False,
        "retired": False,
        "usable": True,
    }


def test_a_revoked_token_is_not_usable_either(svc_http: FlaskClient, token: str) -> None:
    revoked = svc_http.delete(f"/_sandbox/tokens/{token}", json={}).json
    assert (revoked["revoked"], revoked["retired"], revoked["usable"]) == (True, False, False)  # type: ignore[index]


def test_export_and_import_keep_a_token_retired(
    svc_http: FlaskClient, retired: str, token: str
) -> None:
    state = svc_http.get("/_sandbox/state").json
    assert svc_http.post("/_sandbox/reset", json={}).status_code == 200
    assert products_status(svc_http, token)[0] == 200  # the seeded token lives again after reset
    assert svc_http.put("/_sandbox/state", json=state).status_code == 200
    assert products_status(svc_http, token) == (401, {"message": RETIRED})
    assert svc_http.get("/_sandbox/state").json == state


def test_an_older_export_without_the_flag_retires_tokens_of_the_other_environment(
    svc_http: FlaskClient, svc_sandbox: Sandbox, token: str
) -> None:
    """Exports made before ``retired`` existed: a token of another environment than its
    organization's is there because of a switch, so it is retired on import."""
    org_id = svc_sandbox.orgs.authenticate(token).org.id
    response = svc_http.patch(f"/_sandbox/orgs/{org_id}", json={"environment": "production"})
    assert response.status_code == 200
    state: Any = svc_http.get("/_sandbox/state").json
    for record in state["services"]["orgs"]["tokens"]:
        del record["retired"]
    assert svc_http.put("/_sandbox/state", json=state).status_code == 200
    assert tokens_listed(svc_http, org_id)[token]["usable"] is False
    assert svc_http.patch(f"/_sandbox/orgs/{org_id}", json={"environment": "sandbox"}).json
    assert products_status(svc_http, token) == (401, {"message": RETIRED})


def test_the_seeded_credentials_skip_a_retired_token(
    svc_http: FlaskClient, svc_sandbox: Sandbox, retired: str, token: str
) -> None:
    from svc_sandbox.exec import environment

    assert token_of(svc_sandbox, "sandbox") == token  # still listed first, but retired
    new = svc_http.post(f"/_sandbox/orgs/{retired}/tokens", json={}).json["token"]  # type: ignore[index]
    assert environment(svc_sandbox.info())["SVC_TEST_TOKEN"] == new


@pytest.mark.parametrize("suffix", ["\n", "\r\n", " ", "\x00"])
def test_a_token_is_matched_whole_a_trailing_character_makes_it_malformed(
    svc_sandbox: Sandbox, token: str, suffix: str
) -> None:
    with pytest.raises(SandboxError) as refused:
        svc_sandbox.orgs.authenticate(token + suffix)
    assert refused.value.status == 401
    assert refused.value.message == "Malformed API token: expected svc_test_... or svc_live_..."
