"""The /_sandbox control plane's core routes."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox


def test_info_lists_version_clock_roots_and_seeded_credentials(svc_http: FlaskClient) -> None:
    info = svc_http.get("/_sandbox").json
    assert info is not None
    assert info["clock"] == {"now": "2026-01-01T00:00:00.000Z", "mode": "frozen", "factor": 1.0}
    assert info["roots"]["base_url"] == "http://127.0.0.1:8700/api"
    assert info["roots"]["pay_url"] == "http://127.0.0.1:8700/pay"
    assert info["roots"]["control_url"] == "http://127.0.0.1:8700/_sandbox"
    by_env = {org["environment"]: org for org in info["organizations"]}
    assert set(by_env) == {"sandbox", "production"}
    live = by_env["production"]
    assert (live["kyc"], live["developerMode"]) == ("approved", True)
    assert live["tokens"][0]["token"].startswith("svc_live_")
    assert by_env["sandbox"]["tokens"][0]["token"].startswith("svc_test_")


def test_info_names_the_seed_the_state_draws_from_after_an_import_of_another_seed() -> None:
    """``seed`` is the configured one (a reset goes back to it); ``stateSeed`` is the id
    source's: another seed's export brings its own."""
    other = create_app(Sandbox(seed=7, clock_mode="frozen")).test_client()
    document = other.get("/_sandbox/state").json
    http = create_app(Sandbox(seed=1, clock_mode="frozen")).test_client()
    info = http.get("/_sandbox").json
    assert (info["seed"], info["stateSeed"]) == (1, 1)

    assert http.put("/_sandbox/state", json=document).status_code == 200
    info = http.get("/_sandbox").json
    assert (info["seed"], info["stateSeed"]) == (1, 7)

    info = http.post("/_sandbox/reset", json={}).json
    assert (info["seed"], info["stateSeed"]) == (1, 1)


def test_roots_can_be_overridden() -> None:
    sandbox = Sandbox(
        clock_mode="frozen", public_url="http://localhost:9000", pay_url="https://pay.test/x"
    )
    roots = sandbox.settings.roots()
    assert roots["base_url"] == "http://localhost:9000/api"
    assert roots["pay_url"] == "https://pay.test/x"


def test_create_org_with_token_and_settings(svc_http: FlaskClient) -> None:
    response = svc_http.post(
        "/_sandbox/orgs",
        json={
            "name": "Shop",
            "environment": "production",
            "kyc": "pending",
            "developerMode": False,
        },
    )
    assert response.status_code == 201
    org = response.json
    assert org is not None
    assert (org["environment"], org["kyc"], org["developerMode"]) == (
        "production",
        "pending",
        False,
    )
    assert org["tokens"][0]["token"].startswith("svc_live_")
    token = org["tokens"][0]["token"]
    listed = svc_http.get("/api/products", headers={"Authorization": f"Bearer {token}"})
    assert listed.status_code == 200


def test_patch_org_sets_dashboard_settings(svc_http: FlaskClient) -> None:
    org_id = svc_http.post("/_sandbox/orgs", json={"name": "Shop"}).json["id"]  # type: ignore[index]
    response = svc_http.patch(
        f"/_sandbox/orgs/{org_id}",
        json={
            "developerMode": False,
            "kyc": "rejected",
            "customFeeRate": 0.05,
            "redirectUrls": ["https://shop.example/done"],
        },
    )
    assert response.status_code == 200
    org = response.json
    assert org is not None
    assert org["customFeeRate"] == "0.05"
    assert org["redirectUrls"] == ["https://shop.example/done"]
    assert (org["developerMode"], org["kyc"]) == (False, "rejected")
    cleared = svc_http.patch(f"/_sandbox/orgs/{org_id}", json={"customFeeRate": None}).json
    assert cleared["customFeeRate"] is None  # type: ignore[index]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/_sandbox/orgs", {}, "name"),
        ("/_sandbox/orgs", {"name": "x", "environment": "staging"}, "environment"),
        ("/_sandbox/orgs", {"name": "x", "kyc": "yes"}, "kyc"),
        ("/_sandbox/orgs", {"name": "x", "developerMode": "yes"}, "developerMode"),
        ("/_sandbox/clock/advance", {"duration": "soon"}, "duration"),
        ("/_sandbox/clock/advance", {"duration": -5}, "duration"),
        ("/_sandbox/clock/advance", {"seconds": -5}, "seconds"),
        ("/_sandbox/clock/advance", {"seconds": True}, "seconds must be a valid number"),
        ("/_sandbox/clock/advance", {"seconds": "30"}, "seconds must be a valid number"),
        ("/_sandbox/clock/advance", {"duration": True}, "duration must be a number of seconds"),
        ("/_sandbox/clock/advance", {"duration": [30]}, "duration must be a number of seconds"),
        ("/_sandbox/clock/advance", {}, "send exactly one"),
        ("/_sandbox/clock/set", {"now": "yesterday"}, "now"),
        ("/_sandbox/clock/set", {}, "now"),
    ],
)
def test_bad_control_bodies_answer_400_naming_the_field(
    svc_http: FlaskClient, path: str, body: dict[str, Any], field: str
) -> None:
    before = svc_http.get("/_sandbox/state").json
    response = svc_http.post(path, json=body)
    assert response.status_code == 400
    assert response.json["error"].startswith(field)  # type: ignore[index]
    assert svc_http.get("/_sandbox/state").json == before


@pytest.mark.parametrize(
    ("method", "body", "message"),
    [
        ("POST", {"name": ""}, "name must have at least 1 character"),
        ("PATCH", {"customFeeRate": [1]}, "customFeeRate must be a decimal number"),
        ("PATCH", {"redirectUrls": "x"}, "redirectUrls must be an array"),
    ],
)
def test_a_refusal_names_the_field_in_our_words_not_pydantics(
    svc_http: FlaskClient, method: str, body: dict[str, Any], message: str
) -> None:
    """pydantic's own subjects leaked: ``name String should have at least 1 character``,
    ``customFeeRate Decimal input should be an integer, float, string or Decimal object``."""
    org = svc_http.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
    path = "/_sandbox/orgs" if method == "POST" else f"/_sandbox/orgs/{org}"
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.open(path, method=method, json=body)
    assert response.status_code == 400
    assert response.json == {"error": message, "code": "validation_failed"}
    assert svc_http.get("/_sandbox/state").data == before


@pytest.mark.parametrize("field", ["name", "environment", "developerMode", "kyc", "redirectUrls"])
def test_patch_org_refuses_null_where_it_would_change_nothing(
    svc_http: FlaskClient, field: str
) -> None:
    """It answered 200 and changed nothing (a client clearing redirectUrls believed it had);
    only customFeeRate takes null (back to the platform default)."""
    org_id = svc_http.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.patch(f"/_sandbox/orgs/{org_id}", json={field: None})
    assert response.status_code == 400
    assert response.json == {"error": f"{field} must not be null", "code": "validation_failed"}
    assert svc_http.get("/_sandbox/state").data == before


def test_patch_org_bad_fee_rate_and_unknown_org(svc_http: FlaskClient) -> None:
    org_id = svc_http.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
    bad = svc_http.patch(f"/_sandbox/orgs/{org_id}", json={"customFeeRate": 2})
    assert bad.status_code == 400
    assert bad.json["error"].startswith("customFeeRate")  # type: ignore[index]
    missing = svc_http.patch("/_sandbox/orgs/0123456789abcdef01234567", json={"kyc": "approved"})
    assert missing.status_code == 404


@pytest.mark.parametrize(
    ("sent", "answered"),
    [
        (0.05, "0.05"),
        ("0.05", "0.05"),
        (0.1 + 0.2, "0.30000000000000004"),  # the float the client sent, exactly
        (1e-30, "0.000000000000000000000000000001"),  # no exponent
        ("1.5E-7", "0.00000015"),
        (0, "0"),
        (-0.0, "0.0"),  # the sign of a zero is no rate
        ("-0", "0"),
        (1, "1"),
    ],
)
def test_the_custom_fee_rate_is_answered_as_its_exact_decimal_string(
    svc_http: FlaskClient, sent: object, answered: str
) -> None:
    org_id = svc_http.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
    response = svc_http.patch(f"/_sandbox/orgs/{org_id}", json={"customFeeRate": sent})
    assert response.json["customFeeRate"] == answered  # type: ignore[index]
    assert svc_http.get(f"/_sandbox/orgs/{org_id}").json["customFeeRate"] == answered  # type: ignore[index]
    again = svc_http.patch(f"/_sandbox/orgs/{org_id}", json={"customFeeRate": answered})
    assert again.json["customFeeRate"] == answered  # type: ignore[index]


@pytest.mark.parametrize(
    ("sent", "message"),
    [
        (5e-324, "customFeeRate must have at most 30 decimal places"),
        (1.5e-30, "customFeeRate must have at most 30 decimal places"),
        ("1E-999999999", "customFeeRate must have at most 30 decimal places"),
        (1.01, "customFeeRate must be less than or equal to 1"),
        ("2", "customFeeRate must be less than or equal to 1"),
        (-0.01, "customFeeRate must be greater than or equal to 0"),
        # A rate as a string is a JSON number's text in ASCII digits (core/numbers.py):
        # Decimal() reads each of these as 0.05.
        *(
            (text, "customFeeRate must be a number in ASCII digits such as 0.05 or 5E-2")
            for text in [
                "\u0660.\u0660\u0665",  # Arabic-Indic digits
                "\uff10.\uff10\uff15",  # full-width digits
                "0.0_5",
                " 0.05 ",
                "+0.05",
                ".05",
                "5e-2 ",
            ]
        ),
    ],
)
def test_a_fee_rate_outside_0_to_1_or_finer_than_30_places_is_refused(
    svc_http: FlaskClient, sent: object, message: str
) -> None:
    org_id = svc_http.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.patch(
        f"/_sandbox/orgs/{org_id}", json={"customFeeRate": sent, "kyc": "rejected"}
    )
    assert (response.status_code, response.json["error"]) == (400, message)  # type: ignore[index]
    assert svc_http.get("/_sandbox/state").data == before


@pytest.mark.parametrize(
    ("duration", "expected"),
    [(90, "00:01:30"), ("90s", "00:01:30"), ("30m", "00:30:00"), ("1h30m", "01:30:00")],
)
def test_advance_accepts_seconds_and_duration_strings(
    svc_http: FlaskClient, duration: object, expected: str
) -> None:
    body = svc_http.post("/_sandbox/clock/advance", json={"duration": duration}).json
    assert body["clock"]["now"] == f"2026-01-01T{expected}.000Z"  # type: ignore[index]


def test_clock_set(svc_http: FlaskClient) -> None:
    body = svc_http.post("/_sandbox/clock/set", json={"now": "2026-03-01T12:00:00Z"}).json
    assert body["clock"]["now"] == "2026-03-01T12:00:00.000Z"  # type: ignore[index]
    assert svc_http.get("/_sandbox/clock").json["clock"]["now"] == "2026-03-01T12:00:00.000Z"  # type: ignore[index]


def test_create_and_revoke_token(svc_http: FlaskClient) -> None:
    org_id = svc_http.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
    created = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={"name": "ci"})
    assert created.status_code == 201
    token = created.json["token"]  # type: ignore[index]
    headers = {"Authorization": f"Bearer {token}"}
    assert svc_http.get("/api/products", headers=headers).status_code == 200
    assert svc_http.delete(f"/_sandbox/tokens/{token}", json={}).json["revoked"] is True  # type: ignore[index]
    assert svc_http.get("/api/products", headers=headers).status_code == 401
    assert svc_http.delete("/_sandbox/tokens/svc_test_unknown", json={}).status_code == 404


def test_request_journal_lists_recent_requests_newest_first(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    first = svc_http.get("/api/products", headers=auth)
    svc_http.get("/api/nowhere")
    journal = svc_http.get("/_sandbox/requests?limit=2").json["items"]  # type: ignore[index]
    assert [(e["method"], e["path"], e["status"]) for e in journal] == [
        ("GET", "/api/nowhere", 404),
        ("GET", "/api/products", 200),
    ]
    assert journal[1]["requestId"] == first.headers["X-Request-Id"]
    assert svc_http.get("/_sandbox/requests?limit=0").status_code == 400


def test_the_journal_keeps_what_replays_a_request(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """Query (its raw UTF-8 bytes), Authorization, and a body up to 16 KiB with its media
    type (a form as fields): what `svc-sandbox record` turns into steps."""
    raw_query = "status=paid&note=caf\u00e9".encode().decode("latin-1")  # as a server puts it
    svc_http.get("/api/orders", headers=auth, environ_overrides={"QUERY_STRING": raw_query})
    body = '{"amount": 500, "description": "caf\u00e9"}'
    svc_http.post(
        "/api/checkout",
        data=body.encode(),
        headers={**auth, "Content-Type": "Application/JSON; charset=utf-8"},
    )
    svc_http.post("/api/checkout", data="x" * (16 * 1024 + 1), content_type="application/json")
    svc_http.post("/pay/cs_nothing/pay", data={"phone": "0900000001"})
    form, big, posted, listed = svc_http.get("/_sandbox/requests?limit=4").json["items"]  # type: ignore[index]
    assert listed["query"] == "status=paid&note=caf\u00e9"
    assert listed["authorization"] == auth["Authorization"]
    assert "body" not in listed and "contentType" not in listed
    assert (posted["body"], posted["contentType"]) == (body, "application/json")
    assert "query" not in posted
    assert "body" not in big and "authorization" not in big
    assert form["form"] == {"phone": "0900000001"} and "body" not in form


WIRE_INSTANT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
LOOKS_LIKE_AN_INSTANT = re.compile(r"^\d{4}-\d\d-\d\dT")


def instants(document: Any) -> list[str]:
    """Every string of a JSON document that starts like a timestamp."""
    if isinstance(document, dict):
        return [s for value in document.values() for s in instants(value)]
    if isinstance(document, list):
        return [s for value in document for s in instants(value)]
    return [document] if isinstance(document, str) and LOOKS_LIKE_AN_INSTANT.match(document) else []


def test_every_timestamp_has_one_format(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    """`...000Z` everywhere: organizations and tokens too (they used `+00:00`)."""
    svc_http.post("/_sandbox/clock/advance", json={"seconds": 1.5})
    org = svc_http.post("/_sandbox/orgs", json={"name": "Shop"}).json
    token = svc_http.post(f"/_sandbox/orgs/{org['id']}/tokens", json={}).json  # type: ignore[index]
    answers = [
        svc_http.get("/_sandbox").json,
        svc_http.get("/_sandbox/orgs").json,
        org,
        token,
        svc_http.get("/_sandbox/clock").json,
    ]
    found = instants(answers)
    assert len(found) >= 6
    assert [s for s in found if not WIRE_INSTANT.match(s)] == []
    assert token["createdAt"] == "2026-01-01T00:00:01.500Z"  # type: ignore[index]


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/_sandbox/clock/set", {"now": "2026-01-01T00:00:00.0004Z"}),
        ("/_sandbox/clock/set", {"now": "2026-01-01T00:00:00.000999+00:00"}),
        ("/_sandbox/clock/advance", {"seconds": 0.0004}),
        ("/_sandbox/clock/advance", {"duration": "0.9ms"}),
    ],
)
def test_a_sub_millisecond_move_is_cut_to_the_millisecond(
    svc_http: FlaskClient, svc_sandbox: Sandbox, auth: dict[str, str], route: str, body: Any
) -> None:
    """The clock keeps milliseconds: the time it shows is the time it uses, so setting it to
    a session's expiresAt as shown expires the session (docs/spec-gaps.md)."""
    moved = svc_http.post(route, json=body)
    assert moved.status_code == 200, moved.json
    assert moved.json["clock"]["now"] == "2026-01-01T00:00:00.000Z"
    assert svc_sandbox.now().isoformat() == "2026-01-01T00:00:00+00:00"
    created = svc_http.post(
        "/api/checkout", json={"amount": 1000, "description": "x"}, headers=auth
    ).json
    poll = f"/api/checkout/{created['sessionId']}"
    expires_at = svc_http.get(poll).json["expiresAt"]
    assert expires_at == "2026-01-01T00:30:00.000Z"
    at_expiry = svc_http.post("/_sandbox/clock/set", json={"now": expires_at}).json
    assert [entry["kind"] for entry in at_expiry["ran"]] == ["checkout.expire"]
    assert svc_http.get(poll).json["status"] == "expired"


