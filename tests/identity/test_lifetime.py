"""When an identity record is live (identity/lifetime.py), on the sandbox clock:

* every check of an access token (introspection, userinfo, the wallet; JWT and opaque) agrees
  at the whole-second ``exp`` the token carries, even when it was issued at x.5 s;
* setting the clock back never revives a code, token or sign-in session that has ended,
  whatever the retention setting, after an export and import too;
* a record issued after the current sandbox time (the clock was set back) is not live yet,
  for every check alike, and an ID token's ``auth_time`` is never after its ``iat``."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.helpers import token_of
from tests.identity.helpers import (
    AUTH,
    Client,
    authorize_as,
    basic,
    decode_jwt,
    exchange,
    tokens_for,
    user_id,
    userinfo,
    wallet_app,
)
from tests.identity.test_authorize import hidden_fields, signed_in
from tests.identity.test_prompt import CONSENT, PASSWORD, SIGN_IN, authorize, remembered
from tests.identity.test_token import refresh

START = datetime(2026, 1, 1, tzinfo=UTC)
HALF_PAST = START + timedelta(milliseconds=500)
MS = timedelta(milliseconds=1)


def introspection(http: FlaskClient, client: Client, token: str) -> dict[str, Any]:
    answer = http.post(f"{AUTH}/oauth2/introspect", data={"token": token}, headers=basic(client))
    assert answer.status_code == 200, answer.json
    found: dict[str, Any] = answer.json  # type: ignore[assignment]
    return found


def by_introspection(http: FlaskClient, sandbox: Sandbox, client: Client, token: str) -> bool:
    answer = introspection(http, client, token)
    if answer["active"]:
        # RFC 7662 "active": never for a token whose exp is not in the future.
        assert answer["exp"] > sandbox.now().timestamp()
    return bool(answer["active"])


def by_userinfo(http: FlaskClient, sandbox: Sandbox, client: Client, token: str) -> bool:
    answer = userinfo(http, token)
    assert answer.status_code in (200, 401), answer.json
    return answer.status_code == 200


def by_wallet(http: FlaskClient, sandbox: Sandbox, client: Client, token: str) -> bool:
    key = token_of(sandbox, "sandbox")
    answer = http.get("/wallet", headers={"Authorization": f"Bearer {token}", "X-Svc-Key": key})
    assert answer.status_code in (200, 401), answer.json
    return answer.status_code == 200


Check = Callable[[FlaskClient, Sandbox, Client, str], bool]
#: Every place an access token is checked, with the token form it takes (JWT: resource given).
CHECKS: list[tuple[str, bool, Check]] = [
    ("introspection", True, by_introspection),
    ("userinfo", True, by_userinfo),
    ("wallet", True, by_wallet),
    ("introspection", False, by_introspection),
    ("userinfo", False, by_userinfo),
]
CHECK_IDS = [f"{name}-{'jwt' if jwt else 'opaque'}" for name, jwt, _ in CHECKS]


def at(sandbox: Sandbox, epoch_seconds: float) -> None:
    sandbox.set_time(datetime.fromtimestamp(epoch_seconds, UTC))


# --- #4: one expiry rule, the exp the token carries ------------------------------------------


@pytest.mark.parametrize(("name", "jwt", "check"), CHECKS, ids=CHECK_IDS)
def test_an_access_token_is_live_strictly_before_the_exp_it_carries(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    name: str,
    jwt: bool,
    check: Check,
) -> None:
    svc_sandbox.set_time(HALF_PAST)
    token = tokens_for(http, svc_sandbox, confidential, resource=jwt)["access_token"]
    exp = introspection(http, confidential, token)["exp"]
    assert exp == int((HALF_PAST + timedelta(hours=1)).timestamp())  # whole seconds, cut
    if jwt:
        assert decode_jwt(http, token).claims["exp"] == exp
    at(svc_sandbox, exp - 0.001)
    assert check(http, svc_sandbox, confidential, token)
    at(svc_sandbox, exp)  # 0.5 s before issue + 1 h: the exp shown is what counts
    assert not check(http, svc_sandbox, confidential, token)


def test_a_refresh_token_is_live_strictly_before_the_exp_introspection_shows(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    svc_sandbox.set_time(HALF_PAST)
    value = tokens_for(http, svc_sandbox, confidential)["refresh_token"]
    exp = introspection(http, confidential, value)["exp"]
    assert exp == int((HALF_PAST + timedelta(days=30)).timestamp())
    at(svc_sandbox, exp - 0.001)
    assert by_introspection(http, svc_sandbox, confidential, value)
    at(svc_sandbox, exp)
    assert not by_introspection(http, svc_sandbox, confidential, value)
    answer = refresh(http, confidential, value)
    assert answer.status_code == 400
    assert answer.json["error_description"].startswith("refresh_token expired")  # type: ignore[index]


# --- #5: a set back never revives what ended --------------------------------------------------


@pytest.mark.parametrize("kept_hours", [24, 0])
@pytest.mark.parametrize(("name", "jwt", "check"), CHECKS, ids=CHECK_IDS)
def test_an_expired_access_token_stays_expired_after_a_set_back(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    name: str,
    jwt: bool,
    check: Check,
    kept_hours: int,
) -> None:
    svc_sandbox.settings.identity_expired_kept_hours = kept_hours
    token = tokens_for(http, svc_sandbox, confidential, resource=jwt)["access_token"]
    assert check(http, svc_sandbox, confidential, token)
    svc_sandbox.advance(timedelta(hours=1))
    svc_sandbox.set_time(START + timedelta(minutes=30))
    assert not check(http, svc_sandbox, confidential, token)


@pytest.mark.parametrize("kept_hours", [24, 0])
def test_an_expired_code_stays_expired_after_a_set_back(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, kept_hours: int
) -> None:
    svc_sandbox.settings.identity_expired_kept_hours = kept_hours
    code = authorize_as(http, confidential, user_id(svc_sandbox))["code"]
    svc_sandbox.advance(timedelta(minutes=11))
    svc_sandbox.set_time(START + timedelta(minutes=5))
    answer = exchange(http, confidential, code)
    assert answer.status_code == 400
    assert answer.json["error"] == "invalid_grant"  # type: ignore[index]
    if kept_hours:
        assert answer.json["error_description"] == "code expired (codes live 10 minutes)"  # type: ignore[index]


@pytest.mark.parametrize("kept_hours", [24, 0])
def test_an_expired_refresh_token_stays_expired_after_a_set_back(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, kept_hours: int
) -> None:
    svc_sandbox.settings.identity_expired_kept_hours = kept_hours
    value = tokens_for(http, svc_sandbox, confidential)["refresh_token"]
    svc_sandbox.advance(timedelta(days=30))
    svc_sandbox.set_time(START + timedelta(days=29))
    assert not by_introspection(http, svc_sandbox, confidential, value)
    answer = refresh(http, confidential, value)
    assert answer.status_code == 400 and answer.json["error"] == "invalid_grant"  # type: ignore[index]


@pytest.mark.parametrize("kept_hours", [24, 0])
def test_an_expired_sign_in_session_stays_expired_after_a_set_back(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, kept_hours: int
) -> None:
    svc_sandbox.settings.identity_expired_kept_hours = kept_hours
    remembered(http, svc_sandbox, confidential)
    signed_in(http, svc_sandbox)
    svc_sandbox.advance(timedelta(hours=12))
    svc_sandbox.set_time(START + timedelta(hours=11))
    page = authorize(http, confidential)
    assert page.status_code == 200 and SIGN_IN in page.text


def test_a_token_that_ended_while_the_clock_flowed_stays_ended_after_a_set_back() -> None:
    """A scaled clock passes the expiry with no request in between; the set back still
    finds the token ended (the sandbox prunes before it moves the clock back)."""
    sandbox = Sandbox(clock_mode="scaled", clock_factor=1000.0, rate_limits=False)
    try:
        http = create_app(sandbox).test_client()
        client = wallet_app(sandbox)
        token = tokens_for(http, sandbox, client)["access_token"]
        issued = datetime.fromtimestamp(introspection(http, client, token)["iat"], UTC)
        sandbox.set_time(issued + timedelta(hours=1) - timedelta(seconds=1))
        time.sleep(0.02)  # 20 s of sandbox time flow by
        assert sandbox.now() > issued + timedelta(hours=1)
        sandbox.set_time(issued + timedelta(minutes=30))
        assert not by_wallet(http, sandbox, client, token)
        assert not by_introspection(http, sandbox, client, token)
    finally:
        sandbox.stop()


def test_an_export_keeps_what_ended_ended(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    token = tokens_for(http, svc_sandbox, confidential)["access_token"]
    svc_sandbox.advance(timedelta(hours=1))
    svc_sandbox.restore(svc_sandbox.export())
    svc_sandbox.set_time(START + timedelta(minutes=30))
    assert not by_wallet(http, svc_sandbox, confidential, token)
    assert not by_introspection(http, svc_sandbox, confidential, token)


def test_records_made_after_a_set_back_live_their_whole_lifetime(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """What ended stays ended; what is new after a set back is not born ended."""
    svc_sandbox.advance(timedelta(days=40))
    svc_sandbox.set_time(START)
    tokens = tokens_for(http, svc_sandbox, confidential)
    svc_sandbox.advance(timedelta(minutes=59))
    assert by_wallet(http, svc_sandbox, confidential, tokens["access_token"])
    assert by_introspection(http, svc_sandbox, confidential, tokens["access_token"])
    assert refresh(http, confidential, tokens["refresh_token"]).status_code == 200


# --- #5: records issued after the current sandbox time ---------------------------------------


@pytest.mark.parametrize(("name", "jwt", "check"), CHECKS, ids=CHECK_IDS)
def test_an_access_token_from_the_future_is_not_live_yet_for_every_check(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    name: str,
    jwt: bool,
    check: Check,
) -> None:
    svc_sandbox.advance(timedelta(hours=1))
    token = tokens_for(http, svc_sandbox, confidential, resource=jwt)["access_token"]
    svc_sandbox.set_time(START)
    assert not check(http, svc_sandbox, confidential, token)
    svc_sandbox.set_time(START + timedelta(hours=1))  # its iat again: live
    assert check(http, svc_sandbox, confidential, token)


def test_a_refresh_token_or_code_from_the_future_is_refused(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    svc_sandbox.advance(timedelta(hours=1))
    value = tokens_for(http, svc_sandbox, confidential)["refresh_token"]
    code = authorize_as(http, confidential, user_id(svc_sandbox))["code"]
    svc_sandbox.set_time(START)
    assert not by_introspection(http, svc_sandbox, confidential, value)
    for answer in (refresh(http, confidential, value), exchange(http, confidential, code)):
        assert answer.status_code == 400
        assert answer.json["error"] == "invalid_grant"  # type: ignore[index]
        assert "after the current sandbox time" in answer.json["error_description"]  # type: ignore[index]
    svc_sandbox.set_time(START + timedelta(hours=1))  # nothing was used up by the refusals
    assert exchange(http, confidential, code).status_code == 200
    assert refresh(http, confidential, value).status_code == 200


@pytest.mark.parametrize("prompt", [None, "none"])
def test_a_sign_in_from_the_future_signs_in_again_so_auth_time_is_never_after_iat(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, prompt: str | None
) -> None:
    remembered(http, svc_sandbox, confidential)
    svc_sandbox.advance(timedelta(hours=1))
    signed_in(http, svc_sandbox)
    svc_sandbox.set_time(START)
    page = authorize(http, confidential, max_age="60", prompt=prompt)
    if prompt == "none":
        assert page.status_code == 302
        assert "error=login_required" in page.headers["Location"]
        return
    assert page.status_code == 200 and SIGN_IN in page.text and CONSENT not in page.text
    fields = dict(hidden_fields(page.text))
    signed = http.post(f"{AUTH}/signin", data={**fields, "login": "abebe", "password": PASSWORD})
    back = http.get(signed.headers["Location"])
    code = back.headers["Location"].split("code=")[1].split("&")[0]
    claims = decode_jwt(http, exchange(http, confidential, code).json["id_token"]).claims  # type: ignore[index]
    assert claims["auth_time"] <= claims["iat"] == int(START.timestamp())
