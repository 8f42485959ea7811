"""Bodies of the checkout control-plane routes (control/checkout_api.py)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from svc_sandbox.commerce.checkout_links import MAX_FIELD_OPTIONS, MAX_FIELD_PRODUCTS
from svc_sandbox.commerce.payments import MAX_INITIATE_FAILURES
from svc_sandbox.commerce.schemas import NoNulls, SuccessUri


class Strict(BaseModel):
    # defer_build: each model builds its validator on first use, not at start-up.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class FailBody(Strict):
    code: StrictStr = "payment_failed"
    #: Buyer-safe message; defaults to the emulator's text for the code.
    message: Annotated[StrictStr, Field(min_length=1, max_length=500)] | None = None


class ProviderBody(Strict):
    productionPushOutcome: StrictStr | None = None
    #: Bounds are the provider's rule (payments.configure), so the in-process API has them too.
    productionPushDelaySeconds: StrictFloat | None = None


class FaultsBody(Strict):
    #: The provider refuses the next N paid checkouts with 502 {error}.
    refuseCheckouts: Annotated[StrictInt, Field(ge=0, le=10_000)] = 0
    refuseMessage: Annotated[StrictStr, Field(min_length=1, max_length=500)] | None = None
    #: The next attempts fail with ``initiate_failed``, one reason per attempt, in order. The
    #: answer's name; ``initiateFailed`` (the first name) is still read.
    initiateFailures: Annotated[
        list[Annotated[StrictStr, Field(min_length=1, max_length=500)]],
        Field(
            max_length=MAX_INITIATE_FAILURES,
            validation_alias=AliasChoices("initiateFailures", "initiateFailed"),
        ),
    ] = []


class CheckoutLinkBody(Strict):
    productIds: Annotated[list[StrictStr], Field(min_length=1, max_length=100)]
    metadata: Any = None
    successUrl: SuccessUri | None = None
    active: StrictBool = True
    name: Annotated[StrictStr, Field(min_length=1, max_length=120)] | None = None


class CheckoutLinkUpdateBody(NoNulls):
    #: null clears these (no Continue link once paid; no metadata); elsewhere it is refused.
    nullable = frozenset({"successUrl", "metadata"})

    productIds: Annotated[list[StrictStr], Field(min_length=1, max_length=100)] | None = None
    metadata: Any = None
    successUrl: SuccessUri | None = None
    active: StrictBool | None = None


FieldLabel = Annotated[StrictStr, Field(min_length=1, max_length=120)]
FieldOption = Annotated[StrictStr, Field(min_length=1, max_length=120)]
FieldOptions = Annotated[list[FieldOption], Field(max_length=MAX_FIELD_OPTIONS)]
FieldProducts = Annotated[list[StrictStr], Field(max_length=MAX_FIELD_PRODUCTS)]


class CheckoutFieldBody(Strict):
    label: FieldLabel
    type: StrictStr = "text"
    required: StrictBool = False
    productIds: FieldProducts = []
    options: FieldOptions = []


class CheckoutFieldUpdateBody(Strict):
    label: FieldLabel | None = None
    type: StrictStr | None = None
    required: StrictBool | None = None
    productIds: FieldProducts | None = None
    options: FieldOptions | None = None
