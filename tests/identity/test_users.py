"""A user's password is refused at creation and update when the sign-in could never accept
it: the sign-in refuses a parameter with control characters (``password contains control
characters``), so a user given ``tab\\tpass`` was created (201) and could never sign in."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from tests.helpers import assert_unharmed

WITH_CONTROLS = {
    "tab": "tab\tpass-123",
    "line feed": "line\npass-123",
    "NUL": "nul\x00pass-123",  # refused for NUL by every JSON body (core/json_input.py)
    "ESC": "esc\x1bpass-123",
    "DEL": "del\x7fpass-123",
}


@pytest.mark.parametrize("password", WITH_CONTROLS.values(), ids=WITH_CONTROLS.keys())
def test_a_password_with_control_characters_is_refused_on_creation(
    svc_http: FlaskClient, password: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post("/_sandbox/users", json={"handle": "pw-user", "password": password})
    assert response.status_code == 400
    assert response.json["error"].startswith("password must not contain")  # type: ignore[index]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize("password", WITH_CONTROLS.values(), ids=WITH_CONTROLS.keys())
def test_a_password_with_control_characters_is_refused_on_update(
    svc_http: FlaskClient, password: str
) -> None:
    user = svc_http.post("/_sandbox/users", json={"password": "old-pass-123"}).json
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.patch(f"/_sandbox/users/{user['id']}", json={"password": password})  # type: ignore[index]
    assert response.status_code == 400
    assert response.json["error"].startswith("password")  # type: ignore[index]
    assert svc_http.get("/_sandbox/state").data == before


@pytest.mark.parametrize("password", ["pass word 123", "pässwörd-ቡና", "x"])
def test_other_passwords_are_kept(svc_http: FlaskClient, password: str) -> None:
    response = svc_http.post("/_sandbox/users", json={"password": password})
    assert response.status_code == 201
    assert response.json["password"] == password  # type: ignore[index]
