"""The recorder turns the request journal into a scenario that replays green."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.core.journal import JOURNAL_TEXT_CHARACTERS
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.scenarios.loader import load_file
from svc_sandbox.scenarios.recorder import dump, record
from svc_sandbox.scenarios.results import PASSED
from svc_sandbox.scenarios.runner import Runner
from svc_sandbox.scenarios.targets import InProcessTarget
from svc_sandbox.web import JOURNAL_BODY_BYTES
from tests.commerce.checkout_helpers import BUYER
from tests.helpers import create_product, token_of
from tests.wallet.helpers import owner_key, send_body, token_in_process


def recorded(client: FlaskClient) -> dict[str, Any]:
    answer = client.get("/_sandbox/scenario?name=by%20hand")
    assert answer.status_code == 200
    assert answer.mimetype == "application/yaml"
    document: dict[str, Any] = yaml.safe_load(answer.get_data(as_text=True))
    return document


def test_a_clicked_flow_becomes_steps_that_replay(
    svc_http: FlaskClient, auth: dict[str, str], tmp_path: Path
) -> None:
    svc_http.get("/api/products", headers=auth)  # before the reset: left out
    svc_http.post("/_sandbox/reset", json={})
    product = svc_http.post(
        "/api/products",
        json={"title": "Pen", "pricingModel": "fixed", "price": {"amount": 500}},
        headers=auth,
    ).json
    svc_http.patch(
        f"/api/products/{product['product']['_id']}",  # type: ignore[index]
        json={"status": "published"},
        headers=auth,
    )
    created = svc_http.post(
        "/api/checkout",
        json={"productId": product["product"]["_id"]},
        headers=auth,  # type: ignore[index]
    ).json
    link = "/pay/" + created["checkoutUrl"].rsplit("/", 1)[1]  # type: ignore[index]
    page = svc_http.get(link).get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    form = {"csrf": csrf.group(1), "gateway": "telebirr", "phone": "0911223344", "email": "a@b.co"}
    assert svc_http.post(link, data=form).status_code == 303
    svc_http.get("/_sandbox/clock")  # a control-plane read: left out
    svc_http.post("/_sandbox/clock/advance", json={"duration": "150s"})
    svc_http.get(f"/api/checkout/{created['sessionId']}")  # type: ignore[index]

    document = recorded(svc_http)
    kinds = [
        (s["request"]["method"], s["request"]["path"])
        if "request" in s
        else ("control", s["control"]["action"])
        for s in document["steps"]
    ]
    assert (
        kinds
        == [
            ("POST", "/products"),
            ("PATCH", f"/products/{product['product']['_id']}"),  # type: ignore[index]
            ("POST", "/checkout"),
            ("GET", link[len("/pay") :]),
            ("GET", link[len("/pay") :]),  # the page again, for its CSRF token
            ("POST", link[len("/pay") :]),
            ("control", "advance"),
            ("GET", f"/checkout/{created['sessionId']}"),  # type: ignore[index]
        ]
    )
    assert document["steps"][0]["request"]["auth"] == "token"
    assert document["steps"][5]["request"]["form"]["csrf"] == "${csrf}"
    assert document["steps"][5]["expect"] == {"status": 303}
    assert document["seed"] == 1
    file = tmp_path / "by_hand.yaml"
    file.write_text(yaml.safe_dump(document, sort_keys=False))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


def test_an_idempotency_key_and_the_wallets_second_factor_are_recorded(tmp_path: Path) -> None:
    """A withdrawal sent twice with one Idempotency-Key is one withdrawal (201, then 200), and
    a wallet send needs X-Svc-Key: a recording without them replays as two payouts and a 401."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, rate_limits=False)
    http = create_app(sandbox).test_client()
    http.post("/_sandbox/reset", json={})
    live = {"Authorization": f"Bearer {token_of(sandbox, 'production')}"}
    earned = http.post(
        "/api/checkout",
        headers=live,
        json={"amount": 500000, "description": "Work", "gateway": "telebirr", "customer": BUYER},
    ).json
    http.post(f"/_sandbox/checkout/sessions/{earned['sessionId']}/approve", json={})  # type: ignore[index]
    payout = {"amount": 10000, "gateway": "telebirr", "account": "251911223344"}
    keyed = {**live, "Idempotency-Key": "payout-1"}
    statuses = [http.post("/api/withdrawals", json=payout, headers=keyed).status_code for _ in "12"]
    access = token_in_process(http, sandbox, "abebe")
    sent = http.post(
        "/wallet/send",
        json=send_body(),
        headers={"Authorization": f"Bearer {access}", "X-Svc-Key": owner_key(sandbox)},
    )
    assert statuses + [sent.status_code] == [201, 200, 201]

    document = yaml.safe_load(http.get("/_sandbox/scenario?name=keys").get_data(as_text=True))
    requests = [s["request"] for s in document["steps"] if "request" in s]
    withdrawals = [r for r in requests if r["path"] == "/withdrawals"]
    assert [r["headers"] for r in withdrawals] == [{"Idempotency-Key": "payout-1"}] * 2
    [send] = [r for r in requests if r["path"] == "/send"]
    assert send["headers"]["X-Svc-Key"] == "${token}"  # the seeded token, as its variable
    file = tmp_path / "keys.yaml"
    file.write_text(yaml.safe_dump(document, sort_keys=False))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


