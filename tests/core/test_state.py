"""Export, reset, import: the state round-trips and API responses come back identical."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.identity.keys import rsa_key_from
from svc_sandbox.sandbox import Sandbox
from tests.helpers import create_product


def snapshot_of_api(client: FlaskClient, auth: dict[str, str]) -> list[Any]:
    listing = client.get("/api/products?limit=100", headers=auth).json
    assert listing is not None
    one = [client.get(f"/api/products/{p['_id']}", headers=auth).json for p in listing["items"]]
    return [listing, one, client.get("/_sandbox/orgs").json, client.get("/_sandbox/clock").json]


def test_export_reset_import_gives_back_identical_responses(
    svc_http: FlaskClient, svc_sandbox: Sandbox, auth: dict[str, str]
) -> None:
    create_product(svc_http, auth, title="A", status="published", metadata={"k": "v"})
    svc_sandbox.advance(timedelta(minutes=3))
    create_product(svc_http, auth, title="B", pricingModel="pwyw", price={"minimumAmount": 5})
    svc_http.post("/_sandbox/orgs", json={"name": "Extra", "environment": "production"})
    before = snapshot_of_api(svc_http, auth)
    exported = svc_http.get("/_sandbox/state").json

    assert svc_http.post("/_sandbox/reset", json={}).status_code == 200
    assert svc_http.get("/api/products", headers=auth).json["total"] == 0  # type: ignore[index]
    assert svc_sandbox.now().isoformat() == "2026-01-01T00:00:00+00:00"

    assert svc_http.put("/_sandbox/state", json=exported).status_code == 200
    assert snapshot_of_api(svc_http, auth) == before
    assert svc_http.get("/_sandbox/state").json == exported


def test_import_continues_the_id_sequence(
    svc_http: FlaskClient, svc_sandbox: Sandbox, auth: dict[str, str]
) -> None:
    exported = svc_http.get("/_sandbox/state").json
    first = create_product(svc_http, auth)["product"]["_id"]
    svc_http.put("/_sandbox/state", json=exported)
    assert create_product(svc_http, auth)["product"]["_id"] == first


def test_reset_gives_the_seeded_state_of_a_fresh_sandbox(svc_http: FlaskClient) -> None:
    fresh = svc_http.get("/_sandbox").json
    svc_http.post("/_sandbox/orgs", json={"name": "Extra"})
    svc_http.post("/_sandbox/clock/advance", json={"seconds": 60})
    svc_http.post("/_sandbox/reset", json={})
    assert svc_http.get("/_sandbox").json == fresh


def test_malformed_import_answers_400_and_changes_nothing(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    create_product(svc_http, auth)
    before = svc_http.get("/_sandbox/state").json
    good = dict(before)  # type: ignore[arg-type]
    broken = {**good, "services": {**good["services"], "products": {"seq": 1}}}
    for document in ({"format": 99}, [], broken, {**good, "ids": None}):
        response = svc_http.put("/_sandbox/state", json=document)
        assert response.status_code == 400, document
        assert "error" in response.json  # type: ignore[operator]
    assert svc_http.get("/_sandbox/state").json == before


def test_warm_up_builds_the_signing_key_and_draws_nothing() -> None:
    """``serve`` warms up on a thread once it is ready, at no fixed moment: so warming up must
    not draw an id or change any answer, only do early what the first requests would do."""
    seed = 424242  # a seed no other test uses: its signing key is not built yet
    warmed, cold = Sandbox(clock_mode="frozen", seed=seed), Sandbox(clock_mode="frozen", seed=seed)
    material = warmed.signing_keys.active().material
    before = rsa_key_from.cache_info().hits
    warmed.warm_up()
    rsa_key_from(material)
    assert rsa_key_from.cache_info().hits == before + 1  # built by warm_up, not by this call
    assert warmed.export() == cold.export()
    assert warmed.ids.object_id() == cold.ids.object_id()


def test_each_sandbox_resets_to_the_seeded_state_of_its_own_settings(tmp_path: Any) -> None:
    """Sandboxes built alike share how their seeded state was encoded (a suite builds one per
    test), never the state itself; a setting or a triggers file that differs is seen."""
    first = Sandbox(clock_mode="frozen", seed=31)
    seeded = first.export()
    create_product_in(first)
    assert first.export() != seeded
    first.reset()
    again = Sandbox(clock_mode="frozen", seed=31)
    assert again.export() == first.export() == Sandbox(clock_mode="frozen", seed=31).export()
    # The seeded state a reset decoded is not changed by what is built on it: a second reset
    # after more changes lands on it again.
    create_product_in(first)
    first.reset()
    assert first.export() == seeded

    hooked = Sandbox(clock_mode="frozen", seed=31, webhook_url="http://127.0.0.1:9/hooks")
    hooked.webhook_endpoints.endpoints.clear()
    hooked.reset()
    assert len(hooked.webhook_endpoints.endpoints) == 2  # its own seeded state, not `first`'s

    triggers = tmp_path / "triggers.json"
    for phone in ("0911000444", "0911000555"):
        triggers.write_text(f'{{"triggers": [{{"phone": "{phone}", "outcome": "wait"}}]}}')
        fresh = Sandbox(clock_mode="frozen", seed=31, triggers_file=str(triggers))
        fresh.reset()
        assert fresh.triggers.find("sandbox", "251" + phone[1:])


def create_product_in(sandbox: Sandbox) -> None:
    client = create_app(sandbox).test_client()
    token = sandbox.orgs.tokens_of(sandbox.orgs.all()[0].id)[0].token
    create_product(client, {"Authorization": f"Bearer {token}"})


FLOWING = pytest.mark.parametrize(
    "mode", [{"clock_mode": "real"}, {"clock_mode": "scaled", "clock_factor": 60.0}]
)


@FLOWING
def test_an_import_never_sets_a_flowing_clock_back(mode: dict[str, Any]) -> None:
    """A real or scaled clock keeps its time when the document's is earlier (an integration
    around it reads wall time too), as a reset keeps a real clock's."""
    sandbox = Sandbox(seed=1, **mode)
    exported = sandbox.export()
    sandbox.advance(timedelta(hours=1))
    before = sandbox.now()
    sandbox.restore(exported)
    assert sandbox.now() >= before
    assert sandbox.now() < before + timedelta(hours=1)  # kept, not moved on by the hour


