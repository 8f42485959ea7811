"""One rule for the characters of every URL field (core/validation.py:
``url_characters_problem``): no spaces or control characters (C0, DEL, C1), ASCII only (an
international host in its xn-- form, other characters percent-encoded), RFC 3986's characters.
A URL refused here was accepted before and then never worked: a webhook attempt failed with
``UnicodeEncodeError``, an app's redirect URI with a tab was registered but every authorize
answered ``redirect_uri contains control characters``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.core.validation import http_url_problem, success_url_problem
from svc_sandbox.sandbox import Sandbox
from tests.helpers import assert_unharmed, token_of

REFUSED = {
    "non-ASCII path": "https://shop.example/hooks/ü",
    "non-ASCII query": "https://shop.example/done?x=é",
    "international host": "https://bücher.example/done",
    "DEL": "https://shop.example/a\x7fb",
    "C1 CSI": "https://shop.example/a\x9bb",
    "NEL": "https://shop.example/a\x85b",
    "tab": "https://shop.example/c\tb",
    "line feed": "https://shop.example/c\nb",
    "no-break space": "https://shop.example/c\xa0b",
    "< in host": "https://<script>.example/x",
    '" in host': 'https://"quote".example/',
    "{ } in host": "https://{x}.example/",
    "| in host": "https://a|b.example/",
    "^ in host": "https://a^b.example/",
    "bad %-escape": "https://shop.example/%zz",
    "bad %-escape in host": "https://%zz.example/",
}
ACCEPTED = [
    "https://xn--bcher-kva.example/done",
    "https://shop.example/caf%C3%A9?q=a%20b#top",
    "https://shop.example:8443/a/b;c=d?e=f&g=h",
]


@pytest.mark.parametrize("url", REFUSED.values(), ids=REFUSED.keys())
def test_the_rule_refuses_what_is_no_ascii_rfc3986_uri(url: str) -> None:
    assert http_url_problem(url) is not None
    assert success_url_problem(url) is not None  # successUrl reads an http(s) URL the same


@pytest.mark.parametrize("url", ACCEPTED)
def test_the_rule_takes_an_ascii_uri(url: str) -> None:
    assert http_url_problem(url) is None
    assert success_url_problem(url) is None


@dataclass(frozen=True)
class UrlField:
    """A URL field and how to send one value in it (the request, its body)."""

    name: str
    send: Callable[[FlaskClient, Sandbox, str], Any]


def _org_id(sandbox: Sandbox) -> str:
    return next(
        str(o["id"]) for o in sandbox.info()["organizations"] if o["environment"] == "sandbox"
    )


APP = {"name": "Shop", "redirectUris": ["https://shop.example/cb"]}
FIELDS = [
    UrlField(
        "url",
        lambda c, s, u: c.post("/_sandbox/webhooks/endpoints", json={"url": u}),
    ),
    UrlField(
        "redirectUrls",
        lambda c, s, u: c.patch(f"/_sandbox/orgs/{_org_id(s)}", json={"redirectUrls": [u]}),
    ),
    UrlField(
        "media",
        lambda c, s, u: c.post(
            "/api/products",
            json={"title": "T", "pricingModel": "free", "media": [u]},
            headers={"Authorization": f"Bearer {token_of(s)}"},
        ),
    ),
    UrlField(
        "redirectUris", lambda c, s, u: c.post("/_sandbox/apps", json={**APP, "redirectUris": [u]})
    ),
    UrlField("website", lambda c, s, u: c.post("/_sandbox/apps", json={**APP, "website": u})),
    UrlField("logoUrl", lambda c, s, u: c.post("/_sandbox/apps", json={**APP, "logoUrl": u})),
    UrlField("picture", lambda c, s, u: c.post("/_sandbox/users", json={"picture": u})),
]


@pytest.mark.parametrize("field", FIELDS, ids=[f.name for f in FIELDS])
@pytest.mark.parametrize("url", REFUSED.values(), ids=REFUSED.keys())
def test_every_url_field_refuses_them_naming_the_field_and_changing_nothing(
    svc_http: FlaskClient, svc_sandbox: Sandbox, field: UrlField, url: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = field.send(svc_http, svc_sandbox, url)
    assert response.status_code == 400, response.json
    assert field.name in response.json["error"]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize("field", FIELDS, ids=[f.name for f in FIELDS])
@pytest.mark.parametrize("url", ACCEPTED)
def test_every_url_field_takes_an_ascii_uri(
    svc_http: FlaskClient, svc_sandbox: Sandbox, field: UrlField, url: str
) -> None:
    if field.name == "redirectUris" and "#" in url:
        url = url.partition("#")[0]  # §5.2: a redirect URI has no fragment
    response = field.send(svc_http, svc_sandbox, url)
    assert response.status_code in (200, 201), response.json
    assert url in response.get_data(as_text=True).replace("\\/", "/")
