"""The export format of the sandbox state (``GET/PUT /_sandbox/state``), as pydantic models.

An import is validated against these models before anything changes, so a document that
would break later (an order ``amount: "lots"``, a session status ``"bogus"``, a scheduler entry
of an unknown kind, a string ``seq``) is a 400 naming its path, never a 500 an hour later.

The models are derived from the services' own dataclasses (one description of each record:
the dataclass), with strict types: ``str``, ``int``, ``bool`` exactly; floats finite; instants
as ISO 8601 strings with a zone inside the clock's range (a record's up to a century
after it: ``LATEST_RECORDED``); enums and lifecycle statuses as their
values. A record field with a default may be absent (the dataclass fills it in), every other
one is required, unknown ones are refused. Values are bounded as the API bounds them: integers
0 to 2^53 - 1 (``_SIGNED`` lists the exceptions), money and product texts by the schemas' own
types (``_NARROWER``), ids, tokens, digests and a few more by the API's own rule for them
(``state_shapes.SHAPES``), every other string by a request body's cap; every list of records
holds each key once (``record_lists``), and each key its service indexes it by
(``_ALSO_UNIQUE``); the id source's next draws do not repeat. state_consistency.py checks what
needs records of several kinds at once (the webhook attempts still to make, the wallet ledger).

``FORMAT`` (core/records.py) is the format's version: a change that an older sandbox could not
read bumps it.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal, InvalidOperation
from enum import Enum
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    create_model,
    model_validator,
)
from pydantic import ValidationError as PydanticValidationError
from typing_extensions import is_typeddict  # the payloads are typing_extensions TypedDicts

from svc_sandbox.commerce import payments, schemas
from svc_sandbox.commerce.checkout import SESSION_LIFECYCLE, CheckoutSession
from svc_sandbox.commerce.checkout_links import (
    FIELD_TYPES,
    MAX_FIELD_OPTIONS,
    MAX_FIELD_PRODUCTS,
    CheckoutField,
    CheckoutLink,
)
from svc_sandbox.commerce.customers import Customer
from svc_sandbox.commerce.notices import NOTICE_KINDS, NoticeFault, NoticeRule
from svc_sandbox.commerce.orders import ORDER_LIFECYCLE, Order
from svc_sandbox.commerce.payments import MAX_PUSH_DELAY_SECONDS, PaymentAttempt, ProviderConfig
from svc_sandbox.commerce.payouts import LIFECYCLE as WITHDRAWAL_LIFECYCLE
from svc_sandbox.commerce.payouts import IdempotencyRecord, Withdrawal
from svc_sandbox.commerce.products import RECORD_PRICE, Product, price_problem
from svc_sandbox.commerce.schemas import Description, Gateway, Media, Money, Title, Uri
from svc_sandbox.commerce.triggers import OUTCOMES, Trigger
from svc_sandbox.core.clock import LATEST, LATEST_RECORDED, isoformat, out_of_range, parse_instant
from svc_sandbox.core.durations import MAX_SECONDS
from svc_sandbox.core.emails import email_key
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.ids import OBJECT_ID_SHAPE, degenerate_problem, is_object_id
from svc_sandbox.core.lifecycle import Lifecycle
from svc_sandbox.core.numbers import EXPONENT_TEXT, decimal_text, within
from svc_sandbox.core.records import FORMAT
from svc_sandbox.core.validation import describe, http_url_problem, shown
from svc_sandbox.identity.apps import App, check_app_url
from svc_sandbox.identity.grants import AuthCode
from svc_sandbox.identity.keys import SigningKey
from svc_sandbox.identity.scopes import SCOPES
from svc_sandbox.identity.sessions import BrowserSession
from svc_sandbox.identity.tokens import AccessToken, Grant, RefreshToken
from svc_sandbox.identity.users import User
from svc_sandbox.latency import LatencyRule
from svc_sandbox.orgs.organizations import MAX_REDIRECT_URLS, ApiToken, Organization, rate_problem
from svc_sandbox.state_shapes import DERIVED, SHAPES
from svc_sandbox.wallet.ledger import (
    KINDS,
    TRANSFER_STATUSES,
    LedgerEntry,
    Transfer,
)
from svc_sandbox.webhooks.delivery import Attempt, Delivery, DueAttempt, ReceiverFault
from svc_sandbox.webhooks.endpoints import MAX_SECRET_LENGTH, WebhookEndpoint
from svc_sandbox.webhooks.events import EVENT_TYPES, Event
from svc_sandbox.webhooks.sender import INPROCESS_SCHEME

_STRICT = ConfigDict(extra="forbid", strict=True)


def _instant(value: str, latest: datetime = LATEST_RECORDED) -> str:
    """A record's instant or a due time: up to LATEST_RECORDED, as a sandbox whose clock stands
    at its end makes them (a session created then expires after it); the clock's own
    instants (``ClockInstant``) stop at LATEST."""
    try:
        instant = parse_instant(value)
    except ValueError:
        raise ValueError("must be an ISO 8601 date-time") from None
    problem = out_of_range(instant, latest)
    if problem:
        raise ValueError(problem)
    return value


def _clock_instant(value: str) -> str:
    return _instant(value, LATEST)


def _decimal(value: str) -> str:
    """Decimal text as the export writes it (``str(Decimal)``: ``0.05``, ``1E-7``), in ASCII
    digits (core/numbers.py): ``Decimal()`` alone would also take ``٠.٠٥`` or ``1_0``."""
    if decimal_text(value, exponent=True) is not None:
        return value
    try:
        finite = Decimal(value).is_finite()
    except InvalidOperation:
        finite = True  # not a number at all: the message names the form
    if not finite:
        raise ValueError("must be a finite decimal number")
    raise ValueError(f"must be a decimal number written as a string: {EXPONENT_TEXT}")


def _fee_rate(value: str) -> str:
    problem = rate_problem(Decimal(value))  # a finite decimal by now (``_decimal``)
    if problem:
        raise ValueError(problem)
    return value


Instant = Annotated[StrictStr, AfterValidator(_instant)]
ClockInstant = Annotated[StrictStr, AfterValidator(_clock_instant)]
DecimalText = Annotated[StrictStr, AfterValidator(_decimal)]
FeeRateText = Annotated[DecimalText, AfterValidator(_fee_rate)]
#: The largest count or sequence number an import takes: the largest integer every JSON reader
#: keeps exact (JavaScript's Number.MAX_SAFE_INTEGER; also pagination's MAX_PAGE and the
#: wallet's MAX_BALANCE). The sandbox adds one per record, step or attempt, so no state it
#: makes comes near it; at 2^63 - 1 instead, one request after importing a counter set at the
#: bound made an export that no longer imported (docs/spec-gaps.md, "Counters in an import").
MAX_COUNT = 2**53 - 1
#: An integer of the records by default: amounts, counts, sequence numbers and attempt numbers
#: are never negative where the API makes them (``_SIGNED`` lists the exceptions).
Count = Annotated[StrictInt, Field(ge=0, le=MAX_COUNT)]
Int64 = Annotated[StrictInt, Field(ge=-(2**63), le=2**63 - 1)]
#: The longest string a record takes where no rule of its own says less: a request body's cap
#: (web.MAX_BODY_BYTES), so every string the emulator took from a request imports again,
#: and a 5 MB value (a page of 5 MB later) does not.
MAX_TEXT = 1024 * 1024
Text = Annotated[StrictStr, Field(max_length=MAX_TEXT)]


def _finite(value: Any) -> float:
    # Every float of the records is a duration (delays, a receiver's time): 0 or more.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number")
    if not within(value, 0, MAX_SECONDS):  # before float(), which overflows
        raise ValueError(f"must be a finite number from 0 to {MAX_SECONDS:.0f}")
    return float(value)


Finite = Annotated[Any, AfterValidator(_finite), WithJsonSchema({"type": "number"})]


def _states(lifecycle: Lifecycle) -> Any:
    names = sorted({t.target for t in lifecycle.transitions})
    return Literal[tuple(names)]


def _failure_code(value: str) -> str:
    """A session's or an attempt's failure code as the service makes them: a known one
    (``session_expired`` among them) or a new one the control plane took. An empty one was
    imported, and strict mode then answered the session's status with a 500 (the contract's
    ``CheckoutFailure.code`` has a ``minLength`` of 1)."""
    if payments.is_failure_code(value, payments.FAILURE_CODES):
        return value
    raise ValueError(
        f"must be one of {', '.join(payments.FAILURE_CODES)}, or a failure code of lowercase "
        "words joined by _ (such as payment_blocked_by_bank), at most 64 characters"
    )


FailureCode = Annotated[StrictStr, AfterValidator(_failure_code)]

#: Fields whose plain ``str`` type says less than the rules do: a value outside these makes
#: later requests fail, so an import refuses it.
_NARROWER: dict[tuple[type, str], Any] = {
    (CheckoutSession, "status"): _states(SESSION_LIFECYCLE),
    (Order, "status"): _states(ORDER_LIFECYCLE),
    (Withdrawal, "status"): _states(WITHDRAWAL_LIFECYCLE),
    (Product, "status"): Literal["draft", "published", "archived"],
    (Product, "pricing_model"): Literal["fixed", "pwyw", "free"],
    (CheckoutField, "type"): Literal[FIELD_TYPES],
    (ProviderConfig, "push_delay_seconds"): Annotated[
        Finite, Field(ge=0, le=MAX_PUSH_DELAY_SECONDS)
    ],
    (Organization, "custom_fee_rate"): FeeRateText,
    # the API's own types for these (a value outside them broke the contract: strict mode's 500)
    (Product, "media"): Media,
    (Withdrawal, "gateway"): Gateway,
    (PaymentAttempt, "gateway"): Gateway,
    (CheckoutSession, "gateway"): Gateway,
    # PATCH /_sandbox/orgs's rule: a tokenless checkout reads each again to match its host
    (Organization, "redirect_urls"): Annotated[list[Uri], Field(max_length=MAX_REDIRECT_URLS)],
    # the control plane's counts (a list past them was taken, then every request read it)
    (CheckoutField, "options"): Annotated[list[Text], Field(max_length=MAX_FIELD_OPTIONS)],
    (CheckoutField, "product_ids"): Annotated[list[Text], Field(max_length=MAX_FIELD_PRODUCTS)],
    (ProviderConfig, "initiate_failures"): Annotated[
        list[Text], Field(max_length=payments.MAX_INITIATE_FAILURES)
    ],
    (LedgerEntry, "kind"): Literal[KINDS],
    (Transfer, "status"): Literal[TRANSFER_STATUSES],
    # what the API's own parsers take (an event type, a fault kind, an outcome): another
    # value imported, then failed where it was used or showed what no request could make
    (Event, "type"): Literal[EVENT_TYPES],
    (Delivery, "event_type"): Literal[EVENT_TYPES],
    (Attempt, "event_type"): Literal[EVENT_TYPES],
    (WebhookEndpoint, "event_types"): list[Literal[EVENT_TYPES]],  # type: ignore[valid-type]
    (NoticeFault, "kind"): Literal[NOTICE_KINDS],
    (Trigger, "outcome"): Literal[OUTCOMES],
    (Trigger, "failure_code"): schemas.provider_decision_type(payments.PROVIDER_FAILURE_CODES),
    (ProviderConfig, "push_outcome"): schemas.provider_decision_type(payments.PUSH_OUTCOMES),
    (PaymentAttempt, "decide_outcome"): schemas.provider_decision_type(payments.PLANNED_OUTCOMES),
    (payments.Failure, "code"): FailureCode,
    # money as the API's own schemas bound it (commerce/schemas.py)
    (Product, "amount"): Money,
    (Product, "minimum_amount"): Money,
    (Product, "default_amount"): Money,
    (Product, "title"): Title,
    (Product, "description"): Description,
    (Order, "amount"): Money,
    (CheckoutSession, "amount"): Money,
    (Withdrawal, "amount"): Money,
    (Withdrawal, "fee_amount"): Money,
    (Withdrawal, "tax_amount"): Money,
    (Withdrawal, "net_amount"): Money,
}
#: The integer fields the format lets be negative (every other one is 0 or more), because a
#: rule of their own bounds them later, in one place: a ledger entry's amount is signed by its
#: kind (a transfer out is negative), a transfer's amount is 100..1,000,000 (spec §8); both
#: state_consistency.check_ledger checks (wallet/ledger.py ``ledger_problem``).
_SIGNED: frozenset[tuple[type, str]] = frozenset({(LedgerEntry, "amount"), (Transfer, "amount")})
#: A scope of the provider, as app registration takes it (apps._check_scopes): every scope a
#: grant, code, token or consent holds was one of its app's.
Scope: Any = Literal[tuple(SCOPES)]
_NARROWER_BY_NAME: dict[str, Any] = {
    "environment": Literal["sandbox", "production"],
    "scopes": list[Scope],
}


def _field_type(annotation: Any) -> Any:
    """The strict validation type for a dataclass field's annotation."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return Union[tuple(_field_type(a) for a in get_args(annotation))]  # noqa: UP007
    if origin is list:
        (item,) = get_args(annotation) or (Any,)
        return list[_field_type(item)]  # type: ignore[misc]
    if origin is dict:
        key, item = get_args(annotation) or (str, Any)
        return dict[_field_type(key), _field_type(item)]  # type: ignore[misc]
    if origin is Literal:
        return annotation
    if annotation is type(None):
        return None
    if annotation is Any:
        return Any
    if annotation is str:
        return Text
    if annotation is bool:
        return StrictBool
    if annotation is int:
        return Count
    if annotation is float:
        return Finite
    if annotation is datetime:
        return Instant
    if annotation is Decimal:
        return DecimalText
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return Literal[tuple(member.value for member in annotation)]
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return record_model(annotation)
    raise TypeError(f"no export type for {annotation!r}")  # a new field type: describe it here