def test_values_naming_the_recording_servers_roots_replay_on_another_server(
    tmp_path: Path,
) -> None:
    """A recording made on another port (``exec`` picks a free one) sent a token request's
    ``resource`` as that server's literal URL: the in-process replay answered invalid_target.
    Such values are written with the root's variable."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, rate_limits=False, port=8123)
    http = create_app(sandbox).test_client()
    http.post("/_sandbox/reset", json={})
    access = token_in_process(http, sandbox, "abebe")
    sent = http.post(
        "/wallet/send",
        json=send_body(),
        headers={"Authorization": f"Bearer {access}", "X-Svc-Key": owner_key(sandbox)},
    )
    assert sent.status_code == 201
    document = yaml.safe_load(http.get("/_sandbox/scenario?name=port").get_data(as_text=True))
    [token] = [
        s["request"]
        for s in document["steps"]
        if s.get("request", {}).get("path") == "/oauth2/token"
    ]
    assert token["form"]["resource"] == "${resource_url}"
    assert "8123" not in json.dumps(document["steps"])
    # The tokens sent again as recorded name the issuer and the resource: an in-process replay
    # is made with them (another server without them skips the scenario, saying so).
    assert document["settings"] == {
        "auth_url": "http://127.0.0.1:8123/auth",
        "resource_url": "http://127.0.0.1:8123/wallet",
    }
    file = tmp_path / "port.yaml"
    file.write_text(yaml.safe_dump(document, sort_keys=False))
    result = Runner(InProcessTarget()).run(load_file(file)[0])  # its roots are on port 8700
    assert result.status == PASSED, result.failure


def test_a_refused_reset_starts_nothing_and_refused_writes_replay_refused(
    svc_http: FlaskClient, auth: dict[str, str], tmp_path: Path
) -> None:
    """A reset sent without its JSON type (415) changed nothing: it restarted the recording,
    dropping what came before, and refused writes were recorded as control steps, which the
    replay carried out."""
    svc_http.post("/_sandbox/reset", json={})
    create_product(svc_http, auth, status="published")
    assert svc_http.post("/_sandbox/reset").status_code == 415
    assert svc_http.post("/_sandbox/webhooks/flush", data="x").status_code == 415
    svc_http.get("/api/products", headers=auth)

    steps = recorded(svc_http)["steps"]
    sent = [(s["request"]["method"], s["request"]["path"], s["expect"]["status"]) for s in steps]
    assert sent == [
        ("POST", "/products", 201),
        ("POST", "${control_url}/reset", 415),
        ("POST", "${control_url}/webhooks/flush", 415),
        ("GET", "/products", 200),
    ]
    file = tmp_path / "refused.yaml"
    file.write_text(yaml.safe_dump(recorded(svc_http), sort_keys=False))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


def test_time_between_requests_becomes_advance_steps(svc_http: FlaskClient) -> None:
    from datetime import timedelta

    from svc_sandbox.web import sandbox_of

    svc_http.post("/_sandbox/reset", json={})
    svc_http.get("/api/checkout/000000000000000000000000")
    sandbox_of(svc_http.application).advance(timedelta(minutes=3))
    svc_http.get("/api/checkout/000000000000000000000000")
    steps = recorded(svc_http)["steps"]
    assert steps[1] == {"control": {"action": "advance", "seconds": 180.0}}
    assert steps[2]["expect"] == {"status": 404}


def test_recorded_text_holding_template_syntax_replays_as_that_text(
    svc_http: FlaskClient, auth: dict[str, str], tmp_path: Path
) -> None:
    svc_http.post("/_sandbox/reset", json={})
    title = "Invoice ${order_ref} for ${token}"
    created = svc_http.post(
        "/api/products", json={"title": title, "pricingModel": "free"}, headers=auth
    )
    assert created.status_code == 201
    svc_http.get("/api/products", query_string={"status": "${token}"}, headers=auth)
    svc_http.post("/_sandbox/orgs", json={"name": "Org ${org_id}"})

    document = recorded(svc_http)
    steps = document["steps"]
    assert steps[0]["request"]["json"]["title"] == "Invoice $${order_ref} for $${token}"
    assert steps[1]["request"]["query"] == {"status": "$${token}"}
    assert steps[2]["control"]["name"] == "Org $${org_id}"
    file = tmp_path / "recorded.yaml"
    file.write_text(dump(document))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure
    sent = [s.request for s in result.steps if s.request is not None]
    assert sent[0]["body"]["title"] == title
    assert sent[1]["url"].endswith("/api/products?status=%24%7Btoken%7D")
    assert sent[2]["body"]["name"] == "Org ${org_id}"


def consent_page_flow(http: FlaskClient, *grants: str) -> None:
    """A browser: signed in, opens the consent page, denies (the form carries csrf_token), or
    approves ``grants`` (one ``grant`` field each) when given."""
    http.post("/_sandbox/reset", json={})
    info = http.get("/_sandbox").json
    assert info is not None
    user = next(u for u in info["identity"]["users"] if u["handle"] == "tigist")
    app = next(a for a in info["identity"]["apps"] if a["clientType"] == "confidential")
    assert http.post(f"/_sandbox/users/{user['id']}/session", json={}).status_code == 201
    params = {
        "response_type": "code",
        "client_id": app["clientId"],
        "redirect_uri": app["redirectUris"][0],
        "scope": "openid profile",
        "state": "s1",
        "code_challenge": "a8QrxXYA4zvoe8heBry_f8Qq5QMejNjYTP91dhhwkq8",
        "code_challenge_method": "S256",
    }
    page = http.get("/auth/oauth2/authorize", query_string=params).get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert csrf is not None
    decision = {"decision": "approve", "grant": list(grants)} if grants else {"decision": "deny"}
    form = {"csrf_token": csrf.group(1), **params, **decision}
    assert http.post("/auth/oauth2/authorize", data=form).status_code == 303


def test_an_identity_page_form_replays_with_the_pages_csrf_token(
    svc_http: FlaskClient, tmp_path: Path
) -> None:
    consent_page_flow(svc_http)
    steps = recorded(svc_http)["steps"]
    page, decision = steps[-2]["request"], steps[-1]["request"]
    assert (page["method"], page["path"]) == ("GET", "/oauth2/authorize")
    assert steps[-2]["save"] == {"csrf_token": "form.csrf_token"}
    assert decision["form"]["csrf_token"] == "${csrf_token}"
    file = tmp_path / "consent.yaml"
    file.write_text(dump(recorded(svc_http)))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


def test_a_consent_granting_several_scopes_replays_with_a_fresh_csrf_token(
    svc_http: FlaskClient, tmp_path: Path
) -> None:
    """The consent form sends ``grant`` once per scope: recorded as a list in ``form`` (it
    was the raw body, with the recording's own csrf_token, which the replay had refused)."""
    consent_page_flow(svc_http, "openid", "profile")
    document = recorded(svc_http)
    decision = document["steps"][-1]
    assert decision["request"]["form"]["grant"] == ["openid", "profile"]
    assert decision["request"]["form"]["csrf_token"] == "${csrf_token}"
    file = tmp_path / "consent.yaml"
    file.write_text(dump(document))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure
    sent = [s.request for s in result.steps if s.request is not None][-1]
    assert "grant=openid&grant=profile" in sent["body"]


def test_without_the_page_in_the_journal_the_replay_opens_the_authorize_page(
    svc_http: FlaskClient, svc_sandbox: Sandbox, tmp_path: Path
) -> None:
    consent_page_flow(svc_http)
    entries = [
        e
        for e in reversed(svc_sandbox.journal.recent(100))
        if not (e["method"] == "GET" and e["path"] == "/auth/oauth2/authorize")
    ]
    document = record(entries, svc_sandbox.info(), "no page")
    page, decision = document["steps"][-2], document["steps"][-1]["request"]
    assert page["request"]["path"] == "/oauth2/authorize"
    assert page["request"]["query"]["state"] == "s1"
    assert "decision" not in page["request"]["query"]
    assert page["save"] == {"csrf_token": "form.csrf_token"}
    assert decision["form"]["csrf_token"] == "${csrf_token}"
    file = tmp_path / "no_page.yaml"
    file.write_text(dump(document))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


def test_a_header_the_journal_cut_replays_as_the_characters_kept(
    svc_http: FlaskClient, auth: dict[str, str], tmp_path: Path
) -> None:
    """The journal cuts a header past JOURNAL_TEXT_CHARACTERS with an ellipsis, which a header
    cannot carry: the recording sends the characters kept, and loads."""
    svc_http.post("/_sandbox/reset", json={})
    authorization = "Bearer " + "t" * 5000
    content_type = "text/" + "c" * 5000  # the journal keeps the media type, no parameters
    assert (
        svc_http.get("/api/products", headers={"Authorization": authorization}).status_code == 401
    )
    posted = svc_http.post(
        "/api/products", data=b"x", headers={**auth, "Content-Type": content_type}
    )
    assert posted.status_code == 415

    document = recorded(svc_http)
    first, second = (step["request"] for step in document["steps"])
    assert first["headers"]["Authorization"] == authorization[: JOURNAL_TEXT_CHARACTERS - 1]
    assert second["headers"]["Content-Type"] == content_type[: JOURNAL_TEXT_CHARACTERS - 1]
    file = tmp_path / "cut.yaml"
    file.write_text(dump(document))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


def exported_world() -> tuple[dict[str, Any], str, str]:
    """An export from another emulator holding a product and a token of its own (a token the
    replay's fresh emulator does not have), with them."""
    other = Sandbox(clock_mode="frozen", seed=7)
    http = create_app(other).test_client()
    org = next(o for o in other.info()["organizations"] if o["environment"] == "sandbox")
    token: Any = http.post(f"/_sandbox/orgs/{org['id']}/tokens", json={"name": "own"}).json
    auth = {"Authorization": f"Bearer {token['token']}"}
    product = create_product(http, auth, title="Imported")["product"]["_id"]
    for number in range(5):  # more than the journal keeps of a body (16 KiB)
        create_product(http, auth, title=f"Filler {number}", description="d" * 4000)
    other.advance(timedelta(hours=5))
    return other.export(), str(token["token"]), str(product)


def test_an_import_starts_the_recording_and_replays_as_its_first_step(
    svc_http: FlaskClient, auth: dict[str, str], tmp_path: Path
) -> None:
    """A reset, an import of a document larger than the journal keeps of a body, a read of
    what only the import holds: the recording replays green (it was an advance and a 404)."""
    document, token, product = exported_world()
    assert len(json.dumps(document)) > JOURNAL_BODY_BYTES
    svc_http.get("/api/products", headers=auth)  # before the import: left out
    svc_http.post("/_sandbox/reset", json={})
    assert svc_http.put("/_sandbox/state", json={"format": 1}).status_code == 400  # left out
    assert svc_http.put("/_sandbox/state", json=document).status_code == 200
    headers = {"Authorization": f"Bearer {token}"}
    assert svc_http.get(f"/api/products/{product}", headers=headers).status_code == 200
    svc_http.post("/_sandbox/clock/advance", json={"duration": "1m"})
    assert svc_http.put("/_sandbox/state", json={"format": 1}).status_code == 400  # replayed

    recording = recorded(svc_http)
    first, read = recording["steps"][0], recording["steps"][1]
    assert first == {"control": {"action": "import_state", **document}, "expect": {"status": 200}}
    assert read["request"]["path"] == f"/products/{product}"
    assert read["request"]["headers"] == headers  # the import's own token, as sent
    assert [s["control"] for s in recording["steps"][2:]] == [
        {"action": "advance", "duration": "1m"},
        {"action": "import_state", "format": 1},
    ]
    file = tmp_path / "imported.yaml"
    file.write_text(dump(recording))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure
    assert [step.status for step in result.steps] == [PASSED] * 4


def test_an_import_action_in_a_written_scenario_imports_the_document(tmp_path: Path) -> None:
    document, token, product = exported_world()
    scenario = {
        "name": "from a saved state",
        "steps": [
            {"control": {"action": "import_state", **document}},
            {
                "request": {
                    "method": "GET",
                    "path": f"/products/{product}",
                    "auth": "none",
                    "headers": {"Authorization": f"Bearer {token}"},
                },
                "expect": {"status": 200, "json": {"product": {"title": "Imported"}}},
            },
        ],
    }
    file = tmp_path / "saved.yaml"
    file.write_text(dump(scenario))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


def test_a_requests_latency_is_replayed_by_its_rule_not_as_time_between_requests(
    svc_http: FlaskClient, svc_sandbox: Sandbox, auth: dict[str, str], tmp_path: Path
) -> None:
    """On a frozen sandbox a latency rule moves the clock by its delay before the request is
    handled; the scenario replays the rule, so the delay must not also be an advance step
    (the payment would then come after the session's expiry)."""
    from datetime import timedelta

    from svc_sandbox.core.durations import parse_duration

    svc_http.post("/_sandbox/reset", json={})
    start = svc_sandbox.now()
    created = svc_http.post(
        "/api/checkout", json={"amount": 1000, "description": "x"}, headers=auth
    ).json
    session_id = created["sessionId"]  # type: ignore[index]
    svc_http.post("/_sandbox/clock/advance", json={"seconds": 120})
    rule = {"path": "/api/checkout/*", "delaySeconds": 1500, "count": 1}
    assert svc_http.post("/_sandbox/faults/latency", json=rule).status_code == 201
    assert svc_http.get(f"/api/checkout/{session_id}").json["status"] == "open"  # type: ignore[index]
    svc_sandbox.advance(timedelta(seconds=30))  # time between requests, in no request
    buyer = {"gateway": "telebirr", "phone": "0900000001", "email": "a@b.co"}
    paid = svc_http.post(f"/pay/cs_{session_id}", json=buyer)
    assert (paid.status_code, paid.json["status"]) == (200, "completed")  # type: ignore[index]

    document = recorded(svc_http)
    advances = [
        parse_duration(step["control"].get("seconds", step["control"].get("duration")))
        for step in document["steps"]
        if step.get("control", {}).get("action") == "advance"
    ]
    outside_delays = svc_sandbox.now() - start - timedelta(seconds=1500)
    assert sum(advances, timedelta()) == outside_delays == timedelta(seconds=150)
    journal = svc_http.get("/_sandbox/requests").json["items"]  # type: ignore[index]
    delays = {entry["path"]: entry["delaySeconds"] for entry in journal if "delaySeconds" in entry}
    assert delays == {f"/api/checkout/{session_id}": 1500.0}
    file = tmp_path / "latency.yaml"
    file.write_text(dump(document))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


@pytest.mark.parametrize(
    "line_break", ["\x85", "\u2028", "\u2029"], ids=["NEL", "LINE-SEPARATOR", "PARAGRAPH-SEPARATOR"]
)
def test_unicode_line_breaks_in_recorded_text_load_back_as_recorded(
    svc_http: FlaskClient, auth: dict[str, str], tmp_path: Path, line_break: str
) -> None:
    """YAML folds a raw NEL into a space: the recording writes these breaks as escapes, so
    the file loads back with the very texts recorded (values, keys, a header) and replays them."""
    svc_http.post("/_sandbox/reset", json={})
    title = f"Caf\u00e9{line_break}Menu"
    metadata = {f"note{line_break}key": f"line1{line_break}line2{line_break}"}
    body = {"title": title, "pricingModel": "free", "metadata": metadata}
    assert svc_http.post("/api/products", json=body, headers=auth).status_code == 201
    if line_break == "\x85":  # a header carries Latin-1: the byte 0x85 is U+0085
        authorization = f"Bearer not{line_break}known"
        headers = {"Authorization": authorization}
        assert svc_http.get("/api/products", headers=headers).status_code == 401

    document = recorded(svc_http)
    file = tmp_path / "breaks.yaml"
    file.write_text(dump(document), "utf-8")
    (scenario,) = load_file(file)
    assert scenario.steps == document["steps"]
    assert scenario.steps[0]["request"]["json"] == body
    if line_break == "\x85":
        assert scenario.steps[1]["request"]["headers"] == {"Authorization": authorization}
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == PASSED, result.failure
    assert result.steps[0].request is not None
    assert result.steps[0].request["body"] == body


PRODUCT = {"title": "Injera \u12a5\u1295\u1300\u122b", "pricingModel": "free"}
FORM = "application/x-www-form-urlencoded"


@pytest.mark.parametrize(
    ("method", "path", "body", "content_type", "status", "written"),
    [
        (
            "POST",
            "/api/products",
            b'{"title":"A","title":"B","pricingModel":"free"}',
            "application/json",
            400,
            {"raw": '{"title":"A","title":"B","pricingModel":"free"}'},
        ),
        ("GET", "/api/products?status=draft&status=published", None, None, 400, {}),
        ("GET", "/api/products?status=%FF", None, None, 400, {"path": "/products?status=%FF"}),
        (
            "POST",
            "/api/products",
            json.dumps(PRODUCT, ensure_ascii=False).encode("utf-16"),
            "application/json",
            201,
            {"raw_base64": "//57"},
        ),
        (
            "POST",
            "/auth/oauth2/token",
            b"grant_type=client_credentials&scope=\xff",
            FORM,
            400,
            {"raw_base64": "Z3JhbnRfdHlwZT1jbGllbnRfY3JlZGVudGlhbHMmc2NvcGU9/w=="},
        ),
        (
            "POST",
            "/api/products",
            b'{"title":"A\\u0000","pricingModel":"free"}',
            "application/json",
            400,
            {"raw": '{"title":"A\\u0000"'},
        ),
        (
            "POST",
            "/api/products",
            b'{"title":"A\\ud800","pricingModel":"free"}',
            "application/json",
            400,
            {"raw": '{"title":"A\\ud800"'},
        ),
        (
            "POST",
            "/api/products",
            b'{"title":"A","pricingModel":"free","x":' + b"[" * 70 + b"]" * 70 + b"}",
            "application/json",
            400,
            {"raw": '{"title":"A","pricingModel":"free","x":[[['},
        ),
    ],
    ids=[
        "json-key-twice",
        "query-parameter-twice",
        "query-escapes-not-utf-8",
        "utf-16-json",
        "form-not-utf-8",
        "json-nul",
        "json-lone-surrogate",
        "json-too-deep",
    ],
)
def test_a_request_a_mapping_cannot_hold_is_recorded_as_sent(
    svc_http: FlaskClient,
    auth: dict[str, str],
    tmp_path: Path,
    method: str,
    path: str,
    body: bytes | None,
    content_type: str | None,
    status: int,
    written: dict[str, str],
) -> None:
    """A key or parameter sent twice, a body that is not UTF-8: recorded so that the replay
    sends them again (``raw``, a ``query`` list, ``raw_base64``) and gets the same status."""
    svc_http.post("/_sandbox/reset", json={})
    headers = dict(auth) if path.startswith("/api/") else {}
    if content_type:
        headers["Content-Type"] = content_type
    live = svc_http.open(path, method=method, data=body, headers=headers)
    assert live.status_code == status, live.get_data(as_text=True)

    document = recorded(svc_http)
    (step,) = (s for s in document["steps"] if "request" in s)
    request = step["request"]
    assert step["expect"] == {"status": status}
    for field, value in written.items():
        assert request[field].startswith(value)
    if "status=draft" in path:
        assert request["query"] == {"status": ["draft", "published"]}
    if content_type:
        assert request["headers"]["Content-Type"] == content_type
    file = tmp_path / "as_sent.yaml"
    file.write_text(dump(document), "utf-8")
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure
    sent = [s.request for s in result.steps if s.request is not None][-1]
    assert sent["url"].endswith(path[path.index("/", 1) :])


@pytest.mark.parametrize(
    ("body", "content_type", "status", "written"),
    [
        (b'{"duration":"30m","duration":"1h"}', "application/json", 400, "raw"),
        (b"[]", "application/json", 400, "json"),
        (b"duration=30m", FORM, 415, "form"),
        (b'{"duration":"30m"}', "text/plain", 415, "raw"),
        ('{"duration":"30m"}'.encode("utf-16"), "application/json", 200, "raw_base64"),
    ],
    ids=["key-twice", "not-an-object", "form", "not-json", "not-utf-8"],
)
def test_a_control_request_a_control_step_cannot_send_is_recorded_as_sent(
    svc_http: FlaskClient,
    tmp_path: Path,
    body: bytes,
    content_type: str,
    status: int,
    written: str,
) -> None:
    """A control step sends a JSON object: another body goes to ``${control_url}`` as it came."""
    svc_http.post("/_sandbox/reset", json={})
    answer = svc_http.post(
        "/_sandbox/clock/advance", data=body, headers={"Content-Type": content_type}
    )
    assert answer.status_code == status, answer.get_data(as_text=True)

    document = recorded(svc_http)
    (step,) = document["steps"]
    assert step["request"]["root"] == "url"
    assert step["request"]["path"] == "${control_url}/clock/advance"
    assert written in step["request"]
    assert step["expect"] == {"status": status}
    file = tmp_path / "control.yaml"
    file.write_text(dump(document), "utf-8")
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


def test_a_control_write_with_a_query_replays_with_it(
    svc_http: FlaskClient, tmp_path: Path
) -> None:
    """A trigger removed from production (``?environment=production``) was recorded without
    the query and replayed against the sandbox trigger; a write refused for a parameter it
    does not read (``?dry=1``) was recorded as a control step that carried it out."""
    svc_http.post("/_sandbox/reset", json={})
    production = {"phone": "0911000111", "outcome": "approve", "environment": "production"}
    assert svc_http.post("/_sandbox/triggers", json=production).status_code == 201
    removed = svc_http.delete("/_sandbox/triggers/251911000111?environment=production", json={})
    assert removed.status_code == 200, removed.json
    refused = svc_http.post("/_sandbox/clock/advance?dry=1", json={"duration": "10m"})
    assert refused.status_code == 400
    document = recorded(svc_http)
    remove, advance = document["steps"][-2:]
    assert remove["control"]["environment"] == "production"
    assert advance["request"]["path"] == "${control_url}/clock/advance"
    assert advance["request"]["query"] == {"dry": "1"}
    file = tmp_path / "query.yaml"
    file.write_text(dump(document))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure
