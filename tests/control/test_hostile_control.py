"""Control-plane input that once broke the whole server: clock values past the end of time,
non-finite or unbounded numbers, bodies of the wrong shape, URLs that cannot be parsed. Each
is a 400 naming the field; the server still answers, reset works, nothing changed."""

from __future__ import annotations

import time
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.core.clock import LATEST, isoformat
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import BUYER, path, published, push_checkout
from tests.helpers import assert_unharmed, token_of


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"seconds": 1e300}', "seconds"),
        ('{"seconds": 1e309}', "seconds"),
        ('{"seconds": NaN}', "seconds"),
        ('{"seconds": 300000000000}', "seconds"),
        ('{"duration": "99999999999d"}', "duration"),
        ('{"duration": 300000000000}', "duration"),
        ('{"duration": "' + "9" * 400 + 'd"}', "duration"),
        ('{"duration": "36525d1s"}', "duration"),
    ],
)
def test_clock_advance_beyond_100_years_is_a_400_naming_the_field(
    svc_http: FlaskClient, body: str, field: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post("/_sandbox/clock/advance", data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.json["error"].startswith(field)  # type: ignore[index]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # Once a regular-expression backtrack quadratic in the run of digits (seconds at 5,000).
        ('{"duration": "' + "1" * 20_000 + '"}', "duration must be at most 64 characters"),
        ('{"duration": "' + "1" * 65 + '"}', "duration must be at most 64 characters"),
        # Once a 500: float() of an int of 400 digits overflows.
        ('{"duration": ' + "9" * 400 + "}", "duration must be at most 3155760000 seconds"),
        ('{"duration": -' + "9" * 400 + "}", "duration must not be negative"),
    ],
)
def test_clock_advance_by_an_unbounded_duration_is_a_400_at_once(
    svc_http: FlaskClient, body: str, message: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post("/_sandbox/clock/advance", data=body, content_type="application/json")
    assert (response.status_code, response.json["error"]) == (400, message)  # type: ignore[index]
    assert_unharmed(svc_http, before)


def test_a_century_is_allowed(svc_http: FlaskClient) -> None:
    response = svc_http.post("/_sandbox/clock/advance", json={"duration": "36525d"})
    assert response.status_code == 200
    assert response.json["clock"]["now"] == "2126-01-02T00:00:00.000Z"  # type: ignore[index]  # 25 leap days


@pytest.mark.parametrize(
    "instant", ["9999-12-31T23:59:58Z", "9000-01-01T00:00:01Z", "1969-12-31T23:59:59Z"]
)
def test_clock_set_outside_1970_to_9000_is_a_400(svc_http: FlaskClient, instant: str) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post("/_sandbox/clock/set", json={"now": instant})
    assert response.status_code == 400
    assert response.json["error"].startswith("now must be between")  # type: ignore[index]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize(
    ("body", "field"), [({"duration": "2h"}, "duration"), ({"seconds": 7200}, "seconds")]
)
def test_an_advance_past_9000_names_what_was_sent(
    svc_http: FlaskClient, body: dict[str, Any], field: str
) -> None:
    """It said "the clock after this advance must be between ...", naming no field."""
    moved = svc_http.post("/_sandbox/clock/set", json={"now": "8999-12-31T23:00:00Z"})
    assert moved.status_code == 200
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post("/_sandbox/clock/advance", json=body)
    assert response.status_code == 400
    assert response.json == {  # type: ignore[index]
        "error": f"{field} takes the clock too far: it must be between "
        "1970-01-01T00:00:00.000Z and 9000-01-01T00:00:00.000Z",
        "code": "validation_failed",
    }
    assert_unharmed(svc_http, before)


