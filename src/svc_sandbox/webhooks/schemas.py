"""Bodies and query parameters of the webhook control-plane routes (control/webhooks_api.py).

Types only: the rules (http(s) URLs, non-empty secrets, known event types) live in
webhooks/endpoints.py and webhooks/events.py, so the in-process API checks them too.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StrictBool, StrictInt, StrictStr

from svc_sandbox.commerce.schemas import NoNulls
from svc_sandbox.control.schemas import CONTROL_LIMIT, Strict, control_limit
from svc_sandbox.core.errors import ValidationFailed

Description = Annotated[StrictStr, Field(max_length=500)]


class EndpointCreateBody(Strict):
    #: The organization; default: the default sandbox organization.
    orgId: StrictStr | None = None
    url: StrictStr
    #: Default: the sandbox's webhook secret when set, else a generated ``whsec_…``.
    secret: StrictStr | None = None
    #: Event types to deliver; empty or absent: every type.
    eventTypes: list[StrictStr] | None = None
    enabled: StrictBool = True
    description: Description = ""


class EndpointUpdateBody(NoNulls):
    """A field left out is left as it is; ``null`` is refused (400 naming the field), except
    for ``description``, where it clears the description."""

    nullable = frozenset({"description"})

    url: StrictStr | None = None
    secret: StrictStr | None = None
    eventTypes: list[StrictStr] | None = None
    enabled: StrictBool | None = None
    description: Description | None = None


class RedeliverBody(Strict):
    #: Only this endpoint; default: every enabled endpoint of the organization that takes it.
    endpointId: StrictStr | None = None


class ReceiverFaultBody(Strict):
    count: Annotated[StrictInt, Field(ge=0, le=100_000)]
    #: True: still POST to the receiver, but count the attempt as failed.
    send: StrictBool = False


class TriggerBody(Strict):
    type: StrictStr
    orgId: StrictStr | None = None
    #: Fields replacing the example data of the type.
    data: dict[str, Any] | None = None


class EventLogQuery(Strict):
    orgId: str | None = None
    type: str | None = None
    sessionId: str | None = None


class EndpointQuery(Strict):
    orgId: str | None = None


class DeliveryQuery(Strict):
    orgId: str | None = None
    endpointId: str | None = None
    eventId: str | None = None
    eventType: str | None = None
    status: Literal["pending", "succeeded", "failed"] | None = None


def _attempts_limit(value: Any) -> int:
    """``limit`` read as every other control list reads it (``control_limit``), so a bad one
    is worded as theirs (``limit must be an integer between 1 and 1000``)."""
    try:
        return control_limit(str(value))
    except ValidationFailed as exc:
        raise ValueError(exc.message.removeprefix("limit ")) from None


class AttemptQuery(Strict):
    orgId: str | None = None
    endpointId: str | None = None
    eventId: str | None = None
    deliveryId: str | None = None
    eventType: str | None = None
    outcome: Literal["succeeded", "failed"] | None = None
    limit: Annotated[int, BeforeValidator(_attempts_limit)] = CONTROL_LIMIT
