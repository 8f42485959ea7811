"""Request bodies of the commerce API as pydantic models: the types and bounds of spec §4.

Rules that span fields (a fixed price needs ``price.amount``, locked fields) live in the
domain modules, not here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationInfo,
    field_validator,
)

from svc_sandbox.commerce.checkout_input import (
    check_checkout_link,
    check_email,
    metadata_key_problem,
    normalize_phone,
)
from svc_sandbox.commerce.fees import MAX_MINOR
from svc_sandbox.commerce.payments import provider_decision
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.validation import http_url_problem, success_url_problem

Money = Annotated[StrictInt, Field(ge=0, le=MAX_MINOR)]


def refusing(problem_of: Callable[[str], str | None]) -> AfterValidator:
    """A validator raising what ``problem_of`` finds (pydantic words it under the field)."""

    def check(value: str) -> str:
        problem = problem_of(value)
        if problem:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


def _trimmed_title(value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= 120:
        raise ValueError("must be 1 to 120 characters")
    return value


Uri = Annotated[StrictStr, refusing(http_url_problem)]
#: Where a buyer goes after paying: any absolute URI but a browser's own schemes (an app's
#: deep link included), where the sandbox's other URLs are http(s) (it calls or shows them).
SuccessUri = Annotated[StrictStr, refusing(success_url_problem)]
#: A product's images: the contract's Media (absolute http(s) URLs, at most 20).
Media = Annotated[list[Uri], Field(max_length=20)]
Title = Annotated[StrictStr, AfterValidator(_trimmed_title)]
Description = Annotated[StrictStr, Field(max_length=5000)]

#: Worded as checkout's metadata (``metadata keys must be 1 to 40 characters``).
MetadataKey = Annotated[StrictStr, refusing(metadata_key_problem)]
ProductMetadata = Annotated[
    dict[MetadataKey, Annotated[StrictStr, Field(max_length=500)]], Field(max_length=20)
]
PricingModel = Literal["fixed", "pwyw", "free"]


class Strict(BaseModel):
    # defer_build: each model builds its validator on first use, not at start-up.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class NoNulls(Strict):
    """Product bodies: a field is sent with a value or left out; ``null`` is never a value
    (the contract types none of them as nullable), except the fields listed in ``nullable``."""

    nullable: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="before")
    @classmethod
    def _refuse_null(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.field_name not in cls.nullable:
            raise ValueError("must not be null")
        return value


class PriceBody(NoNulls):
    amount: Money | None = None
    minimumAmount: Money | None = None
    defaultAmount: Money | None = None
    # Accepted so that a client echoing a Price back is not refused; changing it is a 422.
    type: StrictStr | None = None
    currency: Literal["ETB"] | None = None


class ProductCreateBody(NoNulls):
    nullable = frozenset({"price"})  # null: no price (as when left out)

    title: Title
    pricingModel: PricingModel
    price: PriceBody | None = None
    description: Description | None = None
    media: Media | None = None
    metadata: ProductMetadata | None = None
    status: Literal["draft", "published"] = "draft"
    productType: Literal["one_time"] | None = None


class ProductUpdateBody(NoNulls):
    title: Title | None = None
    description: Description | None = None
    media: Media | None = None
    metadata: ProductMetadata | None = None
    status: Literal["draft", "published", "archived"] | None = None
    price: PriceBody | None = None
    # Locked: present only so that a change can be answered 422 rather than 400.
    pricingModel: StrictStr | None = None
    productType: StrictStr | None = None


# --- checkout (§4 POST /checkout, payment link attempts) -----------------------------------

Gateway = Literal["telebirr", "mpesa", "cbe"]


def provider_decision_type(allowed: tuple[str, ...]) -> Any:
    """A provider decision as the control plane takes it (``payments.provider_decision``): one
    of ``allowed`` or a new failure code (a state import's push outcome, trigger code, plan)."""

    def check(value: str) -> str:
        try:
            return provider_decision(value, allowed, "")
        except ValidationFailed as exc:
            raise ValueError(exc.message.strip()) from None

    return Annotated[StrictStr, AfterValidator(check)]


Email = Annotated[StrictStr, AfterValidator(check_email)]
Phone = Annotated[StrictStr, AfterValidator(normalize_phone)]
CheckoutLinkToken = Annotated[StrictStr, AfterValidator(check_checkout_link)]


class CustomerBody(NoNulls):
    email: Email | None = None
    phone: Phone | None = None
    name: Annotated[StrictStr, Field(max_length=120)] | None = None
    externalId: Annotated[StrictStr, Field(min_length=1, max_length=200)] | None = None


class CheckoutBody(NoNulls):
    """Both body shapes of POST /checkout. ``amount``, ``description`` and ``metadata`` are
    left untyped here: §7 quotes their messages, so commerce/checkout_input.py checks them
    (``null`` included)."""

    nullable = frozenset({"amount", "description", "metadata"})

    productId: StrictStr | None = None
    customer: CustomerBody | None = None
    gateway: Gateway | None = None
    successUrl: SuccessUri | None = None
    metadata: Any = None
    amount: Any = None
    description: Any = None
    collectedFields: dict[str, Any] | None = None
    #: Shape-checked on both body shapes (a custom amount ignores a well-formed one, §4).
    checkoutLink: CheckoutLinkToken | None = None


class PayBody(NoNulls):
    """One payment-link attempt (POST {pay_url}/{payToken}): JSON or the page's form."""

    gateway: Gateway
    phone: Phone
    email: Email | None = None
    name: Annotated[StrictStr, Field(max_length=120)] | None = None


# --- withdrawals (§4 POST /withdrawals) ------------------------------------------------------

MIN_WITHDRAWAL = 10_000  # spec §8: 100.00 ETB


class HostedConfirmBody(NoNulls):
    """The emulated provider page's confirm form: the phone the buyer pays from."""

    phone: Phone


class WithdrawalCreateBody(Strict):
    """POST /withdrawals: all three fields required, ``amount`` gross santim, ``account`` a
    phone in one of the §2 formats (stored as 2519XXXXXXXX, like a customer's phone)."""

    amount: Annotated[StrictInt, Field(ge=MIN_WITHDRAWAL, le=MAX_MINOR)]
    gateway: Gateway
    account: Phone