#: The dataclass behind each record model (``record_lists`` reads the format through it).
_DATACLASS_OF: dict[type[BaseModel], type] = {}


@cache
def record_model(cls: type) -> type[BaseModel]:
    """The model of one exported record: its dataclass's fields, strictly typed."""
    hints = get_type_hints(cls)
    fields: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        kind = _NARROWER.get((cls, item.name)) or _NARROWER_BY_NAME.get(item.name)
        if kind is None and (cls, item.name) in _SIGNED:
            kind = Int64
        if kind is None:
            kind = _field_type(hints[item.name])
        elif type(None) in get_args(hints[item.name]):
            kind = kind | None
        has_default = (
            item.default is not dataclasses.MISSING
            or item.default_factory is not dataclasses.MISSING
            or not item.init
        )
        fields[item.name] = (kind, None if has_default else ...)
    model: type[BaseModel] = create_model(cls.__name__ + "Record", __config__=_STRICT, **fields)
    _DATACLASS_OF[model] = cls
    return model


def _records(cls: type) -> Any:
    return list[record_model(cls)]  # type: ignore[misc]


def _section(name: str, **fields: Any) -> type[BaseModel]:
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        name, __config__=_STRICT, **{k: (v, ...) for k, v in fields.items()}
    )
    return model


Seq = Count  # a service's or the scheduler's next sequence number


@cache
def services_models() -> dict[str, type[BaseModel]]:
    """Each service's part of ``services``, keyed as Sandbox._services names them. Built on
    first use (an import or the schema), not at start-up: the models cost ~50 ms to make."""
    return {
        "orgs": _section("OrgsState", orgs=_records(Organization), tokens=_records(ApiToken)),
        "products": _section("ProductsState", seq=Seq, products=_records(Product)),
        "orders": _section("OrdersState", seq=Seq, orders=_records(Order)),
        "events": _section("EventsState", events=_records(Event)),
        "webhookEndpoints": _section(
            "WebhookEndpointsState",
            endpoints=_records(WebhookEndpoint),
            defaultSecret=Annotated[StrictStr, Field(min_length=1, max_length=MAX_SECRET_LENGTH)]
            | None,
        ),
        "webhookDeliveries": _section(
            "WebhookDeliveriesState",
            deliveries=_records(Delivery),
            attempts=_records(Attempt),
            due=_records(DueAttempt),
            dueSeq=Seq,
            fault=record_model(ReceiverFault),
        ),
        "customers": _section("CustomersState", customers=_records(Customer)),
        "checkoutConfig": _section(
            "CheckoutConfigState", links=_records(CheckoutLink), fields=_records(CheckoutField)
        ),
        "payments": _section(
            "PaymentsState", config=record_model(ProviderConfig), attempts=_records(PaymentAttempt)
        ),
        "checkout": _section(
            "CheckoutState",
            sessions=_records(CheckoutSession),
            placeholders=dict[StrictStr, StrictStr],
        ),
        "checkoutLimits": _section("CheckoutLimitsState"),
        "payouts": _section(
            "PayoutsState",
            seq=Seq,
            withdrawals=_records(Withdrawal),
            keys=_records(IdempotencyRecord),
            ownerWalletShort=list[StrictStr],
        ),
        "triggers": _section("TriggersState", custom=_records(Trigger)),
        "notificationFaults": _section("NotificationFaultsState", rules=_records(NoticeRule)),
        "latencyFaults": _section("LatencyFaultsState", rules=_records(LatencyRule)),
        "users": _section("UsersState", users=_records(User)),
        "oauthApps": _section(
            "OauthAppsState", apps=_records(App), seededSecrets=dict[StrictStr, StrictStr]
        ),
        "signingKeys": _section("SigningKeysState", keys=_records(SigningKey)),
        "tokens": _section(
            "TokensState",
            grants=_records(Grant),
            access=_records(AccessToken),
            refresh=_records(RefreshToken),
        ),
        "authorizations": _section(
            "AuthorizationsState",
            codes=_records(AuthCode),
            consents=dict[StrictStr, list[Scope]],
        ),
        "browserSessions": _section("BrowserSessionsState", sessions=_records(BrowserSession)),
        "identityLimits": _section("IdentityLimitsState"),
        "wallets": _section(
            "WalletsState", seq=Seq, entries=_records(LedgerEntry), transfers=_records(Transfer)
        ),
    }


