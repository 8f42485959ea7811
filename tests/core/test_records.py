"""core/records.py: an export copies the records it reads and leaves the live ones as they
were (reading a plain record's ``__dict__`` makes CPython build a dict that stays on it)."""

from __future__ import annotations

import gc

from flask.testing import FlaskClient

from tests.commerce.checkout_helpers import published, push_checkout

SESSIONS = 40


def live_dicts() -> int:
    gc.collect()
    return sum(1 for found in gc.get_objects() if type(found) is dict)


def test_exports_leave_no_dict_behind_on_the_records_they_copy(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    assert svc_http.get("/_sandbox/state").status_code == 200  # the copier's caches, once
    product = published(svc_http, auth, title="Book")
    for _ in range(SESSIONS):  # each: a session, a payment attempt and its provider steps
        push_checkout(svc_http, auth, product_id=product["_id"])
    before = live_dicts()
    for _ in range(3):
        assert svc_http.get("/_sandbox/state").status_code == 200
    grown = live_dicts() - before
    assert grown < SESSIONS // 4, f"{grown} more dicts after three exports"


def test_an_export_is_a_copy_the_live_records_do_not_reach(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product = published(svc_http, auth, title="Book")
    session = push_checkout(svc_http, auth, product_id=product["_id"])
    before = svc_http.get("/_sandbox/state").get_json()
    approve = f"/_sandbox/checkout/sessions/{session['sessionId']}/approve"
    assert svc_http.post(approve, json={}).status_code == 200
    after = svc_http.get("/_sandbox/state").get_json()
    assert before != after
    assert svc_http.put("/_sandbox/state", json=before).status_code == 200
    assert svc_http.get("/_sandbox/state").get_json() == before
