"""Identity records over time (growth audit): codes, tokens, grants and sign-in sessions are
kept ``identity_expired_kept_hours`` (24 by default) past their expiry, so errors still say
"expired", and then dropped; a rotated refresh token stays as long as its family lives."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import (
    AUTH,
    Client,
    authorize_as,
    basic,
    exchange,
    tokens_for,
    user_id,
    userinfo,
    wallet_app,
)
from tests.identity.test_token import refresh

SECOND = timedelta(seconds=1)


def counts(sandbox: Sandbox) -> dict[str, int]:
    tokens, oauth = sandbox.access_tokens, sandbox.oauth
    return {
        "codes": len(oauth.codes),
        "grants": len(tokens.grants),
        "access": len(tokens.access),
        "refresh": len(tokens.refresh),
        "jti": len(tokens.jti_index),
        "sessions": len(sandbox.browser_sessions.sessions),
    }


def one_flow(http: FlaskClient, sandbox: Sandbox, client: Client) -> None:
    """What an app does in a day: a code redeemed, a refresh, a revoke; a code never
    redeemed; a sign-in session never used."""
    first = tokens_for(http, sandbox, client)
    second = refresh(http, client, first["refresh_token"]).json
    revoked = http.post(
        f"{AUTH}/oauth2/revoke", data={"token": second["refresh_token"]}, headers=basic(client)
    )
    assert revoked.status_code == 200
    authorize_as(http, client, user_id(sandbox))
    assert http.post(f"/_sandbox/users/{user_id(sandbox)}/session", json={}).status_code == 201


def test_records_are_dropped_a_day_after_their_last_expiry(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    for _ in range(20):
        one_flow(http, svc_sandbox, confidential)
    grown = counts(svc_sandbox)
    assert grown == {
        "codes": 40,
        "grants": 20,
        "access": 40,
        "refresh": 40,
        "jti": 40,
        "sessions": 20,
    }
    # The refresh tokens live 30 days: a day later than that, nothing is left but consent.
    svc_sandbox.advance(timedelta(days=31) - SECOND)
    assert counts(svc_sandbox)["grants"] == 20  # the families' refresh tokens still count
    assert counts(svc_sandbox)["access"] == 0  # an hour's tokens went a day after it
    assert counts(svc_sandbox)["sessions"] == 0  # 12 h sessions too
    svc_sandbox.advance(SECOND)
    assert set(counts(svc_sandbox).values()) == {0}
    assert svc_sandbox.oauth.consents_of(user_id(svc_sandbox))  # what the user gave stays
    exported = svc_sandbox.export()["services"]
    assert exported["tokens"] == {"grants": [], "access": [], "refresh": []}
    assert exported["authorizations"]["codes"] == []


def code_answer(http: FlaskClient, sandbox: Sandbox, client: Client) -> Callable[[], Any]:
    code = authorize_as(http, client, user_id(sandbox))["code"]
    return lambda: exchange(http, client, code)


def refresh_answer(http: FlaskClient, sandbox: Sandbox, client: Client) -> Callable[[], Any]:
    token = tokens_for(http, sandbox, client)["refresh_token"]
    return lambda: refresh(http, client, token)


def opaque_access_answer(http: FlaskClient, sandbox: Sandbox, client: Client) -> Callable[[], Any]:
    token = tokens_for(http, sandbox, client, resource=False)["access_token"]
    return lambda: userinfo(http, token)


def jwt_access_answer(http: FlaskClient, sandbox: Sandbox, client: Client) -> Callable[[], Any]:
    token = tokens_for(http, sandbox, client)["access_token"]
    return lambda: userinfo(http, token)


#: What a record answers after it expired, while it is kept, and once it was dropped.
AFTER_EXPIRY = [
    (
        code_answer,
        timedelta(minutes=10),
        "code expired (codes live 10 minutes)",
        "code is not known to this provider",
    ),
    (
        refresh_answer,
        timedelta(days=30),
        "refresh_token expired (refresh tokens live 30 days)",
        "refresh_token is unknown, or was issued to another client",
    ),
    (
        opaque_access_answer,
        timedelta(hours=1),
        "access token expired",
        "access token is not known to this provider",
    ),
    # A JWT's own exp is checked before its record: it says "expired" for good.
    (jwt_access_answer, timedelta(hours=1), "access token expired", "access token expired"),
]


@pytest.mark.parametrize("kept_hours", [24, 2])
@pytest.mark.parametrize(
    ("make", "lifetime", "while_kept", "once_dropped"),
    AFTER_EXPIRY,
    ids=["code", "refresh token", "opaque access token", "JWT access token"],
)
def test_an_expired_record_says_expired_until_it_is_dropped(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    kept_hours: int,
    make: Callable[[FlaskClient, Sandbox, Client], Callable[[], Any]],
    lifetime: timedelta,
    while_kept: str,
    once_dropped: str,
) -> None:
    svc_sandbox.settings.identity_expired_kept_hours = kept_hours
    answer = make(http, svc_sandbox, confidential)
    svc_sandbox.advance(lifetime + timedelta(hours=kept_hours) - SECOND)
    assert answer().json["error_description"] == while_kept
    svc_sandbox.advance(SECOND)
    assert answer().json["error_description"] == once_dropped


def reuse_a_rotated_refresh_token(
    http: FlaskClient, sandbox: Sandbox, client: Client
) -> tuple[Any, str]:
    """The first refresh token used again at 61 days old (its own 30 days and the day kept
    are over), its family refreshed since: the answer, and the family's live refresh token."""
    first = tokens_for(http, sandbox, client)
    sandbox.advance(timedelta(days=29))
    second = refresh(http, client, first["refresh_token"]).json
    sandbox.advance(timedelta(days=29))
    third = refresh(http, client, second["refresh_token"]).json
    sandbox.advance(timedelta(days=3))
    return refresh(http, client, first["refresh_token"]), third["refresh_token"]


