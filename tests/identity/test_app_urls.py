"""An app's website and logo are shown on the consent page (a link and an image), and a user's
picture is issued as the ``picture`` claim apps show, so they follow the redirect-URI rule of
§5.2: https, or http on a loopback host; anything else is a 400 naming the field, on creation
and on update, and changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox

APP = {"name": "Shop", "redirectUris": ["https://shop.example/cb"]}


@dataclass(frozen=True)
class Field:
    """A URL field: its collection, the rest of a creation body, the id of what is created."""

    route: str
    body: dict[str, object]
    name: str
    key: str


FIELDS = [
    Field("/_sandbox/apps", APP, "website", "clientId"),
    Field("/_sandbox/apps", APP, "logoUrl", "clientId"),
    Field("/_sandbox/users", {}, "picture", "id"),
]
IDS = [f.name for f in FIELDS]

ACCEPTED = [
    "https://shop.example",
    "https://shop.example/about#team",
    "http://localhost:3000/",
    "http://127.0.0.1/logo.png",
]
REFUSED = [
    "javascript:alert(1)",
    "data:image/svg+xml,<svg onload=alert(1)>",
    "http://shop.example",
    "ftp://shop.example/logo.png",
    "//shop.example",
    "https://" + "a" * 2000 + ".example",
]


@pytest.mark.parametrize("field", FIELDS, ids=IDS)
@pytest.mark.parametrize("url", ACCEPTED)
def test_https_or_loopback_http_is_accepted(svc_http: FlaskClient, field: Field, url: str) -> None:
    response = svc_http.post(field.route, json={**field.body, field.name: url})
    assert response.status_code == 201, response.json
    assert response.json[field.name] == url  # type: ignore[index]


@pytest.mark.parametrize("field", FIELDS, ids=IDS)
@pytest.mark.parametrize("url", REFUSED)
def test_other_urls_are_refused_naming_the_field(
    svc_http: FlaskClient, svc_sandbox: Sandbox, field: Field, url: str
) -> None:
    before = svc_sandbox.export()
    response = svc_http.post(field.route, json={**field.body, field.name: url})
    assert response.status_code == 400
    assert response.json["error"].startswith(field.name)  # type: ignore[index]
    assert svc_sandbox.export() == before


@pytest.mark.parametrize("field", FIELDS, ids=IDS)
def test_an_update_follows_the_same_rule(
    svc_http: FlaskClient, svc_sandbox: Sandbox, field: Field
) -> None:
    created = svc_http.post(field.route, json=field.body).json
    path = f"{field.route}/{created[field.key]}"  # type: ignore[index]
    before = svc_sandbox.export()
    refused = svc_http.patch(path, json={field.name: "javascript:alert(1)"})
    assert refused.status_code == 400 and refused.json["error"].startswith(field.name)  # type: ignore[index]
    assert svc_sandbox.export() == before
    accepted = svc_http.patch(path, json={field.name: "https://shop.example/x"})
    assert accepted.status_code == 200 and accepted.json[field.name] == "https://shop.example/x"  # type: ignore[index]