def test_a_fast_clock_stops_at_the_end_of_time_and_every_route_still_answers() -> None:
    """A scaled clock set just before year 9000 runs past it within milliseconds: it stops
    there, so stamping, scheduling and polling never overflow."""
    sandbox = Sandbox(clock_mode="scaled", clock_factor=1_000_000, seed=1)
    client = create_app(sandbox).test_client()
    assert (
        client.post("/_sandbox/clock/set", json={"now": "8999-12-31T23:59:58Z"}).status_code == 200
    )
    time.sleep(0.05)
    assert sandbox.now() == LATEST
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    created = push_checkout(client, auth)
    assert client.get(f"/api/checkout/{created['sessionId']}").status_code == 200
    assert client.post("/_sandbox/clock/run-due", json={}).status_code == 200
    assert client.get("/_sandbox").json["clock"]["now"] == isoformat(LATEST)  # type: ignore[index]
    assert client.post("/_sandbox/reset", json={}).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        '{"productionPushDelaySeconds": 1e309}',
        '{"productionPushDelaySeconds": 1e300}',
        '{"productionPushDelaySeconds": -1}',
        '{"productionPushDelaySeconds": 86401}',
        '{"productionPushDelaySeconds": 1e300, "productionPushOutcome": "none"}',
        '{"productionPushDelaySeconds": true}',
        '{"productionPushDelaySeconds": "3"}',
    ],
)
def test_provider_numbers_are_finite_and_bounded_and_a_refusal_changes_nothing(
    svc_http: FlaskClient, live_auth: dict[str, str], body: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.patch(
        "/_sandbox/payments/provider", data=body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "productionPushDelaySeconds" in response.json["error"]  # type: ignore[index]
    assert svc_http.get("/_sandbox/state").data == before
    # The next production checkout works and takes the default outcome in its time.
    created = push_checkout(svc_http, live_auth)
    svc_http.post("/_sandbox/clock/advance", json={"seconds": 10})
    status = svc_http.get(f"/api/checkout/{created['sessionId']}", headers=live_auth)
    assert status.json["status"] == "completed"  # type: ignore[index]


@pytest.mark.parametrize(
    ("method", "route", "body", "message"),
    [
        ("PATCH", "/orgs/{org}", {"redirectUrls": ["https://shop.test/x"] * 101}, "redirectUrls"),
        ("POST", "/faults", {"initiateFailures": ["no"] * 10_001}, "initiateFailures"),
        ("POST", "/orgs/{org}/checkout-fields", {"label": "L", "options": ["a"] * 101}, "options"),
        (
            "POST",
            "/orgs/{org}/checkout-fields",
            {"label": "L", "productIds": ["p"] * 101},
            "productIds",
        ),
    ],
)
def test_a_list_past_its_count_is_a_400_naming_it(
    svc_http: FlaskClient, method: str, route: str, body: dict[str, Any], message: str
) -> None:
    """These lists had no count: a million redirect URLs were taken and every tokenless
    checkout then matched its successUrl against each."""
    org = svc_http.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.open("/_sandbox" + route.format(org=org), method=method, json=body)
    assert response.status_code == 400
    assert response.json["error"].startswith(f"{message} must have at most")  # type: ignore[index]
    assert svc_http.get("/_sandbox/state").data == before


@pytest.mark.parametrize("body", ["[]", "null", "1", '"approve"'])
def test_simulator_fail_with_a_body_that_is_not_an_object_is_a_400(
    svc_http: FlaskClient, auth: dict[str, str], body: str
) -> None:
    created = push_checkout(svc_http, auth)
    url = path(created["checkoutUrl"]) + "/fail"
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post(url, data=body, content_type="application/json")
    assert response.status_code == 400
    assert "JSON object" in response.json["error"]  # type: ignore[index]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://[::1", "cannot be parsed"),
        ("http://x:99999/", "cannot be parsed"),
        ("http://x:0/", "port between 1 and 65535"),
        ("http:///path-only", "with a host"),
        ("ftp://example.test/", "absolute http(s) URL"),
        ("http://exa mple.test/", "spaces"),
        ("http://example.test/" + "a" * 2048, "at most 2048"),
    ],
)
@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_webhook_endpoint_urls_are_parsed_and_checked(
    svc_http: FlaskClient, url: str, says: str, method: str
) -> None:
    endpoint = svc_http.post(
        "/_sandbox/webhooks/endpoints", json={"url": "http://127.0.0.1:9/hook"}
    ).json
    before = svc_http.get("/_sandbox/state").data
    target: dict[str, Any] = {
        "POST": ("/_sandbox/webhooks/endpoints", {"url": url}),
        "PATCH": (f"/_sandbox/webhooks/endpoints/{endpoint['id']}", {"url": url}),  # type: ignore[index]
    }
    route, body = target[method]
    response = svc_http.open(route, method=method, json=body)
    assert response.status_code == 400
    assert response.json["error"].startswith("url ")  # type: ignore[index]
    assert says in response.json["error"]  # type: ignore[index]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize("url", ["http://[::1", "http://shop.test:99999/done"])
def test_success_and_redirect_urls_are_parsed_too(
    svc_http: FlaskClient, auth: dict[str, str], url: str
) -> None:
    product = published(svc_http, auth)
    org = svc_http.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
    before = svc_http.get("/_sandbox/state").data
    checkout = svc_http.post(
        "/api/checkout",
        json={"productId": product["_id"], "customer": BUYER, "successUrl": url},
    )
    assert checkout.status_code == 400
    assert "successUrl" in checkout.json["error"]  # type: ignore[index]
    redirect = svc_http.patch(f"/_sandbox/orgs/{org}", json={"redirectUrls": [url]})
    assert redirect.status_code == 400
    assert "redirectUrls[0]" in redirect.json["error"]  # type: ignore[index]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize(
    "path",
    ["/_sandbox/clock", "/_sandbox/requests", "/_sandbox/scenario", "/_sandbox/webhooks/attempts"],
)
@pytest.mark.parametrize(
    "limit",
    ["9" * 4301, "%C2%B2", "%D9%A1", "+5", "0", "1001", "1" + "0" * 5000],
    ids=["4301 digits", "superscript two", "arabic-indic one", "plus", "zero", "1001", "10^5000"],
)
def test_a_control_limit_is_ascii_digits_1_to_1000_never_a_500(
    svc_http: FlaskClient, path: str, limit: str
) -> None:
    """``int()`` took ``²`` past ``isdigit()`` and raised on more than 4300 digits (a 500 on
    /_sandbox/scenario); every control ``limit`` is read by one rule now."""
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.get(f"{path}?limit={limit}")
    assert response.status_code == 400
    assert response.json == {
        "error": "limit must be an integer between 1 and 1000",
        "code": "validation_failed",
    }
    assert svc_http.get("/_sandbox/state").data == before


@pytest.mark.parametrize(
    "path",
    ["/_sandbox/clock", "/_sandbox/requests", "/_sandbox/scenario", "/_sandbox/webhooks/attempts"],
)
def test_a_control_limit_with_leading_zeros_is_read(svc_http: FlaskClient, path: str) -> None:
    assert svc_http.get(f"{path}?limit=" + "0" * 5000 + "7").status_code == 200
