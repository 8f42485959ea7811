"""Generated JSON against every route that takes a body (the edge of web.py and each route's
parsing): deep, wide, odd types, odd strings (lone surrogates, NUL, non-finite numbers).
Whatever arrives: never a 5xx, and a 4xx leaves the state export byte for byte as it was."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import BUYER, published, push_checkout
from tests.helpers import token_of

#: Field names the routes know, so generated objects reach past "is not a known field".
FIELDS = [
    "productId", "amount", "description", "metadata", "customer", "email", "phone", "name",
    "gateway", "successUrl", "collectedFields", "checkoutLink", "title", "pricingModel", "price",
    "status", "seconds", "duration", "now", "url", "secret", "eventTypes", "type", "data",
    "orgId", "code", "message", "productionPushDelaySeconds", "productionPushOutcome",
    "refuseCheckouts", "initiateFailed", "count", "send", "account", "environment", "kyc",
    "redirectUrls", "customFeeRate", "productIds", "label", "options", "canCover", "note",
]  # fmt: skip

ODD_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
TEXT = st.one_of(
    ODD_TEXT,
    st.sampled_from(["0911223344", "telebirr", "buyer@example.com", "http://[::1", "1h", ""]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
KEYS = st.one_of(st.sampled_from(FIELDS), ODD_TEXT)
WIDE = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(KEYS, inner, max_size=6)),
    max_leaves=24,
)


def nested(depth: int) -> str:
    return '{"data":' * depth + "1" + "}" * depth


BODIES = st.one_of(
    WIDE.map(json.dumps),  # json.dumps writes NaN and Infinity as the literals
    st.dictionaries(st.sampled_from(FIELDS), WIDE, max_size=6).map(json.dumps),
    st.integers(min_value=60, max_value=3000).map(nested),
)


def body_routes(app: Flask) -> list[tuple[str, str]]:
    return sorted(
        (method, rule.rule)
        for rule in app.url_map.iter_rules()
        for method in rule.methods or ()
        if method in ("POST", "PUT", "PATCH")
    )


ROUTES = body_routes(create_app(Sandbox(clock_mode="frozen")))


class World:
    """One sandbox with one of everything a route's path can name, and its export."""

    def __init__(self) -> None:
        self.sandbox = Sandbox(clock_mode="frozen", seed=1, strict=True)
        self.client: FlaskClient = create_app(self.sandbox).test_client()
        self.auth = {"Authorization": f"Bearer {token_of(self.sandbox)}"}
        client, auth = self.client, self.auth
        product = published(client, auth)
        simulated = push_checkout(client, auth, product_id=product["_id"])
        link = client.post("/api/checkout", json={"amount": 900, "description": "x"}, headers=auth)
        org = client.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
        endpoint = client.post("/_sandbox/webhooks/endpoints", json={"url": "http://127.0.0.1:9/"})
        checkout_link = client.post(
            f"/_sandbox/orgs/{org}/checkout-links", json={"productIds": [product["_id"]]}
        )
        checkout_field = client.post(
            f"/_sandbox/orgs/{org}/checkout-fields", json={"label": "Size"}
        )
        described = client.get(f"/_sandbox/checkout/sessions/{simulated['sessionId']}").json
        event = client.get("/_sandbox/events").json["items"][0]  # type: ignore[index]
        identity = client.get("/_sandbox").json["identity"]  # type: ignore[index]
        user, app = identity["users"][0], identity["apps"][0]
        self.values = {
            "ref": product["_id"],
            "token": product["checkoutToken"],
            "session_id": simulated["sessionId"],
            "pay_token": urlsplit(link.json["checkoutUrl"]).path.rsplit("/", 1)[-1],  # type: ignore[index]
            "org_id": org,
            "endpoint_id": endpoint.json["id"],  # type: ignore[index]
            "link_id": checkout_link.json["id"],  # type: ignore[index]
            "field_id": checkout_field.json["id"],  # type: ignore[index]
            "attempt_id": described["attempts"][0]["id"],  # type: ignore[index]
            "event_id": event["id"],
            "withdrawal_id": "0" * 24,
            "user": user["handle"],
            "user_id": user["id"],
            "client_id": app["clientId"],
        }
        self.baseline = self.export()
        self.document = json.loads(self.baseline)

    def export(self) -> bytes:
        return self.client.get("/_sandbox/state").data

    def path(self, rule: str) -> str:
        return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: self.values[m.group(1)], rule)


@pytest.fixture(scope="module")
def world() -> World:
    return World()


@settings(
    max_examples=150,  # a few seconds; derandomized, so every run throws the same bodies
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(route=st.sampled_from(ROUTES), body=BODIES)
def test_no_generated_body_breaks_a_route_or_changes_state_when_refused(
    world: World, route: tuple[str, str], body: str
) -> None:
    method, rule = route
    response = world.client.open(
        world.path(rule),
        method=method,
        data=body,
        content_type="application/json",
        headers=world.auth,
    )
    assert response.status_code < 500, (method, rule, body[:200], response.data[:300])
    if response.status_code >= 400:
        assert world.export() == world.baseline, (method, rule, body[:200])
    else:
        world.sandbox.restore(world.document)
    assert world.client.get("/_sandbox").status_code == 200


def test_the_fuzz_reaches_every_route_that_takes_a_body() -> None:
    assert len(ROUTES) > 30
    assert ("PUT", "/_sandbox/state") in ROUTES and ("POST", "/api/checkout") in ROUTES
    assert BUYER["email"] in json.dumps(BUYER)
