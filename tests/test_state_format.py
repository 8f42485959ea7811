"""PUT /_sandbox/state: validated as a whole against the export format before anything
changes (a 400 naming the path), applied all or nothing, with its own body limit."""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.commerce.fees import MAX_MINOR
from svc_sandbox.core.durations import MAX_SECONDS
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.state_format import MAX_COUNT, MAX_TEXT
from tests.commerce.checkout_helpers import BUYER, published, push_checkout
from tests.helpers import assert_unharmed, token_of
from tests.identity.helpers import authorize_as, exchange, user_id, wallet_app
from tests.state_scenes import busy_sandbox
from tests.test_state_references import busy_export
from tests.webhooks.conftest import call

Edit = Callable[[dict[str, Any]], None]


def services(document: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = document["services"]
    return result


#: Documents that were accepted once and broke later requests, and their 400's path.
BREAKING: list[tuple[str, Edit, str]] = [
    (
        "order amount not an integer",
        lambda d: services(d)["orders"]["orders"][0].update(amount="lots"),
        "services.orders.orders[0].amount must be an integer",
    ),
    (
        "unknown scheduler kind",
        lambda d: d["scheduler"]["entries"][0].update(kind="nope"),
        "scheduler.entries[0].kind must be one of",
    ),
    (
        "scheduler kind an array (unhashable)",
        lambda d: d["scheduler"]["entries"][0].update(kind=["checkout.expire"]),
        "scheduler.entries[0].kind must be one of",
    ),
    (
        "scheduler kind an object (unhashable)",
        lambda d: d["scheduler"]["entries"][0].update(kind={"a": 1}),
        "scheduler.entries[0].kind must be one of",
    ),
    (
        "scheduler payload of the wrong shape",
        lambda d: d["scheduler"]["entries"][0].update(payload={}),
        "scheduler.entries[0]",
    ),
    ("string seq", lambda d: d["scheduler"].update(seq="5"), "scheduler.seq must be an integer"),
    (
        "session status outside its lifecycle",
        lambda d: services(d)["checkout"]["sessions"][0].update(status="bogus"),
        "services.checkout.sessions[0].status must be",
    ),
    (
        "unknown field",
        lambda d: services(d)["products"]["products"][0].update(colour="red"),
        "services.products.products[0].colour is not a known field",
    ),
    (
        "instant past the clock's range",
        lambda d: d["clock"].update(exact="9999-12-31T23:59:59+00:00"),
        "clock.exact must be between",
    ),
    (
        "record instant past a century after the clock's range",
        lambda d: services(d)["orders"]["orders"][0].update(created_at="9100-01-03T00:00:00+00:00"),
        "services.orders.orders[0].created_at must be between 1970-01-01T00:00:00.000Z and "
        "9100-01-02T00:00:00.000Z",
    ),
    (
        "instant that is not a date",
        lambda d: services(d)["orders"]["orders"][0].update(created_at="yesterday"),
        "services.orders.orders[0].created_at must be an ISO 8601 date-time",
    ),
    (
        "unbounded provider delay",
        lambda d: services(d)["payments"]["config"].update(push_delay_seconds=1e300),
        "services.payments.config.push_delay_seconds",
    ),
    (
        "decimal that is not a number",
        lambda d: services(d)["orgs"]["orgs"][0].update(custom_fee_rate="NaN"),
        "services.orgs.orgs[0].custom_fee_rate must be a finite decimal",
    ),
    (
        "a fee rate in other digits (Decimal() reads it as 0.05)",
        lambda d: services(d)["orgs"]["orgs"][0].update(custom_fee_rate="\u0660.\u0660\u0665"),
        "services.orgs.orgs[0].custom_fee_rate must be a decimal number written as a string",
    ),
    (
        "a fee rate with an underscore (Decimal() reads it as 0.05)",
        lambda d: services(d)["orgs"]["orgs"][0].update(custom_fee_rate="0.0_5"),
        "services.orgs.orgs[0].custom_fee_rate must be a decimal number written as a string",
    ),
    (
        "a fee rate over 1",
        lambda d: services(d)["orgs"]["orgs"][0].update(custom_fee_rate="1.5"),
        "services.orgs.orgs[0].custom_fee_rate must be less than or equal to 1",
    ),
    (
        "a negative fee rate",
        lambda d: services(d)["orgs"]["orgs"][0].update(custom_fee_rate="-0.01"),
        "services.orgs.orgs[0].custom_fee_rate must be greater than or equal to 0",
    ),
    (
        "a fee rate finer than a PATCH takes",
        lambda d: services(d)["orgs"]["orgs"][0].update(custom_fee_rate="1E-31"),
        "services.orgs.orgs[0].custom_fee_rate must have at most 30 decimal places",
    ),
    (
        "two sessions with one id",
        lambda d: services(d)["checkout"]["sessions"].append(
            copy.deepcopy(services(d)["checkout"]["sessions"][0])
        ),
        "services.checkout.sessions[1].id repeats",
    ),
    (
        "two users with one handle (the sign-in finds the first)",
        lambda d: services(d)["users"]["users"][1].update(
            handle=services(d)["users"]["users"][0]["handle"]
        ),
        "services.users.users[1].handle repeats",
    ),
    (
        "two users with one email in another case",
        lambda d: services(d)["users"]["users"][1].update(
            email=services(d)["users"]["users"][0]["email"].upper()
        ),
        "services.users.users[1].email repeats",
    ),
    (
        "a user's picture that is a script (issued as the picture claim)",
        lambda d: services(d)["users"]["users"][0].update(picture="javascript:alert(1)"),
        "services.users.users[0].picture: javascript:alert(1) must be https",
    ),
    (
        "an app's logo on plain http elsewhere than a loopback host",
        lambda d: services(d)["oauthApps"]["apps"][0].update(logo_url="http://evil.test/x.png"),
        "services.oauthApps.apps[0].logo_url: http://evil.test/x.png must be https",
    ),
    (
        "an app's redirect URI with a fragment",
        lambda d: services(d)["oauthApps"]["apps"][0]["redirect_uris"].append(
            "https://app.sandbox.test/cb#x"
        ),
        "must not have a fragment",
    ),
    (
        "an organization's redirect URL urlsplit cannot read (tokenless checkouts 500 after)",
        lambda d: services(d)["orgs"]["orgs"][0].update(redirect_urls=["http://[::1"]),
        "services.orgs.orgs[0].redirect_urls[0] must be an absolute http(s) URL (it cannot be "
        "parsed)",
    ),
    (
        "an organization's redirect URL of another scheme",
        lambda d: services(d)["orgs"]["orgs"][0].update(redirect_urls=["ftp://shop.example/"]),
        "services.orgs.orgs[0].redirect_urls[0] must be an absolute http(s) URL with a host",
    ),
    (
        "a service missing",
        lambda d: services(d).pop("payouts"),
        "services.payouts is required",
    ),
    ("another format version", lambda d: d.update(format=2), "format must be 1"),
    ("a format of true (Python's 1)", lambda d: d.update(format=True), "format must be 1"),
    # values the API never makes, which ordinary requests then acted on
    (
        "a negative latency delay (every GET /api/products a 400 after)",
        lambda d: services(d)["latencyFaults"]["rules"].append(latency_rule(d, -1)),
        "services.latencyFaults.rules[0].delay_seconds must be a finite number from 0 to",
    ),
    (
        "a negative product price (a paid order of -1 after)",
        lambda d: services(d)["products"]["products"][0].update(amount=-1),
        "services.products.products[0].amount must be greater than or equal to 0",
    ),
    (
        "a product price past the schemas' money bound",
        lambda d: services(d)["products"]["products"][0].update(amount=MAX_MINOR + 1),
        f"services.products.products[0].amount must be less than or equal to {MAX_MINOR}",
    ),
    (
        "a fixed-price product of no amount (its checkout went through)",
        lambda d: services(d)["products"]["products"][0].update(amount=None),
        "services.products.products[0].amount is required for fixed products",
    ),
    (
        "a pay-what-you-want default below its minimum",
        lambda d: services(d)["products"]["products"][0].update(
            pricing_model="pwyw", amount=None, minimum_amount=500, default_amount=100
        ),
        "services.products.products[0].default_amount must be at least minimum_amount",
    ),
    (
        "a negative order amount (a negative balance after)",
        lambda d: services(d)["orders"]["orders"][0].update(amount=-1),
        "services.orders.orders[0].amount must be greater than or equal to 0",
    ),
    (
        "a negative count (refuse_checkouts)",
        lambda d: services(d)["payments"]["config"].update(refuse_checkouts=-1),
        "services.payments.config.refuse_checkouts must be greater than or equal to 0",
    ),
    (
        "a negative attempt number in a scheduler payload",
        lambda d: d["scheduler"]["entries"][0].update(
            kind="webhook.attempt", payload={"deliveryId": "whd_" + "0" * 24, "attempt": -1}
        ),
        "scheduler.entries[0].webhook.attempt.payload.attempt must be greater than or equal to 0",
    ),
    (
        "a negative webhook fault count",
        lambda d: services(d)["webhookDeliveries"]["fault"].update(count=-1),
        "services.webhookDeliveries.fault.count must be greater than or equal to 0",
    ),
    (
        "a product title longer than the schemas take (5 MB pages after)",
        lambda d: services(d)["products"]["products"][0].update(title="T" * 5_000_000),
        "services.products.products[0].title must be 1 to 120 characters",
    ),
    (
        "a product description longer than the schemas take",
        lambda d: services(d)["products"]["products"][0].update(description="d" * 5001),
        "services.products.products[0].description must have at most 5000",
    ),
    (
        "any string past a request body's cap",
        lambda d: services(d)["orders"]["orders"][0].update(product_title="t" * (MAX_TEXT + 1)),
        f"services.orders.orders[0].product_title must have at most {MAX_TEXT}",
    ),
    (
        "a bad product title after a good change",
        lambda d: (
            services(d)["products"]["products"][0].update(title="Changed"),
            services(d)["payouts"].update(seq=None),
        ),
        "services.payouts.seq must be an integer",
    ),
]


def latency_rule(document: dict[str, Any], delay: float) -> dict[str, Any]:
    """A latency fault record as the control plane makes one, of ``delay`` seconds."""
    return {
        "id": "lat_" + "0" * 24,
        "path": "/api/products",
        "delay_seconds": delay,
        "created_at": document["clock"]["exact"],
        "method": None,
        "org_id": None,
        "remaining": None,
        "applied": 0,
    }


@pytest.fixture
def busy(svc_http: FlaskClient, auth: dict[str, str]) -> dict[str, Any]:
    """A state with a product, an open session (a scheduler entry) and its order."""
    push_checkout(svc_http, auth)
    document: dict[str, Any] = svc_http.get("/_sandbox/state").json  # type: ignore[assignment]
    return document


@pytest.mark.parametrize(("case", "edit", "message"), BREAKING, ids=[b[0] for b in BREAKING])
def test_a_document_that_would_break_later_is_a_400_naming_the_path_and_changes_nothing(
    svc_http: FlaskClient, busy: dict[str, Any], case: str, edit: Edit, message: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    document = copy.deepcopy(busy)
    edit(document)
    response = svc_http.put("/_sandbox/state", json=document)
    assert response.status_code == 400, case
    assert message in response.json["error"], response.json  # type: ignore[index]
    assert_unharmed(svc_http, before)


def test_an_export_imports_back_byte_for_byte(svc_http: FlaskClient, busy: dict[str, Any]) -> None:
    exported = svc_http.get("/_sandbox/state").data
    svc_http.post("/_sandbox/reset", json={})
    assert (
        svc_http.put("/_sandbox/state", data=exported, content_type="application/json").status_code
        == 200
    )
    assert svc_http.get("/_sandbox/state").data == exported


def test_an_export_taken_at_the_end_of_time_imports_again(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """A sandbox whose clock stands near its end makes records due after it (a session
    expiring 30 minutes later, its webhooks' retries): its export imports again as it is."""
    assert (
        svc_http.post("/_sandbox/clock/set", json={"now": "8999-12-31T23:50:00Z"}).status_code
        == 200
    )
    session = push_checkout(svc_http, auth)
    status: Any = svc_http.get(f"/api/checkout/{session['sessionId']}").json
    assert status["expiresAt"] == "9000-01-01T00:20:00.000Z"
    exported = svc_http.get("/_sandbox/state").data
    svc_http.post("/_sandbox/reset", json={})
    imported = svc_http.put("/_sandbox/state", data=exported, content_type="application/json")
    assert imported.status_code == 200, imported.json
    assert svc_http.get("/_sandbox/state").data == exported


def test_the_schema_of_the_format_is_served(svc_http: FlaskClient) -> None:
    schema = svc_http.get("/_sandbox/state/schema").json
    assert schema["properties"]["format"]["const"] == 1  # type: ignore[index]
    assert set(schema["properties"]["services"]["$ref"].split("/")[-1:]) == {"ServicesState"}  # type: ignore[index]


def test_the_state_route_takes_more_than_the_1_mib_cap(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """Other routes answer 413 above 1 MiB; an export of that size imports."""
    product = published(svc_http, auth, description="d" * 5000)
    exported = json.loads(svc_http.get("/_sandbox/state").data)
    record = services(exported)["products"]["products"][0]
    for index in range(300):
        services(exported)["products"]["products"].append(
            {**record, "id": f"{index:024x}", "checkout_token": f"p_{index:016d}"}
        )
    body = json.dumps(exported).encode()
    assert len(body) > 1024 * 1024
    assert (
        svc_http.post(
            "/api/products", data=body, content_type="application/json", headers=auth
        ).status_code
        == 413
    )
    assert (
        svc_http.put("/_sandbox/state", data=body, content_type="application/json").status_code
        == 200
    )
    assert svc_http.get(f"/api/products/{product['_id']}", headers=auth).status_code == 200
    svc_http.application.extensions["svc_sandbox"].settings.max_state_bytes = 1024 * 1024
    assert (
        svc_http.put("/_sandbox/state", data=body, content_type="application/json").status_code
        == 413
    )


def test_reset_restores_the_seeded_state_after_an_import(
    svc_http: FlaskClient, busy: dict[str, Any]
) -> None:
    svc_http.post("/_sandbox/reset", json={})
    fresh = svc_http.get("/_sandbox/state").data
    assert svc_http.put("/_sandbox/state", json=busy).status_code == 200
    svc_http.post("/_sandbox/reset", json={})
    assert svc_http.get("/_sandbox/state").data == fresh


def test_a_checkout_after_an_import_continues_where_the_export_stopped(
    svc_http: FlaskClient, auth: dict[str, str], busy: dict[str, Any]
) -> None:
    product = published(svc_http, auth)
    first = svc_http.post("/api/checkout", json={"productId": product["_id"], "customer": BUYER})
    exported = svc_http.get("/_sandbox/state").json
    svc_http.post("/_sandbox/reset", json={})
    svc_http.put("/_sandbox/state", json=exported)
    again = svc_http.post("/api/checkout", json={"productId": product["_id"], "customer": BUYER})
    assert first.status_code == again.status_code == 200
    assert first.json["sessionId"] != again.json["sessionId"]  # type: ignore[index]


#: Checkouts each worker makes (four workers: within §8's limits on a frozen clock).
ROUNDS = 15
#: Products made first: a larger state takes longer to encode, outside the lock, which
#: widens the window in which a record shared with the live state would change.
FILLERS = 500


def test_exports_taken_during_parallel_checkouts_are_each_consistent(
    svc_server: RunningServer,
) -> None:
    """The export copies the state under the lock and encodes it outside: an export taken
    while threads check out and pay over a real server is one moment of the state. Free
    checkouts make their order in the request that opens the session; link payments complete
    a session after its order was made, so a record shared with the live state instead of
    copied shows up as a session naming an order the export lacks, or a paid order whose
    session is still open. Every export also imports again."""
    sandbox = svc_server.sandbox
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    free, priced = (
        call(svc_server, "POST", "/api/products", product, **auth)["product"]
        for product in (
            {"title": "Free", "pricingModel": "free", "status": "published"},
            {"title": "Book", "pricingModel": "fixed", "price": {"amount": 500}},
        )
    )
    call(svc_server, "PATCH", f"/api/products/{priced['_id']}", {"status": "published"}, **auth)

    def buy_free() -> None:
        for _ in range(ROUNDS):
            call(
                svc_server,
                "POST",
                "/api/checkout",
                {"productId": free["_id"], "customer": BUYER},
                **auth,
            )

    def pay_by_link() -> None:
        for _ in range(ROUNDS):
            opened = call(svc_server, "POST", "/api/checkout", {"productId": priced["_id"]}, **auth)
            pay_path = urlsplit(opened["checkoutUrl"]).path
            call(
                svc_server,
                "POST",
                pay_path,
                {**BUYER, "gateway": "telebirr", "phone": "0900000001"},
            )

    for number in range(FILLERS):
        call(
            svc_server,
            "POST",
            "/api/products",
            {"title": f"Filler {number}", "pricingModel": "free"},
            **auth,
        )
    failures: list[BaseException] = []
    exports: list[dict[str, Any]] = []

    def run(work: Callable[[], None]) -> Callable[[], None]:
        def guarded() -> None:
            try:
                work()
            except BaseException as error:  # a worker's failure fails the test
                failures.append(error)

        return guarded

    workers = [
        threading.Thread(target=run(work))
        for work in (buy_free, buy_free, pay_by_link, pay_by_link)
    ]

    def export_while_working() -> None:
        while any(thread.is_alive() for thread in workers):
            exports.append(call(svc_server, "GET", "/_sandbox/state"))

    exporters = [threading.Thread(target=run(export_while_working)) for _ in range(2)]
    for thread in workers + exporters:
        thread.start()
    for thread in workers + exporters:
        thread.join()
    assert not failures, failures
    exports.append(call(svc_server, "GET", "/_sandbox/state"))

    elsewhere = create_app(Sandbox(clock_mode="frozen", rate_limits=False)).test_client()
    for document in exports:
        orders = {o["id"]: o["status"] for o in services(document)["orders"]["orders"]}
        sessions = services(document)["checkout"]["sessions"]
        assert {s["order_id"] for s in sessions if s["order_id"]} == set(orders)
        for session in sessions:
            if session["order_id"]:
                paid = orders[session["order_id"]] == "paid"
                assert paid == (session["status"] == "completed"), session
        answer = elsewhere.put("/_sandbox/state", json=document)
        assert answer.status_code == 200, answer.json
    last = services(exports[-1])
    assert len(last["checkout"]["sessions"]) == 4 * ROUNDS
    assert sum(o["status"] == "paid" for o in last["orders"]["orders"]) == 4 * ROUNDS
    assert len(exports) > 2  # some were taken while the workers ran
    print("EXPORTS", len(exports))


def test_two_snapshots_of_a_busy_state_share_only_frozen_records() -> None:
    """Every record of the state that can change is copied into a snapshot, slotted
    dataclasses too: what two snapshots share can only be immutable (str, numbers,
    datetimes, enums) or a frozen record (an event, a provider step: nothing changes them
    once made), so a request changing the live state after the lock is let go cannot reach
    an export being encoded."""
    sandbox, _ = busy_sandbox()

    def mutable(value: Any, found: dict[int, Any]) -> dict[int, Any]:
        if isinstance(value, dict):
            found[id(value)] = value
            for item in value.values():
                mutable(item, found)
        elif isinstance(value, list):
            found[id(value)] = value
            for item in value:
                mutable(item, found)
        elif dataclasses.is_dataclass(value):
            found[id(value)] = value
            if not type(value).__dataclass_params__.frozen:  # type: ignore[attr-defined]
                for item in dataclasses.fields(value):
                    mutable(getattr(value, item.name), found)
        return found

    first, second = mutable(sandbox.snapshot(), {}), mutable(sandbox.snapshot(), {})
    kinds = {type(value).__name__ for value in first.values()}
    assert {"CheckoutSession", "Order", "Product", "Event", "Delivery", "Attempt"} <= kinds
    shared = {type(first[key]).__name__ for key in first.keys() & second.keys()}
    assert shared == {"Event", "ProviderStep"}


def test_an_export_leaves_the_attempt_journal_as_it_was() -> None:
    """An export writes each webhook attempt's wall-time duration as 0 (so exports of one
    seed compare equal); the live journal keeps the measured durations."""
    sandbox, http = busy_sandbox()
    path = "/_sandbox/webhooks/attempts"
    before = http.get(path).json
    assert any(attempt["durationMs"] > 0 for attempt in before["items"]), before
    http.get("/_sandbox/state")
    assert http.get(path).json == before


def test_a_document_that_fails_while_applied_leaves_every_part_as_it_was(
    svc_http: FlaskClient, busy: dict[str, Any]
) -> None:
    """The id source's Mersenne Twister position past 624 was found only as the document was
    applied, after every service ("could not be applied: ValueError('invalid state')"); it
    is refused with the rest now, naming it, and no service changes."""
    before = svc_http.get("/_sandbox/state").data
    document = copy.deepcopy(busy)
    services(document)["products"]["products"][0]["title"] = "Changed"
    document["ids"]["state"][1][-1] = 1000
    response = svc_http.put("/_sandbox/state", json=document)
    assert response.status_code == 400
    assert response.json["error"].startswith("state document: ids.state[1][624] is 1000")  # type: ignore[index]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://[::1/hooks", "must be an absolute http(s) URL (it cannot be parsed)"),
        ("ftp://127.0.0.1/hooks", "must be an absolute http(s) URL with a host"),
    ],
)
def test_a_webhook_endpoint_url_the_api_refuses_is_refused_on_import(
    svc_http: FlaskClient, url: str, problem: str
) -> None:
    """One the sender could not read made every later PATCH or DELETE of an endpoint a 500
    (the change applied all the same)."""
    svc_http.post("/_sandbox/webhooks/endpoints", json={"url": "http://127.0.0.1:9/a"})
    document: dict[str, Any] = svc_http.get("/_sandbox/state").json  # type: ignore[assignment]
    before = svc_http.get("/_sandbox/state").data
    services(document)["webhookEndpoints"]["endpoints"][0]["url"] = url
    response = svc_http.put("/_sandbox/state", json=document)
    assert response.status_code == 400
    assert response.json["error"] == (  # type: ignore[index]
        f"state document: services.webhookEndpoints.endpoints[0].url {problem}"
    )
    assert_unharmed(svc_http, before)


def test_a_long_url_is_repeated_cut_in_the_refusal(svc_http: FlaskClient) -> None:
    document: dict[str, Any] = svc_http.get("/_sandbox/state").json  # type: ignore[assignment]
    services(document)["users"]["users"][0]["picture"] = "ftp://x/" + "a" * 1500
    response = svc_http.put("/_sandbox/state", json=document)
    assert response.status_code == 400
    error = response.json["error"]  # type: ignore[index]
    assert "ftp://x/aaaa" in error and "…" in error and len(error) < 250


# --- values the services look records up by (audit: ids and state, findings 3 to 7) ----------


@pytest.fixture(scope="module")
def scene() -> str:
    """The export of the busy scene (every kind of record; tests/state_scenes.py) with a due
    webhook attempt, as text: each case edits a fresh copy."""
    return busy_export()


def renamed(document: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``document`` with every occurrence of the id ``old`` (the record, what names it, keys
    that hold it): ids are drawn at random, so the text holds ``old`` nowhere else."""
    edited: dict[str, Any] = json.loads(json.dumps(document).replace(old, new))
    return edited


def first(document: dict[str, Any], where: str, **fields: Any) -> dict[str, Any]:
    """The first record of ``services.<where>`` with these field values."""
    section, name = where.split(".")
    records = services(document)[section][name]
    return next(r for r in records if all(r.get(k) == v for k, v in fields.items()))


def rename_first(where: str, field: str, new: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda d: renamed(d, first(d, where)[field], new)


def set_first(where: str, **values: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def edit(document: dict[str, Any]) -> dict[str, Any]:
        first(document, where).update(values)
        return document

    return edit


HEX_WORDS = "must be 24 lowercase hex characters"
#: Ids and tokens of a shape the API never makes: imported, they were out of reach (a
#: withdrawal ``W-1`` answered 400 at GET, a token ``not-a-token`` 401 Malformed).
SHAPES: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]] = [
    (
        "withdrawal id W-1",
        rename_first("payouts.withdrawals", "id", "W-1"),
        f"services.payouts.withdrawals[0].id is 'W-1', which {HEX_WORDS}",
    ),
    (
        "checkout session id S1",
        rename_first("checkout.sessions", "id", "S1"),
        f"services.checkout.sessions[0].id is 'S1', which {HEX_WORDS}",
    ),
    (
        "user id with a path in it",
        rename_first("users.users", "id", "USER/../1"),
        f"services.users.users[0].id is 'USER/../1', which {HEX_WORDS}",
    ),
    (
        "event id of another prefix",
        lambda d: renamed(
            d, first(d, "events.events")["id"], "xyz_" + first(d, "events.events")["id"][4:]
        ),
        "services.events.events[0].id is 'xyz_",
    ),
    (
        "webhook endpoint id of another prefix",
        lambda d: renamed(d, first(d, "webhookEndpoints.endpoints")["id"], "zz_1"),
        "services.webhookEndpoints.endpoints[0].id is 'zz_1', which must be we_ then 24 "
        "lowercase hex characters",
    ),
    (
        "API token of no known shape",
        set_first("orgs.tokens", token="not-a-token"),
        "services.orgs.tokens[0].token is 'not-a-token', which must be svc_test_... or "
        "svc_live_...",
    ),
    (
        "product checkout token without p_",
        set_first("products.products", checkout_token="tok_1"),
        "services.products.products[0].checkout_token is 'tok_1', which must be a p_ token",
    ),
    (
        "product checkout token with more after its characters",
        set_first("products.products", checkout_token="p_abc/def"),
        "services.products.products[0].checkout_token is 'p_abc/def', which must be a p_ token",
    ),
    (
        "custom trigger phone in another spelling",
        lambda d: set_first(
            "triggers.custom", phone="09" + first(d, "triggers.custom")["phone"][4:]
        )(d),
        "which must be written as the registry keeps it: 2519",
    ),
    (
        "custom trigger on one of the spec's phones",
        set_first("triggers.custom", phone="251900000001"),
        "services.triggers.custom[0].phone is '251900000001', which is one of the spec's own",
    ),
    (
        "empty webhook endpoint secret",
        set_first("webhookEndpoints.endpoints", secret=""),
        "services.webhookEndpoints.endpoints[0].secret is '', which must not be empty",
    ),
    (
        "blank webhook endpoint secret",
        set_first("webhookEndpoints.endpoints", secret="   "),
        "services.webhookEndpoints.endpoints[0].secret is '   ', which must not be empty",
    ),
    (
        "webhook endpoint secret longer than the control plane takes",
        set_first("webhookEndpoints.endpoints", secret="s" * 257),
        "secret is 'sss",
    ),
    (
        "empty default webhook secret",
        lambda d: services(d)["webhookEndpoints"].update(defaultSecret="") or d,
        "services.webhookEndpoints.defaultSecret",
    ),
    (
        "placeholder product id of no shape",
        lambda d: renamed(d, next(iter(services(d)["checkout"]["placeholders"].values())), "P-1"),
        "services.checkout.placeholders[",
    ),
]


def twin(where: str, *, copy_of: dict[str, Any] | None = None, **changes: Any) -> Edit2:
    """Appends a copy of the first record of ``services.<where>`` with ``changes``: a second
    record sharing every other value (its index keys among them) with the first."""

    def edit(document: dict[str, Any]) -> dict[str, Any]:
        section, name = where.split(".")
        records = services(document)[section][name]
        records.append({**copy.deepcopy(records[0]), **changes})
        return document

    return edit


Edit2 = Callable[[dict[str, Any]], dict[str, Any]]
#: Two records sharing a key the services index them by (beside their id): the second used to
#: overwrite the first in the index, or hide behind it.
KEYS: list[tuple[str, Edit2, str]] = [
    (
        "two wallet transfers with one idempotency key",
        lambda d: transfer_again(d),
        "] repeats sender_id '",
    ),
    (
        "two products with one checkout token",
        twin("products.products", id="f" * 24),
        ".checkout_token repeats 'p_",
    ),
    (
        "two customers of one organization with one email, in two cases",
        lambda d: twin(
            "customers.customers",
            id="d" * 24,
            email=first(d, "customers.customers")["email"].upper(),
        )(d),
        "] repeats org_id '",
    ),
    (
        "two access tokens with one token digest",
        twin("tokens.access", jti="e" * 24),
        "services.tokens.access[",
    ),
]

#: Webhook attempts still to make whose number no delivery could have.
ATTEMPTS: list[tuple[str, Edit2, str]] = [
    (
        "a scheduled attempt 0",
        lambda d: scheduled_attempt(d).update(attempt=0) or d,
        "payload.attempt is 0; an attempt number is from 1 to 6",
    ),
    (
        "a scheduled attempt past the retry schedule",
        lambda d: scheduled_attempt(d).update(attempt=7) or d,
        "payload.attempt is 7; an attempt number is from 1 to 6",
    ),
    (
        "a scheduled attempt that is not its delivery's next",
        lambda d: scheduled_attempt(d).update(attempt=scheduled_attempt(d)["attempt"] + 1) or d,
        "attempts (its attempts): its next is number",
    ),
    (
        "an attempt both due and scheduled",
        lambda d: (
            services(d)["webhookDeliveries"]["due"].append(
                {
                    "due": d["clock"]["exact"],
                    "seq": 99,
                    "delivery_id": scheduled_attempt(d)["deliveryId"],
                    "number": scheduled_attempt(d)["attempt"],
                }
            )
            or services(d)["webhookDeliveries"].update(dueSeq=99)
            or d
        ),
        "payload.attempt repeats delivery 'whd_",
    ),
    (
        "a pending delivery whose next attempt is neither due nor scheduled (it stayed pending)",
        lambda d: (
            d["scheduler"].update(
                entries=[e for e in d["scheduler"]["entries"] if e["kind"] != "webhook.attempt"]
            )
            or d
        ),
        "] is pending, but its next attempt (number ",
    ),
]

#: Id sources that re-draw: every create after the import would have made one id again.
IDS: list[tuple[str, Edit2, str]] = [
    (
        "the all-zero Mersenne Twister state",
        lambda d: d["ids"].update(state=[3, [0] * 624 + [624], None]) or d,
        "ids.state is a degenerate generator state: its next draws repeat",
    ),
    (
        "a position past the generator's words (was 'ValueError('invalid state')')",
        lambda d: d["ids"]["state"][1].__setitem__(624, 700) or d,
        "ids.state[1][624] is 700, which must be 0 to 624",
    ),
    (
        "a seed that is a float (was 'ids.seed.int must be an integer')",
        lambda d: d["ids"].update(seed=1.5) or d,
        "ids.seed must be an integer or a string",
    ),
    (
        "a state whose words are all zero past its position",
        lambda d: d["ids"].update(state=[3, [0] * 624 + [0], None]) or d,
        "ids.state is a degenerate generator state",
    ),
]


#: A duration of 400 digits: ``float()`` of it overflows, which answered 500; refused in the
#: words a too-large float gets.
HUGE = 10**400
TOO_LONG = f"must be a finite number from 0 to {MAX_SECONDS:.0f}"
FLOATS: list[tuple[str, Edit2, str]] = [
    (
        "a provider push delay of 400 digits",
        lambda d: services(d)["payments"]["config"].update(push_delay_seconds=HUGE) or d,
        f"services.payments.config.push_delay_seconds {TOO_LONG}",
    ),
    (
        "a webhook attempt's duration of 400 digits",
        set_first("webhookDeliveries.attempts", duration_ms=HUGE),
        f"services.webhookDeliveries.attempts[0].duration_ms {TOO_LONG}",
    ),
    (
        "a custom trigger's decision delay of 400 digits",
        set_first("triggers.custom", decision_delay_seconds=HUGE),
        f"services.triggers.custom[0].decision_delay_seconds {TOO_LONG}",
    ),
    (
        "a notification fault's delay of 400 digits",
        lambda d: first(d, "notificationFaults.rules")["fault"].update(delay_seconds=HUGE) or d,
        f"services.notificationFaults.rules[0].fault.delay_seconds {TOO_LONG}",
    ),
    (
        "a latency fault's delay of 400 digits",
        set_first("latencyFaults.rules", delay_seconds=HUGE),
        f"services.latencyFaults.rules[0].delay_seconds {TOO_LONG}",
    ),
]

SHA256_WORDS = "which must be 64 lowercase hex characters (a SHA-256 digest)"
NOT_ASCII = "\u00e9" * 64
#: Stored digests the services never make: non-ASCII ones made the secret, password and PKCE
#: comparisons a 500 (hmac.compare_digest of str), any other one matches nothing.
DIGESTS: list[tuple[str, Edit2, str]] = [
    (
        "an app's secret digest in other characters (introspection 500 after)",
        set_first("oauthApps.apps", secret_sha256=NOT_ASCII),
        f"services.oauthApps.apps[0].secret_sha256 is '{NOT_ASCII}', {SHA256_WORDS}",
    ),
    (
        "a user's password digest in upper case",
        set_first("users.users", password_sha256="AB" * 32),
        f"services.users.users[0].password_sha256 is '{'AB' * 32}', {SHA256_WORDS}",
    ),
    (
        "a user without its password digest (imported as '', and its export refused)",
        lambda d: first(d, "users.users").pop("password_sha256") and d,
        "services.users.users[0].password_sha256 is missing: it must be 64 lowercase hex",
    ),
    (
        "a user's password digest in other characters (sign-in 500 after)",
        set_first("users.users", password_sha256=NOT_ASCII),
        f"services.users.users[0].password_sha256 is '{NOT_ASCII}', {SHA256_WORDS}",
    ),
    (
        "a refresh token digest of no shape",
        set_first("tokens.refresh", token_sha256="rt_1"),
        f"services.tokens.refresh[0].token_sha256 is 'rt_1', {SHA256_WORDS}",
    ),
    (
        "a code challenge in other characters (token endpoint 500 after)",
        set_first("authorizations.codes", code_challenge=NOT_ASCII[:43]),
        f"services.authorizations.codes[0].code_challenge is '{NOT_ASCII[:43]}', which must be "
        "43 base64url characters (an S256 code challenge)",
    ),
]

SCOPE_WORDS = (
    "must be 'openid', 'profile', 'email', 'offline_access', 'wallet:read' or 'wallet:send'"
)
#: Values the API never makes and the contract forbids: in strict mode the next ordinary GET
#: showing them answered 500 (the emulator's own answer broke the contract).
CONTRACT: list[tuple[str, Edit2, str]] = [
    (
        "an empty failure code of a session (CheckoutFailure.code minLength 1: strict mode's 500)",
        set_first("checkout.sessions", failure={"code": "", "message": "m"}),
        "services.checkout.sessions[0].failure.code must be one of payment_rejected",
    ),
    (
        "a failure code with a space of a payment attempt",
        set_first("payments.attempts", failure={"code": "no way", "message": "m"}),
        "services.payments.attempts[0].failure.code must be one of payment_rejected",
    ),
    (
        "a product image that is no URL (Media pattern; PATCH refuses it)",
        set_first("products.products", media=["x"]),
        "services.products.products[0].media[0] must be an absolute http(s) URL with a host",
    ),
    (
        "an empty withdrawal gateway (Gateway enum)",
        set_first("payouts.withdrawals", gateway=""),
        "services.payouts.withdrawals[0].gateway must be 'telebirr', 'mpesa' or 'cbe'",
    ),
    (
        "a payment attempt's gateway outside the enum",
        set_first("payments.attempts", gateway="paypal"),
        "services.payments.attempts[0].gateway must be 'telebirr', 'mpesa' or 'cbe'",
    ),
    (
        "a svc_live_ token of a sandbox organization",
        lambda d: renamed(
            d,
            first(d, "orgs.tokens", environment="sandbox")["token"],
            "svc_live_" + first(d, "orgs.tokens", environment="sandbox")["token"][9:],
        ),
        "which must start with svc_test_ (a token of its environment, sandbox)",
    ),
    (
        "a signing key id its material does not make",
        set_first("signingKeys.keys", kid="0123456789abcdef"),
        "services.signingKeys.keys[0].kid is '0123456789abcdef', which must be ",
    ),
    (
        "an empty signing key id (the JWKS's kid is non-empty)",
        set_first("signingKeys.keys", kid=""),
        "services.signingKeys.keys[0].kid is '', which must be 16 lowercase hex characters",
    ),
    (
        "a blank scope of a grant (a refresh's scope pattern)",
        set_first("tokens.grants", scopes=["openid", " "]),
        f"services.tokens.grants[0].scopes[1] {SCOPE_WORDS}",
    ),
    (
        "an empty scope of an app",
        set_first("oauthApps.apps", scopes=["openid", ""]),
        f"services.oauthApps.apps[0].scopes[1] {SCOPE_WORDS}",
    ),
]

INT64_MAX = 2**63 - 1
PAST_COUNT = f"must be less than or equal to {MAX_COUNT}"
#: Counters set at the largest 64-bit integer: one request later the export held 2^63, which
#: the import refused (every export must import again). The import stops at 2^53 - 1.
COUNTERS: list[tuple[str, Edit2, str]] = [
    (
        "the scheduler's sequence number at 2^63 - 1",
        lambda d: d["scheduler"].update(seq=INT64_MAX) or d,
        f"scheduler.seq {PAST_COUNT}",
    ),
    (
        "the scheduler's sequence number below an entry's (the next checkout takes seq 1 again)",
        lambda d: d["scheduler"].update(seq=0) or d,
        "scheduler.seq is 0, below scheduler.entries[0].seq",
    ),
    (
        "two due webhook attempts of one seq (an attempt out is kept by its seq)",
        lambda d: (
            services(d)["webhookDeliveries"]["due"].append(
                {**services(d)["webhookDeliveries"]["due"][0], "number": 5}
            )
            or d
        ),
        "services.webhookDeliveries.due[1].seq repeats",
    ),
    (
        "the orders' sequence number below an order's",
        lambda d: services(d)["orders"].update(seq=0) or d,
        "services.orders.seq is 0, below services.orders.orders[0].seq",
    ),
    (
        "the due webhook attempts' sequence number below a due attempt's",
        lambda d: services(d)["webhookDeliveries"].update(dueSeq=0) or d,
        "services.webhookDeliveries.dueSeq is 0, below services.webhookDeliveries.due[0].seq",
    ),
    (
        "the orders' sequence number at 2^63 - 1",
        lambda d: services(d)["orders"].update(seq=INT64_MAX) or d,
        f"services.orders.seq {PAST_COUNT}",
    ),
    (
        "the due webhook attempts' sequence number at 2^63 - 1",
        lambda d: services(d)["webhookDeliveries"].update(dueSeq=INT64_MAX) or d,
        f"services.webhookDeliveries.dueSeq {PAST_COUNT}",
    ),
    (
        "a provider step's sequence number at 2^63 - 1",
        lambda d: first(d, "payments.attempts")["steps"][0].update(seq=INT64_MAX) or d,
        f"services.payments.attempts[0].steps[0].seq {PAST_COUNT}",
    ),
]


#: Values only the API's own parsers make: another one imported, then failed where it was
#: used or showed what no request could make.
PARSED: list[tuple[str, Edit2, str]] = [
    (
        "an event type outside the three",
        lambda d: first(d, "events.events").update(type="order.refunded") or d,
        "services.events.events[0].type must be 'order.created', 'order.completed' or",
    ),
    (
        "a delivery's event type outside the three",
        lambda d: first(d, "webhookDeliveries.deliveries").update(event_type="") or d,
        "services.webhookDeliveries.deliveries[0].event_type must be 'order.created'",
    ),
    (
        "an endpoint taking an unknown event type",
        lambda d: first(d, "webhookEndpoints.endpoints").update(event_types=["order.*"]) or d,
        "services.webhookEndpoints.endpoints[0].event_types[0] must be 'order.created'",
    ),
    (
        "a notification fault of no kind",
        lambda d: first(d, "notificationFaults.rules")["fault"].update(kind="") or d,
        "services.notificationFaults.rules[0].fault.kind must be 'late', 'lost', 'duplicate'",
    ),
    (
        "a trigger outcome outside approve, fail and wait",
        lambda d: services(d)["triggers"]["custom"][0].update(outcome="maybe") or d,
        "services.triggers.custom[0].outcome must be 'approve', 'fail' or 'wait'",
    ),
    (
        "a planned decision no provider makes",
        lambda d: first(d, "payments.attempts").update(decide_outcome="\u2603") or d,
        "services.payments.attempts[0].decide_outcome must be one of approve, payment_rejected",
    ),
    (
        "a production push outcome outside the setting's",
        lambda d: services(d)["payments"]["config"].update(push_outcome="later") or d,
        "services.payments.config.push_outcome must be one of approve, payment_rejected",
    ),
    (
        "an empty user handle",
        lambda d: first(d, "users.users").update(handle="") or d,
        "services.users.users[0].handle is '', which must be 2 to 30 characters",
    ),
    (
        "a user handle of 3,000 characters",
        lambda d: first(d, "users.users").update(handle="a" * 3000) or d,
        "services.users.users[0].handle is 'aaaa",
    ),
    (
        "more redirect URLs than the control plane takes",
        lambda d: first(d, "orgs.orgs").update(redirect_urls=["https://shop.test/x"] * 101) or d,
        "services.orgs.orgs[0].redirect_urls must have at most 100 items",
    ),
    (
        "more initiate failures than the control plane takes",
        lambda d: services(d)["payments"]["config"].update(initiate_failures=["x"] * 10_001) or d,
        "services.payments.config.initiate_failures must have at most 10000 items",
    ),
    (
        "a scheduler entry that is not an object",
        lambda d: d["scheduler"].update(entries=["x"]) or d,
        "scheduler.entries[0] must be an object",
    ),
    (
        "the clock's two instants apart",
        lambda d: d["clock"].update(now="2026-01-02T00:00:00.000Z") or d,
        "clock now and exact must be the same instant",
    ),
]


def test_an_export_holding_new_failure_codes_imports_again() -> None:
    """The control plane takes a failure code of the team's own (lowercase words joined by
    _) as the push outcome and a trigger's code; a production push then plans it. The
    import refused all three in the sandbox's own export."""
    sandbox = Sandbox(
        clock_mode="frozen", seed=3, production_push_outcome="payment_blocked_by_bank"
    )
    http = create_app(sandbox).test_client()
    trigger = {
        "phone": "0911000111",
        "outcome": "fail",
        "failureCode": "wallet_frozen_by_bank",
        "decisionDelaySeconds": 60,
    }
    assert http.post("/_sandbox/triggers", json=trigger).status_code == 201
    token = {"Authorization": f"Bearer {token_of(sandbox, 'production')}"}
    push = {
        "amount": 1000,
        "description": "x",
        "gateway": "telebirr",
        "customer": {"email": "b@example.com", "phone": "0911223344"},
    }
    assert http.post("/api/checkout", json=push, headers=token).status_code == 200
    exported = http.get("/_sandbox/state").data
    assert b"payment_blocked_by_bank" in exported and b"wallet_frozen_by_bank" in exported
    imported = http.put("/_sandbox/state", data=exported, content_type="application/json")
    assert imported.status_code == 200, imported.json
    assert http.get("/_sandbox/state").data == exported


def transfer_again(document: dict[str, Any]) -> dict[str, Any]:
    """A second transfer of the first one's sender, app and idempotency key, with its two
    ledger entries (so the ledger's own rules hold): money moved twice for one key."""
    wallets = services(document)["wallets"]
    transfer = wallets["transfers"][0]
    again = {**copy.deepcopy(transfer), "id": "a" * 24, "seq": 10_000}
    entries = [e for e in wallets["entries"] if e["transfer_id"] == transfer["id"]]
    for number, entry in enumerate(entries):
        wallets["entries"].append(
            {**entry, "id": f"{number:024x}", "transfer_id": again["id"], "seq": 10_001 + number}
        )
    wallets["transfers"].append(again)
    wallets["seq"] = 20_000
    return document


def scheduled_attempt(document: dict[str, Any]) -> dict[str, Any]:
    """The payload of the first scheduled webhook attempt of ``document``."""
    entry = next(e for e in document["scheduler"]["entries"] if e["kind"] == "webhook.attempt")
    payload: dict[str, Any] = entry["payload"]
    return payload


REFUSED = SHAPES + KEYS + ATTEMPTS + IDS + FLOATS + DIGESTS + CONTRACT + COUNTERS + PARSED


@pytest.mark.parametrize(("case", "edit", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_value_the_services_would_not_make_is_a_400_naming_it(
    scene: str, case: str, edit: Callable[[dict[str, Any]], dict[str, Any]], message: str
) -> None:
    sandbox = Sandbox(clock_mode="frozen", seed=3, rate_limits=False)
    http = create_app(sandbox).test_client()
    assert (
        http.put("/_sandbox/state", data=scene, content_type="application/json").status_code == 200
    )
    before = http.get("/_sandbox/state").data
    response = http.put("/_sandbox/state", json=edit(json.loads(scene)))
    assert response.status_code == 400, case
    assert message in response.json["error"], response.json  # type: ignore[index]
    assert_unharmed(http, before)


def test_a_stored_digest_of_any_text_matches_nothing_without_a_500() -> None:
    """Whatever text a record holds (an import of a sandbox older than the shape check, a
    service's own bug), the secret, password and PKCE comparisons compare bytes
    (core/digests.py): hmac.compare_digest of two str raised TypeError on a non-ASCII one."""
    sandbox = Sandbox(clock_mode="frozen", seed=3, rate_limits=False)
    http = create_app(sandbox).test_client()
    client = wallet_app(sandbox)
    code = authorize_as(http, client, user_id(sandbox))["code"]
    for record in sandbox.oauth.codes.values():
        record.code_challenge = NOT_ASCII[:43]
    refused = exchange(http, client, code)
    assert (refused.status_code, refused.json["error"]) == (400, "invalid_grant")
    for app in sandbox.oauth_apps.apps.values():
        app.secret_sha256 = NOT_ASCII
    form = {"token": "at_x", "client_id": client.client_id, "client_secret": str(client.secret)}
    assert http.post("/auth/oauth2/introspect", data=form).status_code == 401
    for user in sandbox.users.users.values():
        user.password_sha256 = NOT_ASCII
    assert sandbox.users.check_password("abebe", "abebe-sandbox-pass") is None