def reuse_a_redeemed_code(http: FlaskClient, sandbox: Sandbox, client: Client) -> tuple[Any, str]:
    """A code redeemed again 20 days after it expired, its refresh token still alive."""
    code = authorize_as(http, client, user_id(sandbox))["code"]
    tokens = exchange(http, client, code).json
    sandbox.advance(timedelta(days=20))
    return exchange(http, client, code), tokens["refresh_token"]


@pytest.mark.parametrize(
    ("reuse", "message"),
    [
        (
            reuse_a_rotated_refresh_token,
            "refresh_token was already used; every token of its family is now revoked",
        ),
        (reuse_a_redeemed_code, "code was already used; every token issued from it is revoked"),
    ],
    ids=["rotated refresh token", "redeemed code"],
)
def test_a_second_use_revokes_the_family_as_long_as_it_lives(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    reuse: Callable[[FlaskClient, Sandbox, Client], tuple[Any, str]],
    message: str,
) -> None:
    """Spec §5.8 and RFC 6749 §4.1.2: the compromise signal keeps working, past the used
    record's own lifetime, because it is dropped only with its family."""
    reused, live = reuse(http, svc_sandbox, confidential)
    assert reused.status_code == 400 and reused.json["error_description"] == message
    revoked = refresh(http, confidential, live)
    assert revoked.json["error_description"] == "refresh_token is revoked"


def test_an_export_imports_to_the_same_answers(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """Due records are dropped before an export is taken, so an import of it answers as the
    live sandbox does, and exports again to the same document."""
    first = authorize_as(http, confidential, user_id(svc_sandbox))["code"]
    svc_sandbox.advance(timedelta(hours=23))
    second = authorize_as(http, confidential, user_id(svc_sandbox))["code"]
    svc_sandbox.advance(timedelta(hours=1, minutes=10))  # first: a day past expiry; second: not
    exported = svc_sandbox.export()
    assert len(exported["services"]["authorizations"]["codes"]) == 1
    imported = Sandbox(clock_mode="frozen")
    imported.restore(exported)
    assert imported.export() == exported
    for client in (http, create_app(imported).test_client()):
        answers = [exchange(client, confidential, code).json for code in (first, second)]
        assert [a["error_description"] for a in answers] == [
            "code is not known to this provider",
            "code expired (codes live 10 minutes)",
        ]
    assert svc_sandbox.export() == imported.export()


def test_a_redeemed_code_goes_with_its_grant_when_the_setting_is_lowered(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """The code was queued under 24 h, the grant is dropped under 0 h: the code goes with it
    (a second use answered 500 and the export named a grant it no longer held)."""
    code = authorize_as(http, confidential, user_id(svc_sandbox), scope="openid profile")["code"]
    assert exchange(http, confidential, code).status_code == 200
    svc_sandbox.settings.identity_expired_kept_hours = 0
    svc_sandbox.advance(timedelta(hours=24))
    assert counts(svc_sandbox)["grants"] == counts(svc_sandbox)["codes"] == 0
    again = exchange(http, confidential, code)
    assert again.status_code == 400
    assert again.json["error_description"] == "code is not known to this provider"
    imported = Sandbox(clock_mode="frozen")
    imported.restore(svc_sandbox.export())
    assert imported.export() == svc_sandbox.export()


@pytest.mark.parametrize("kind", ["access", "refresh"])
def test_a_token_naming_no_grant_is_taken_with_references_skipped_and_answers_unknown(
    kind: str,
) -> None:
    """docs/control-plane.md: ``--state-references skip`` takes any reference as it is, and a
    dangling one answers where it is followed (here: as an unknown token)."""
    sandbox = Sandbox(state_references="skip", rate_limits=False, clock_mode="frozen")
    http = create_app(sandbox).test_client()
    client = wallet_app(sandbox)
    issued = tokens_for(http, sandbox, client)
    document = sandbox.export()
    for token in document["services"]["tokens"][kind]:
        token["grant_id"] = "f" * 24
    assert http.put("/_sandbox/state", json=document).status_code == 200
    if kind == "refresh":
        answer = refresh(http, client, issued["refresh_token"])
        assert answer.status_code == 400
        assert answer.json["error"] == "invalid_grant"
    introspected = http.post(
        f"{AUTH}/oauth2/introspect", data={"token": issued[f"{kind}_token"]}, headers=basic(client)
    )
    assert introspected.status_code == 200
    revoked = http.post(
        f"{AUTH}/oauth2/revoke", data={"token": issued[f"{kind}_token"]}, headers=basic(client)
    )
    assert revoked.status_code == 200
