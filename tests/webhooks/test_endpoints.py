"""Webhook endpoints through the control plane, and the ones `serve --webhook-url` sets."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.webhooks.conftest import SECRET, add_endpoint

URL = "http://127.0.0.1:9/hooks"


def test_create_read_update_delete(svc_http: FlaskClient) -> None:
    created = add_endpoint(svc_http, URL, eventTypes=["order.completed"], description="shop")
    assert created["id"].startswith("we_")
    assert (created["url"], created["secret"], created["enabled"]) == (URL, SECRET, True)
    assert created["eventTypes"] == ["order.completed"]
    assert svc_http.get(f"/_sandbox/webhooks/endpoints/{created['id']}").json == created

    patched = svc_http.patch(
        f"/_sandbox/webhooks/endpoints/{created['id']}",
        json={"enabled": False, "eventTypes": [], "url": "https://shop.example/hooks"},
    )
    assert patched.status_code == 200
    assert patched.json is not None
    assert (patched.json["enabled"], patched.json["eventTypes"]) == (False, [])
    assert patched.json["url"] == "https://shop.example/hooks"

    listed = svc_http.get(
        "/_sandbox/webhooks/endpoints", query_string={"orgId": created["organizationId"]}
    )
    assert [e["id"] for e in listed.json["items"]] == [created["id"]]  # type: ignore[index]

    assert (
        svc_http.delete(f"/_sandbox/webhooks/endpoints/{created['id']}", json={}).status_code == 200
    )
    assert svc_http.get(f"/_sandbox/webhooks/endpoints/{created['id']}").status_code == 404


def test_default_organization_is_the_sandbox_one(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    created = add_endpoint(svc_http, URL)
    org = svc_sandbox.orgs.get(created["organizationId"])
    assert org.environment.value == "sandbox"
    assert created["eventTypes"] == []


def test_a_secret_is_generated_when_none_is_given(svc_http: FlaskClient) -> None:
    response = svc_http.post("/_sandbox/webhooks/endpoints", json={"url": URL})
    assert response.status_code == 201
    secret = response.json["secret"]  # type: ignore[index]
    assert secret.startswith("whsec_") and len(secret) > 20
    rotated = svc_http.post(
        f"/_sandbox/webhooks/endpoints/{response.json['id']}/rotate-secret",  # type: ignore[index]
        json={},
    )
    assert rotated.json["secret"].startswith("whsec_")  # type: ignore[index]
    assert rotated.json["secret"] != secret  # type: ignore[index]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://example.com/hooks"}, "url"),
        ({"url": "javascript:alert(1)"}, "url"),
        ({"url": "example.com/hooks"}, "url"),
        ({"url": "http://"}, "url"),
        ({"url": 5}, "url"),
        ({}, "url"),
        ({"url": URL, "secret": ""}, "secret"),
        ({"url": URL, "secret": "   "}, "secret"),
        ({"url": URL, "eventTypes": ["order.refunded"]}, "eventTypes[0]"),
        ({"url": URL, "eventTypes": ["order.created", "nope"]}, "eventTypes[1]"),
        ({"url": URL, "eventTypes": "order.created"}, "eventTypes"),
        ({"url": URL, "enabled": "yes"}, "enabled"),
        ({"url": URL, "color": "red"}, "color"),
    ],
)
def test_bad_endpoints_answer_400_naming_the_field(
    svc_http: FlaskClient, body: dict[str, Any], field: str
) -> None:
    response = svc_http.post("/_sandbox/webhooks/endpoints", json=body)
    assert response.status_code == 400
    assert response.json is not None
    assert response.json["error"].startswith(field + " ")
    assert svc_http.get("/_sandbox/webhooks/endpoints").json == {"items": []}


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"url": "mailto:a@b.c"}, "url must be an absolute http(s) URL with a host"),
        ({"secret": ""}, "secret must not be empty"),
        ({"eventTypes": ["order.paid"]}, "eventTypes[0] must be one of"),
        # null is not "leave it": create refuses it, and so does an update
        ({"url": None}, "url must not be null"),
        ({"secret": None}, "secret must not be null"),
        ({"eventTypes": None}, "eventTypes must not be null"),
        ({"enabled": None}, "enabled must not be null"),
    ],
)
def test_bad_updates_answer_400_and_change_nothing(
    svc_http: FlaskClient, body: dict[str, Any], error: str
) -> None:
    created = add_endpoint(svc_http, URL)
    path = f"/_sandbox/webhooks/endpoints/{created['id']}"
    before = svc_http.get("/_sandbox/state").json
    response = svc_http.patch(path, json={**body, "description": "changed"})
    assert response.status_code == 400
    assert response.json["error"].startswith(error)  # type: ignore[index]
    assert svc_http.get(path).json == created
    assert svc_http.get("/_sandbox/state").json == before


def test_a_null_description_clears_it(svc_http: FlaskClient) -> None:
    created = add_endpoint(svc_http, URL, description="shop")
    path = f"/_sandbox/webhooks/endpoints/{created['id']}"
    patched = svc_http.patch(path, json={"description": None})
    assert patched.status_code == 200
    assert patched.json == {**created, "description": ""}


def test_rotate_secret_takes_no_fields(svc_http: FlaskClient) -> None:
    created = add_endpoint(svc_http, URL)
    path = f"/_sandbox/webhooks/endpoints/{created['id']}"
    refused = svc_http.post(f"{path}/rotate-secret", json={"secret": "mine"})
    assert (refused.status_code, refused.json) == (
        400,
        {"error": "secret is not a known field", "code": "validation_failed"},
    )
    assert svc_http.get(path).json == created
    rotated = svc_http.post(f"{path}/rotate-secret", content_type="application/json")  # empty body
    assert rotated.status_code == 200
    assert rotated.json["secret"] not in (created["secret"], "mine")  # type: ignore[index]


def test_unknown_organization_or_endpoint_is_404(svc_http: FlaskClient) -> None:
    response = svc_http.post("/_sandbox/webhooks/endpoints", json={"url": URL, "orgId": "nope"})
    assert response.status_code == 404
    assert svc_http.patch("/_sandbox/webhooks/endpoints/we_x", json={}).status_code == 404
    assert svc_http.delete("/_sandbox/webhooks/endpoints/we_x", json={}).status_code == 404


def test_webhook_url_setting_gives_each_default_organization_an_endpoint() -> None:
    sandbox = Sandbox(clock_mode="frozen", port=0, webhook_url=URL, webhook_secret="whsec_mine")
    info = create_app(sandbox).test_client().get("/_sandbox").json
    assert info is not None
    assert (info["webhooks"]["url"], info["webhooks"]["secret"]) == (URL, "whsec_mine")
    for org in info["organizations"]:
        [endpoint] = org["webhookEndpoints"]
        assert (endpoint["url"], endpoint["secret"]) == (URL, "whsec_mine")


def test_webhook_url_without_secret_generates_one_shown_by_info_and_kept_by_reset() -> None:
    sandbox = Sandbox(clock_mode="frozen", port=0, webhook_url=URL)
    client = create_app(sandbox).test_client()
    info = client.get("/_sandbox").json
    assert info is not None
    secret = info["webhooks"]["secret"]
    assert secret.startswith("whsec_")
    assert {o["webhookEndpoints"][0]["secret"] for o in info["organizations"]} == {secret}
    after = client.post("/_sandbox/reset", json={}).json
    assert after is not None
    assert after["webhooks"]["secret"] == secret
    again = Sandbox(clock_mode="frozen", port=0, webhook_url=URL).info()["webhooks"]
    assert (again["url"], again["secret"]) == (URL, secret)


def test_without_webhook_url_info_shows_none(svc_sandbox: Sandbox) -> None:
    assert svc_sandbox.info()["webhooks"] == {
        "url": None,
        "secret": None,
        "backlog": {
            "pendingDeliveries": 0,
            "attemptsDue": 0,
            "attemptsSending": 0,
            "oldestDueAt": None,
            "lagSeconds": 0.0,
        },
    }


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"webhook_url": "ftp://x"}, "webhook_url"),
        ({"webhook_secret": ""}, "webhook_secret"),
        ({"webhook_retries": "1m,soon"}, "webhook_retries"),
        ({"webhook_timeout_seconds": 0}, "webhook_timeout_seconds"),
        ({"webhook_senders": 0}, "webhook_senders"),
        ({"webhook_senders": 65}, "webhook_senders"),
    ],
)
def test_bad_webhook_settings_are_refused(settings: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Sandbox(clock_mode="frozen", port=0, **settings)


def test_webhook_senders_default_to_8_and_read_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from svc_sandbox.settings import Settings

    monkeypatch.delenv("SVC_SANDBOX_WEBHOOK_SENDERS", raising=False)
    assert Settings.load().webhook_senders == 8
    monkeypatch.setenv("SVC_SANDBOX_WEBHOOK_SENDERS", "1")
    assert Settings.load().webhook_senders == 1


def test_serve_flags_set_the_webhook_settings() -> None:
    from svc_sandbox.cli import banner, build_parser, settings_from_args
    from svc_sandbox.core.clock import ClockMode

    argv = ["serve", "--webhook-url", URL, "--webhook-secret", "whsec_cli"]
    argv += ["--webhook-timeout-seconds", "2.5", "--webhook-retries", "10s,1m"]
    argv += ["--webhook-senders", "3"]
    settings = settings_from_args(build_parser().parse_args(argv))
    assert settings.webhook_senders == 3
    assert (settings.webhook_url, settings.webhook_secret) == (URL, "whsec_cli")
    assert settings.webhook_timeout_seconds == 2.5
    assert [d.total_seconds() for d in settings.webhook_retry_delays] == [10, 60]
    text = banner(Sandbox(settings.model_copy(update={"clock_mode": ClockMode.FROZEN})).info())
    assert f"Webhooks: {URL}  secret: whsec_cli" in text
