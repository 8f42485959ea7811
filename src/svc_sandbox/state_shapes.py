"""The fields of the export format whose values the API makes in a shape of its own (ids,
tokens, digests, a trigger's phone, a webhook secret), each with the API's own check for it:
an import refuses any other shape (state_format.py ``_check_shapes``), since a value of
another shape would import and then be out of reach or fail where it is used."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from svc_sandbox.commerce.checkout import CheckoutSession
from svc_sandbox.commerce.checkout_input import check_checkout_link, normalize_phone
from svc_sandbox.commerce.checkout_links import CheckoutLink
from svc_sandbox.commerce.customers import Customer
from svc_sandbox.commerce.notices import NOTICE_PREFIX, NoticeRule
from svc_sandbox.commerce.orders import Order
from svc_sandbox.commerce.payments import PaymentAttempt
from svc_sandbox.commerce.payouts import Withdrawal
from svc_sandbox.commerce.products import PRODUCT_REF, Product
from svc_sandbox.commerce.triggers import SPEC_TRIGGERS, Trigger
from svc_sandbox.core.digests import SHA256_HEX, SHA256_HEX_WORDS
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.ids import OBJECT_ID_SHAPE, api_token_prefix, is_object_id
from svc_sandbox.identity.apps import App
from svc_sandbox.identity.grants import CHALLENGE_SHAPE, AuthCode
from svc_sandbox.identity.keys import KID_SHAPE, SigningKey, kid_of
from svc_sandbox.identity.sessions import BrowserSession
from svc_sandbox.identity.tokens import AccessToken, Grant, RefreshToken
from svc_sandbox.identity.users import HANDLE_SHAPE, HANDLE_WORDS, User
from svc_sandbox.latency import LATENCY_PREFIX, LatencyRule
from svc_sandbox.orgs.organizations import TOKEN_SHAPE, ApiToken, Organization
from svc_sandbox.wallet.ledger import LedgerEntry, Transfer
from svc_sandbox.webhooks.delivery import DELIVERY_PREFIX, Delivery
from svc_sandbox.webhooks.endpoints import ENDPOINT_PREFIX, WebhookEndpoint, check_secret
from svc_sandbox.webhooks.events import EVENT_PREFIX, Event


@dataclasses.dataclass(frozen=True)
class Shape:
    """What the API makes and takes for one field: ``problem(value)`` words what is wrong
    (None: nothing), by the API's own check."""

    problem: Callable[[str], str | None]


def _fits(check: Callable[[str], bool], words: str) -> Shape:
    return Shape(lambda value: None if check(value) else f"must be {words}")


def _object_id(prefix: str = "") -> Shape:
    words = f"{prefix} then {OBJECT_ID_SHAPE}" if prefix else OBJECT_ID_SHAPE
    return _fits(lambda value: is_object_id(value, prefix), words)


def _raised(check: Callable[[str], Any]) -> Shape:
    """A check of the API that raises ValueError (or ValidationFailed) with its words."""

    def problem(value: str) -> str | None:
        try:
            check(value)
        except ValidationFailed as exc:
            return exc.message.removeprefix("secret ")
        except ValueError as exc:
            return str(exc)
        return None

    return Shape(problem)


def _trigger_phone(value: str) -> str | None:
    """A custom trigger's phone as the registry keeps it (``triggers.parse_trigger``): one
    spelling (two spellings of one phone would be two triggers for it), not the spec's own."""
    try:
        canonical = normalize_phone(value)
    except ValueError as exc:
        return str(exc)
    if canonical != value:
        return f"must be written as the registry keeps it: {canonical}"
    if any(spec.phone == value for spec in SPEC_TRIGGERS):
        return "is one of the spec's own triggers (a custom trigger takes another number)"
    return None