Word32 = Annotated[StrictInt, Field(ge=0, le=2**32 - 1)]
#: The Mersenne Twister state of ``random.Random.getstate()``: version 3, 625 words, no gauss.
RandomState = tuple[
    Literal[3], Annotated[list[Word32], Field(min_length=625, max_length=625)], None
]


def _seed_type(value: Any) -> Any:
    """One message for the union (pydantic names each member: ``ids.seed.int must be ...``)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("must be an integer or a string (the seed the state was made from)")
    return value


class Ids(BaseModel):
    model_config = _STRICT
    seed: Annotated[StrictInt | StrictStr, BeforeValidator(_seed_type)]
    state: Annotated[RandomState, Field(strict=False)]  # a JSON array, read as the tuple


class Clock(BaseModel):
    model_config = _STRICT
    now: ClockInstant
    exact: ClockInstant

    @model_validator(mode="after")
    def _one_instant(self) -> Clock:
        # ``exact`` is the one read; a ``now`` that says another time would import unseen
        if isoformat(parse_instant(self.exact)) != isoformat(parse_instant(self.now)):
            raise ValueError("now and exact must be the same instant (now to the millisecond)")
        return self


def _payload_model(payload: Any) -> Any:
    """A scheduler payload (a TypedDict) typed as the records are: its attempt number 0 or
    more, as every count."""
    if not is_typeddict(payload):
        return payload
    fields = {k: _field_type(v) for k, v in get_type_hints(payload).items()}
    return _section(payload.__name__ + "Record", **fields)


@cache
def document_model(payloads: frozenset[tuple[str, Any]]) -> type[BaseModel]:
    """The whole document, for a scheduler whose kinds take these payload types."""
    entries = [
        _section(
            f"Entry_{kind.replace('.', '_')}",
            due=Instant,
            seq=Seq,
            kind=Literal[kind],
            payload=_payload_model(payload),
        )
        for kind, payload in sorted(payloads, key=lambda p: p[0])
    ]
    entry: Any = Annotated[Union[tuple(entries)], Field(discriminator="kind")]  # noqa: UP007
    scheduler = _section("SchedulerState", seq=Seq, entries=list[entry])
    services = _section("ServicesState", **services_models())
    return _section(
        "StateDocument",
        format=Literal[FORMAT],
        version=StrictStr,
        clock=Clock,
        ids=Ids,
        scheduler=scheduler,
        services=services,
    )


def validate(document: Any, payloads: Mapping[str, Any]) -> None:
    """Raises ValidationFailed naming the first path of ``document`` that breaks the format.

    ``payloads`` maps each scheduler kind the sandbox runs to the type of its payload."""
    if not isinstance(document, dict):
        raise ValidationFailed("state document must be a JSON object (an export of this sandbox)")
    # ``type() is int``: JSON ``true`` is no version, though Python takes it for 1.
    if type(document.get("format")) is not int or document["format"] != FORMAT:
        raise ValidationFailed(f"format must be {FORMAT} (an export of this sandbox)")
    entries = (
        document.get("scheduler", {}).get("entries")
        if isinstance(document.get("scheduler"), dict)
        else None
    )
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        kind = entry.get("kind") if isinstance(entry, dict) else None
        # Checked as a string first: an array or object cannot be looked up (unhashable).
        if isinstance(entry, dict) and (not isinstance(kind, str) or kind not in payloads):
            raise ValidationFailed(
                f"state document: scheduler.entries[{index}].kind must be one of "
                + ", ".join(sorted(payloads))
            )
    model = document_model(frozenset(payloads.items()))
    try:
        model.model_validate(document)
    except PydanticValidationError as exc:
        raise ValidationFailed("state document: " + describe(dict(exc.errors()[0]))) from None
    _check_ids(document)
    _check_counters(document)
    _check_unique(document)
    _check_shapes(document)
    _check_user_names(document)
    _check_urls(document)
    _check_prices(document)


def _check_ids(document: dict[str, Any]) -> None:
    """The id source must be one: its next draws distinct (core/ids.py)."""
    problem = degenerate_problem(document["ids"]["state"])
    if problem:
        raise ValidationFailed(f"state document: ids.{problem}")


#: Each counter of the document (the last sequence number given) and the lists whose records
#: it numbered: the next record made takes counter + 1.
_COUNTERS = (
    (("scheduler",), "seq", ("entries",)),
    (("services", "orders"), "seq", ("orders",)),
    (("services", "products"), "seq", ("products",)),
    (("services", "payouts"), "seq", ("withdrawals",)),
    (("services", "wallets"), "seq", ("entries", "transfers")),
    (("services", "webhookDeliveries"), "dueSeq", ("due",)),
)


def _check_counters(document: dict[str, Any]) -> None:
    """A counter below a record's ``seq`` would number the next records as ones already held:
    two queue entries of one due time and seq run in no creation order, two orders tie."""
    for where, counter, lists in _COUNTERS:
        section = document
        for name in where:
            section = section[name]
        path = ".".join(where)
        for name in lists:
            for index, record in enumerate(section[name]):
                if record["seq"] > section[counter]:
                    raise ValidationFailed(
                        f"state document: {path}.{counter} is {section[counter]}, below "
                        f"{path}.{name}[{index}].seq {record['seq']}: it must be at least the "
                        "largest seq of its records (the next one made takes it + 1)"
                    )


def _check_shapes(document: dict[str, Any]) -> None:
    """Each field of ``SHAPES`` (state_shapes.py) as the API makes and takes it."""
    services = document["services"]
    for section, name, _ in record_lists():
        cls = _class_of(section, name)
        fields = [f for (kind, f) in SHAPES if kind is cls]
        for index, record in enumerate(services[section][name]):
            for field in fields:
                # A field left out takes its record's default, which must fit as well (a
                # user without password_sha256 imported with "", and its export did not).
                given = field in record
                value = record[field] if given else _default_of(cls, field)
                problem = SHAPES[cls, field].problem(value) if value is not None else None
                if problem:
                    what = f"is {shown(value)}, which" if given else "is missing: it"
                    raise ValidationFailed(
                        f"state document: services.{section}.{name}[{index}].{field} {what} "
                        f"{problem} (the shape the API makes and takes)"
                    )
            for (kind, field), derived in DERIVED.items():
                if kind is cls and (problem := derived(record)):
                    raise ValidationFailed(
                        f"state document: services.{section}.{name}[{index}].{field} is "
                        f"{shown(record[field])}, which {problem}"
                    )
    for org, product in services["checkout"]["placeholders"].items():
        if not is_object_id(product):
            raise ValidationFailed(
                f"state document: services.checkout.placeholders[{shown(org)}] is "
                f"{shown(product)}, which must be {OBJECT_ID_SHAPE} (a product id)"
            )


def _default_of(cls: type, field: str) -> Any:
    """The default a record of ``cls`` gives ``field`` when the document leaves it out."""
    for found in dataclasses.fields(cls):
        if found.name == field:
            if found.default is not dataclasses.MISSING:
                return found.default
            if found.default_factory is not dataclasses.MISSING:
                return found.default_factory()
    return None


def _check_user_names(document: dict[str, Any]) -> None:
    """A handle and an email are one user's, as the control plane keeps them (409 on a taken
    one; emails without case): two users sharing one, the sign-in finds only the first."""
    seen: dict[tuple[str, str], int] = {}
    for index, user in enumerate(document["services"]["users"]["users"]):
        for name, value in (("handle", user["handle"]), ("email", email_key(user["email"]))):
            if (name, value) in seen:
                raise ValidationFailed(
                    f"state document: services.users.users[{index}].{name} repeats "
                    f"{shown(user[name])} (of users[{seen[name, value]}]; one user each)"
                )
            seen[name, value] = index


def _check_urls(document: dict[str, Any]) -> None:
    """The URLs the control plane checks: with the apps' rule (https, or http on a loopback
    host) a user's picture (issued as the ``picture`` claim), an app's website and logo (the
    consent page shows them) and its redirect URIs (no fragment); a webhook endpoint's URL.
    (An organization's redirect URLs are typed in ``_NARROWER``, by PATCH's own type.)"""
    services = document["services"]
    found: list[tuple[str, str, bool]] = []
    for index, user in enumerate(services["users"]["users"]):
        found.append((f"users.users[{index}].picture", user["picture"], True))
    for index, app in enumerate(services["oauthApps"]["apps"]):
        where = f"oauthApps.apps[{index}]"
        for name in ("website", "logo_url"):
            if app.get(name):
                found.append((f"{where}.{name}", app[name], True))
        for number, uri in enumerate(app["redirect_uris"]):
            found.append((f"{where}.redirect_uris[{number}]", uri, False))
    for where, uri, fragment in found:
        try:
            check_app_url(uri, where, fragment=fragment)
        except ValidationFailed as exc:
            raise ValidationFailed(f"state document: services.{exc.message}") from None
    # A webhook endpoint's URL as POST and PATCH take it (one the sender could not even read
    # made every later change of an endpoint a 500); an in-process receiver's is its own.
    for index, endpoint in enumerate(services["webhookEndpoints"]["endpoints"]):
        url = endpoint["url"]
        problem = None if url.startswith(INPROCESS_SCHEME) else http_url_problem(url)
        if problem:
            raise ValidationFailed(
                f"state document: services.webhookEndpoints.endpoints[{index}].url {problem}"
            )


def _check_prices(document: dict[str, Any]) -> None:
    """A product's price as create and PATCH leave it (a fixed one has an amount): a checkout
    of a fixed product of no amount would otherwise go through."""
    for index, p in enumerate(document["services"]["products"]["products"]):
        amounts = (p.get("amount"), p.get("minimum_amount"), p.get("default_amount"))
        problem = price_problem(p["pricing_model"], *amounts, RECORD_PRICE)
        if problem:
            raise ValidationFailed(f"state document: services.products.products[{index}].{problem}")


#: The fields that tell apart the records of a kind with no ``id`` field. Every list of records
#: in the format is checked for a repeated key (``record_lists``); a kind with neither an ``id``
#: nor a row here fails that check's first use, and tests/test_state_format.py lists them all.
_KEYS: dict[type, tuple[str, ...]] = {
    ApiToken: ("token",),
    Attempt: ("delivery_id", "number"),  # the journal: attempt n of a delivery happens once
    DueAttempt: ("delivery_id", "number"),  # a repeated one would be POSTed twice
    IdempotencyRecord: ("org_id", "key"),
    Trigger: ("environment", "phone"),
    App: ("client_id",),
    SigningKey: ("kid",),
    AccessToken: ("jti",),
    RefreshToken: ("token_sha256",),
    AuthCode: ("code_sha256",),
    BrowserSession: ("session_sha256",),
}


def record_key(cls: type) -> tuple[str, ...]:
    """The fields that identify one record of ``cls`` among its list."""
    if cls in _KEYS:
        return _KEYS[cls]
    if "id" in {item.name for item in dataclasses.fields(cls)}:
        return ("id",)
    raise TypeError(f"{cls.__name__} records have no key: name its fields in _KEYS")


@cache
def record_lists() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Each list of records of ``services`` as ``(service, list, key fields)``, read off the
    format's models, so a new list is checked for repeated keys without a line here."""
    lists = []
    for section, model in services_models().items():
        for name, info in model.model_fields.items():
            args = get_args(info.annotation) if get_origin(info.annotation) is list else ()
            if args and args[0] in _DATACLASS_OF:
                lists.append((section, name, record_key(_DATACLASS_OF[args[0]])))
    return tuple(lists)


