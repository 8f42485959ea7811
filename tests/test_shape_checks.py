"""Shape checks hold for the whole value: a final newline is refused as any other character
outside the shape. (``re.match`` of ``^...$`` lets one through: ``$`` also matches before a
final ``\\n``. Every shape check uses ``fullmatch``; the last test keeps it so.)"""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

import pytest
from flask.testing import FlaskClient

import svc_sandbox
from svc_sandbox.commerce.payouts import check_idempotency_key
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.identity.errors import InvalidRequest
from svc_sandbox.identity.grants import parse_max_age
from svc_sandbox.sandbox import Sandbox
from tests.helpers import assert_unharmed, create_product
from tests.wallet.helpers import send_body, sender

HEX = "a" * 24


def test_a_wallet_idempotency_key_with_a_final_newline_moves_no_money(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    both = sender(svc_http, svc_sandbox)
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post(
        "/wallet/send", json=send_body("tigist", 100, "order-0001\n"), headers=both
    )
    assert response.status_code == 400
    assert response.json == {
        "error": "invalid_idempotency_key",
        "message": "idempotencyKey must be 8 to 255 printable ASCII characters",
    }
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"handle": "meron\n"}, "handle"),
        ({"handle": "meron", "email": "meron@example.com\n"}, "email"),
    ],
)
def test_a_user_field_with_a_final_newline_is_refused(
    svc_http: FlaskClient, body: dict[str, Any], field: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post("/_sandbox/users", json=body)
    assert response.status_code == 400
    assert response.json["code"] == "validation_failed"  # type: ignore[index]
    assert response.json["error"].startswith(field)  # type: ignore[index]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (f"/api/products/{HEX}%0A", "id must be a p_ token or 24 lowercase hex characters"),
        ("/api/products/p_abcdefgh%0A", "id must be a p_ token or 24 lowercase hex characters"),
        (f"/api/withdrawals/{HEX}%0A", "id must be 24 lowercase hex characters"),
    ],
)
def test_an_id_with_a_final_newline_is_malformed_not_unknown(
    svc_http: FlaskClient, auth: dict[str, str], path: str, message: str
) -> None:
    """docs/spec-gaps.md: a malformed id is 400; a well-formed unknown one is 404."""
    create_product(svc_http, auth)
    response = svc_http.get(path, headers=auth)
    assert response.status_code == 400
    assert response.json == {"error": message}


def test_a_withdrawal_idempotency_key_with_a_final_newline_is_refused() -> None:
    assert check_idempotency_key("key-1") == "key-1"
    with pytest.raises(ValidationFailed, match="Idempotency-Key"):
        check_idempotency_key("key-1\n")


def test_max_age_with_a_final_newline_is_refused() -> None:
    assert parse_max_age("60") == 60
    with pytest.raises(InvalidRequest, match="max_age"):
        parse_max_age("60\n")


def _module_patterns() -> list[tuple[str, str, re.Pattern[str]]]:
    found = []
    for info in pkgutil.walk_packages(svc_sandbox.__path__, "svc_sandbox."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                found.append((info.name, name, value))
    return found


def test_no_shape_check_is_anchored_with_a_dollar() -> None:
    """A module-level pattern written ``^...$`` (not multi-line) is a shape check that
    ``match`` would let a final newline through: it is written unanchored, for
    ``fullmatch``. (A pattern handed to pydantic or JSON Schema, which search, is anchored
    where it is handed over.)"""
    #: client/arguments.py checks with fullmatch; the MCP's input schemas reuse its
    #: patterns, and JSON Schema searches, so they keep their anchors.
    patterns = _module_patterns()
    kept = {id(p) for module, _, p in patterns if module == "svc_sandbox.client.arguments"}
    anchored = [
        f"{module}.{name}: {pattern.pattern!r}"
        for module, name, pattern in patterns
        if id(pattern) not in kept
        and pattern.pattern.startswith("^")
        and pattern.pattern.endswith("$")
        and not pattern.flags & re.MULTILINE
    ]
    assert anchored == []