@FLOWING
def test_an_import_moves_a_flowing_clock_on_to_a_later_exported_time(
    mode: dict[str, Any],
) -> None:
    later = Sandbox(seed=1, **mode)
    later.advance(timedelta(days=2))
    exported = later.export()
    sandbox = Sandbox(seed=1, **mode)
    sandbox.restore(exported)
    assert sandbox.now() >= datetime.fromisoformat(exported["clock"]["exact"])


def test_an_import_sets_a_frozen_clock_to_the_exported_time_even_backwards() -> None:
    sandbox = Sandbox(seed=1, clock_mode="frozen")
    exported = sandbox.export()
    sandbox.advance(timedelta(hours=1))
    sandbox.restore(exported)
    assert sandbox.now().isoformat() == exported["clock"]["exact"] == "2026-01-01T00:00:00+00:00"


def test_serve_state_file_keeps_a_real_clock_at_its_time(tmp_path: Path) -> None:
    """``serve --state FILE`` imports as PUT does: a real clock starts at the wall time,
    not at the time of the file (here 1990)."""
    path = tmp_path / "state.json"
    Sandbox(seed=1, clock_mode="frozen", clock_start="1990-01-01T00:00:00Z").export_file(str(path))
    sandbox = Sandbox(seed=1, clock_mode="real")
    before = sandbox.now()
    sandbox.import_file(str(path))
    assert sandbox.now() >= before
    assert json.loads(path.read_text())["clock"]["now"] == "1990-01-01T00:00:00.000Z"