#: Keys besides the one of ``record_key`` that a service indexes its records by on import: a
#: second record with one of these would silently overwrite the first in the index (or be out
#: of reach behind it), so each holds once too. ``_FOLDED`` fields compare as the service looks
#: them up (emails without case). A key whose fields are all null is no key (a code not
#: redeemed yet names no grant).
_ALSO_UNIQUE: dict[type, tuple[tuple[str, ...], ...]] = {
    # the idempotency index of POST /wallet/send (wallet/ledger.py ``_index``)
    Transfer: (("sender_id", "client_id", "idempotency_key"),),
    # GET /api/products/p_..., the hosted page /p/<token> and a checkout by token
    Product: (("checkout_token",),),
    # access tokens are kept under the digest of their value (identity/tokens.py)
    AccessToken: (("token_sha256",),),
    # the code a grant was redeemed from, revoked with it (identity/grants.py)
    AuthCode: (("grant_id",),),
    # customers are upserted per (organization, environment, email) (commerce/customers.py)
    Customer: (("org_id", "environment", "email"),),
    # an attempt out is kept by its seq until its outcome (webhooks/delivery.py ``sending``)
    DueAttempt: (("seq",),),
}
_FOLDED: dict[tuple[type, str], Callable[[str], str]] = {(Customer, "email"): email_key}