def _control_routes() -> list[tuple[str, str]]:
    """Every (method, rule) of the control plane but the dashboard's pages."""
    app = create_app(Sandbox(clock_mode="frozen", seed=1))
    return sorted(
        (method, rule.rule)
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/_sandbox") and not rule.endpoint.startswith("dashboard.")
        for method in rule.methods or ()
        if method not in ("HEAD", "OPTIONS")
    )


@pytest.mark.parametrize(("method", "rule"), _control_routes())
def test_a_query_parameter_a_control_route_does_not_read_is_a_400_naming_it(
    svc_http: FlaskClient, method: str, rule: str
) -> None:
    """A misspelt parameter (``?limt=5``, ``?contrct=wallet``) was ignored: the route answered
    its default as if asked. Checked before the route runs, so nothing changes."""
    before = svc_http.get("/_sandbox/state").data
    path = re.sub(r"<[^>]+>", "x" * 24, rule)
    body = None if method == "GET" else {}
    answer = svc_http.open(path + "?limt=5", method=method, json=body)
    assert answer.status_code == 400, answer.data
    assert answer.json == {"error": "limt is not a known field", "code": "validation_failed"}
    assert svc_http.get("/_sandbox/state").data == before


@pytest.mark.parametrize(
    "path",
    [
        "/_sandbox/clock?limit=2",
        "/_sandbox/contract?contract=wallet&format=yaml",
        "/_sandbox/conformance?contract=identity",
        "/_sandbox/scenario?name=flow&limit=10",
        "/_sandbox/requests?method=GET&status=2xx&path=/api&limit=5",
        "/_sandbox/events?type=order.created&orgId=x&sessionId=y",
        "/_sandbox/webhooks/attempts?eventType=order.created&limit=5",
        "/_sandbox/withdrawals?orgId=x&org=x&status=pending&page=1&limit=5",
    ],
)
def test_the_documented_query_parameters_are_read(svc_http: FlaskClient, path: str) -> None:
    assert svc_http.get(path).status_code == 200


LIMIT_RULE = "limit must be an integer between 1 and 1000"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        # an empty name, or one with a space at an end, quoted to be seen
        ("/_sandbox/clock?=1", "'' is not a known field"),
        ("/_sandbox/clock?+limit=1", "' limit' is not a known field"),
        # the attempts list's limit, worded as every other list's (it was pydantic's)
        *[
            (f"/_sandbox/webhooks/attempts?limit={limit}", LIMIT_RULE)
            for limit in ("x", "", "1.5", "0", "1001")
        ],
    ],
)
def test_a_refused_query_is_worded_for_the_reader(
    svc_http: FlaskClient, path: str, message: str
) -> None:
    answer = svc_http.get(path)
    assert answer.status_code == 400
    assert answer.json == {"error": message, "code": "validation_failed"}
