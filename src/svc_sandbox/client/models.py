"""The spec's resources (§2) as pydantic models, as the client returns them.

Attributes are snake_case; the wire names (camelCase, ``_id``) are their aliases. Every model
keeps fields it does not know (``model_extra``): the spec lets fields grow (§9.3) and Order
allows additional properties. ``to_wire()`` gives the wire document back (``model_dump``
gives the attributes: defaults for absent fields, datetimes, a failure's normalised code).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, field_serializer
from pydantic.alias_generators import to_camel

from svc_sandbox.core.clock import isoformat

Gateway = Literal["telebirr", "mpesa", "cbe"]
PricingModel = Literal["fixed", "pwyw", "free"]
ProductStatus = Literal["draft", "published", "archived"]
OrderStatus = Literal["pending", "paid", "failed"]
WithdrawalStatus = Literal[
    "pending", "reviewing", "approved", "rejected", "processing", "completed"
]

#: Session failure codes of spec §7; any other is treated like ``payment_failed`` (§9.3).
FAILURE_CODES = (
    "payment_rejected",
    "payment_failed",
    "payment_canceled",
    "payment_timed_out",
    "initiate_failed",
    "session_expired",
)


#: The serialization context under which a model dumps what the service sent.
WIRE = "wire"


class Resource(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, alias_generator=to_camel)

    def to_wire(self) -> dict[str, Any]:
        """The document as the API sent it: wire names, only the fields the answer had (those
        the client does not model included), timestamps in the API's own format
        (``...T00:30:00.000Z``) and failure codes as sent."""
        document: dict[str, Any] = _timestamps(
            self.model_dump(by_alias=True, exclude_unset=True, context={WIRE: True})
        )
        return document


def _timestamps(value: Any) -> Any:
    if isinstance(value, datetime):
        return isoformat(value)
    if isinstance(value, dict):
        return {key: _timestamps(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_timestamps(item) for item in value]
    return value


class Price(Resource):
    type: str | None = None
    amount: int | None = None
    minimum_amount: int | None = None
    default_amount: int | None = None
    currency: str | None = None


class Product(Resource):
    id: str = Field(alias="_id")
    checkout_token: str
    title: str
    description: str | None = None
    pricing_model: str
    product_type: str | None = None
    status: str
    media: list[str] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None


class ProductListItem(Product):
    price: Price | None = None
    url: str | None = None


class ProductResponse(Resource):
    product: Product
    price: Price | None = None
    url: str | None = None


class ArchivedProduct(Resource):
    product: Product
    url: str | None = None


T = TypeVar("T", bound=BaseModel)


class Page(Resource, Generic[T]):
    items: list[T]
    total: int
    page: int
    limit: int


class CheckoutResult(Resource):
    """Either shape of POST /checkout: free (``order_id``) or paid (``checkout_url``, ``mode``)."""

    session_id: str
    order_id: str | None = None
    checkout_url: str | None = None
    mode: Literal["redirect", "direct"] | None = None

    @property
    def free(self) -> bool:
        return self.mode is None and self.order_id is not None


class CheckoutFailure(Resource):
    """Why a session or attempt failed. ``code`` is what the client acts on: an unknown code
    reads ``payment_failed`` (spec §9.3); ``raw_code`` keeps what the service sent, and
    ``to_wire()`` gives that back."""

    code: str
    message: str = ""
    raw_code: str = Field(default="", exclude=True)

    def model_post_init(self, context: Any, /) -> None:
        self.raw_code = self.code
        if self.code not in FAILURE_CODES:
            self.code = "payment_failed"

    @field_serializer("code")
    def _code(self, code: str, info: SerializationInfo) -> str:
        wire = isinstance(info.context, dict) and info.context.get(WIRE)
        return self.raw_code if wire and self.raw_code else code


class CheckoutAttempt(Resource):
    in_flight: bool
    last_failure: CheckoutFailure | None = None


class CheckoutStatus(Resource):
    session_id: str
    status: Literal["open", "completed", "expired"] | str
    expires_at: datetime
    amount: int | None = None
    currency: str = "ETB"
    order_id: str | None = None
    order_status: str | None = None
    failure: CheckoutFailure | None = None
    attempt: CheckoutAttempt | None = None

    @property
    def done(self) -> bool:
        """Completed or expired: nothing more will happen to this session."""
        return self.status in ("completed", "expired")

    @property
    def paid(self) -> bool:
        return self.status == "completed" and self.order_id is not None


class OrderProduct(Resource):
    id: str | None = Field(default=None, alias="_id")
    title: str | None = None


class OrderCustomer(Resource):
    id: str | None = Field(default=None, alias="_id")
    email: str | None = None
    name: str | None = None


class Order(Resource):
    id: str = Field(alias="_id")
    checkout_session_id: str | None = None
    product_id: OrderProduct | None = None
    customer_id: OrderCustomer | None = None
    amount: int
    currency: str
    status: str
    environment: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    paid_at: datetime | None = None
    created_at: datetime | None = None
    description: str | None = None


class Balance(Resource):
    success: bool | None = None
    eligible: bool
    balance_minor: int
    currency: str


class Withdrawal(Resource):
    id: str = Field(alias="_id")
    status: str
    amount: int
    fee_amount: int
    tax_amount: int
    net_amount: int
    currency: str
    gateway: str
    account: str
    created_at: datetime | None = None
    note: str | None = None
    idempotency_key: str | None = None


class WebhookEvent(Resource):
    """A verified webhook's envelope (spec §6; docs/webhooks.md)."""

    id: str
    object: str = "event"
    type: str
    created: datetime | None = None
    environment: str | None = None
    organization_id: str | None = None
    #: Required: "The event envelope exposes at least type and data" (§6).
    data: dict[str, Any]


# --- identity provider and wallet (spec §2, §4, §5) -------------------------------------


class OAuthDocument(BaseModel):
    """An OAuth/OIDC answer: snake_case on the wire already, every field kept."""

    model_config = ConfigDict(extra="allow")


class ProviderMetadata(OAuthDocument):
    """The discovery document (spec §4: clients read it at run time)."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str | None = None
    introspection_endpoint: str | None = None
    revocation_endpoint: str | None = None
    id_token_signing_alg_values_supported: list[str] = Field(default_factory=lambda: ["RS256"])


class TokenSet(OAuthDocument):
    access_token: str
    token_type: str
    expires_in: int
    scope: str
    id_token: str | None = None
    #: Only when ``offline_access`` was granted; rotated on each use.
    refresh_token: str | None = None

    @property
    def scopes(self) -> list[str]:
        """The granted scopes (authoritative: may be fewer than requested)."""
        return self.scope.split()


class UserInfo(OAuthDocument):
    """The claims of the granted scopes; ``{claims_namespace}/handle`` is kept as extra."""

    sub: str


class Introspection(OAuthDocument):
    active: bool


class WalletBalance(Resource):
    currency: str
    available_minor: int
    total_minor: int


class Transfer(Resource):
    id: str
    amount_minor: int
    currency: str
    recipient_user_id: str
    status: str
    created_at: datetime | None = None


class TransferResult(Resource):
    transfer: Transfer
    #: True when the idempotency key was seen before: the original transfer, no money moved.
    deduped: bool