def _repeat(where: str, index: int, key: tuple[str, ...], value: tuple[Any, ...]) -> str:
    if len(key) == 1:
        return f"{where}[{index}].{key[0]} repeats {shown(value[0])}"
    pairs = ", ".join(f"{f} {shown(v)}" for f, v in zip(key, value, strict=True))
    return f"{where}[{index}] repeats {pairs}"


def _check_unique(document: dict[str, Any]) -> None:
    """Records are keyed on import: two with one key would silently become one (or two
    where the emulator makes one: a funding entry counted twice, a key listed twice)."""
    services = document["services"]
    for section, name, key in record_lists():
        cls = _class_of(section, name)
        keys = (key, *_ALSO_UNIQUE.get(cls, ()))
        seen: dict[tuple[Any, ...], int] = {}
        for index, record in enumerate(services[section][name]):
            for fields in keys:
                value = _key_value(cls, record, fields)
                if all(v is None for v in value):
                    continue
                if (fields, value) in seen:
                    shown_value = tuple(record.get(f) for f in fields)
                    repeated = _repeat(f"services.{section}.{name}", index, fields, shown_value)
                    first = seen[fields, value]
                    raise ValidationFailed(
                        f"state document: {repeated} (of {name}[{first}]; each record once)"
                    )
                seen[fields, value] = index


def _key_value(cls: type, record: dict[str, Any], fields: tuple[str, ...]) -> tuple[Any, ...]:
    """The values of ``fields`` of ``record`` as its service compares them (``_FOLDED``)."""
    value = []
    for field in fields:
        item = record.get(field)
        fold = _FOLDED.get((cls, field))
        value.append(fold(item) if fold is not None and item is not None else item)
    return tuple(value)


@cache
def _class_of(section: str, name: str) -> type:
    """The dataclass of the records of ``services.<section>.<name>``."""
    info = services_models()[section].model_fields[name]
    return _DATACLASS_OF[get_args(info.annotation)[0]]


def schema(payloads: Mapping[str, Any]) -> dict[str, Any]:
    """The format as JSON Schema (served at GET /_sandbox/state/schema)."""
    return document_model(frozenset(payloads.items())).model_json_schema()