#: The fields whose values the API makes in a shape of its own and looks records up by: a
#: value of another shape would import and then be out of reach (a withdrawal id ``W-1``
#: answers 400 at GET, a token ``not-a-token`` 401 Malformed). Each is checked by the API's
#: own rule (core/ids.py, organizations.TOKEN_SHAPE, products.PRODUCT_REF, the checkout
#: link's and the phone's rules of checkout_input.py, endpoints.check_secret, the digests of
#: core/digests.py and authorize's CHALLENGE_SHAPE).
SHAPES: dict[tuple[type, str], Shape] = {
    **{
        (cls, "id"): _object_id()
        for cls in (
            Organization,
            Product,
            Order,
            Customer,
            PaymentAttempt,
            CheckoutSession,
            Withdrawal,
            User,
            Grant,
            Transfer,
            LedgerEntry,
        )
    },
    (App, "client_id"): _object_id(),
    (AccessToken, "jti"): _object_id(),
    (Event, "id"): _object_id(EVENT_PREFIX),
    (WebhookEndpoint, "id"): _object_id(ENDPOINT_PREFIX),
    (Delivery, "id"): _object_id(DELIVERY_PREFIX),
    (LatencyRule, "id"): _object_id(LATENCY_PREFIX),
    (NoticeRule, "id"): _object_id(NOTICE_PREFIX),
    (ApiToken, "token"): _fits(
        lambda value: TOKEN_SHAPE.fullmatch(value) is not None, "svc_test_... or svc_live_..."
    ),
    (Product, "checkout_token"): _fits(
        lambda value: value.startswith("p_") and PRODUCT_REF.fullmatch(value) is not None,
        "a p_ token",
    ),
    (CheckoutLink, "id"): _raised(check_checkout_link),
    (Trigger, "phone"): Shape(_trigger_phone),
    # signed with at every attempt: the control plane's rule, else each attempt fails to sign
    (WebhookEndpoint, "secret"): _raised(check_secret),
    # what a presented secret is hashed and compared against, or looked up by: the service
    # makes each with sha256_hex, so no other text is one (non-ASCII made the comparison a 500)
    **{
        (cls, field): _fits(lambda value: SHA256_HEX.fullmatch(value) is not None, SHA256_HEX_WORDS)
        for cls, field in (
            (App, "secret_sha256"),
            (User, "password_sha256"),
            (AuthCode, "code_sha256"),
            (AccessToken, "token_sha256"),
            (RefreshToken, "token_sha256"),
            (BrowserSession, "session_sha256"),
        )
    },
    # looked up by at sign-in, shown on every page and token: as the control plane takes it
    (User, "handle"): _fits(lambda value: HANDLE_SHAPE.fullmatch(value) is not None, HANDLE_WORDS),
    # published in the JWKS (whose kid the contract wants non-empty) and named by every token
    (SigningKey, "kid"): _fits(
        lambda value: KID_SHAPE.fullmatch(value) is not None, "16 lowercase hex characters"
    ),
    # compared with the verifier's S256 at the token endpoint: as authorize takes it
    (AuthCode, "code_challenge"): _fits(
        lambda value: CHALLENGE_SHAPE.fullmatch(value) is not None,
        "43 base64url characters (an S256 code challenge)",
    ),
}


def _token_environment(token: dict[str, Any]) -> str | None:
    prefix = api_token_prefix(token["environment"])
    if token["token"].startswith(prefix):
        return None
    return f"must start with {prefix} (a token of its environment, {token['environment']})"


def _kid_of_material(key: dict[str, Any]) -> str | None:
    if key["kid"] == kid_of(key["material"]):
        return None
    return f"must be {kid_of(key['material'])}, the id its material makes (keys.kid_of)"


#: Fields that follow from another field of their record, as the services make them: one
#: that does not would import and mean two things (a ``svc_live_`` token acting in sandbox,
#: a JWKS ``kid`` naming a key other than the one it publishes). Each words what is wrong.
DERIVED: dict[tuple[type, str], Callable[[dict[str, Any]], str | None]] = {
    (ApiToken, "token"): _token_environment,
    (SigningKey, "kid"): _kid_of_material,
}
