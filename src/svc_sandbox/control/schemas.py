"""Bodies of the control plane's core routes."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictStr,
)

from svc_sandbox.commerce.schemas import NoNulls, Uri
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.journal import JournalFilter
from svc_sandbox.core.numbers import EXPONENT_TEXT, decimal_text
from svc_sandbox.core.validation import query_integer
from svc_sandbox.orgs.organizations import MAX_REDIRECT_URLS, Environment, KycStatus


def _ascii_rate(value: Any) -> Any:
    """A rate sent as a string is a JSON number's text in ASCII digits (``"0.05"``,
    ``"1.5E-7"``; core/numbers.py): pydantic's Decimal would also take ``"٠.٠٥"``, ``"0.0_5"``
    and ``" 0.05 "``. A JSON number goes on as it is."""
    if not isinstance(value, str):
        return value
    rate = decimal_text(value, exponent=True)
    if rate is None:
        raise ValueError(f"must be {EXPONENT_TEXT}")
    return rate


class Strict(BaseModel):
    # defer_build: each model builds its validator on first use, not at start-up.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class AdvanceBody(Strict):
    #: A number of seconds, or a string such as "90s", "30m", "1h30m", "2d": checked by
    #: ``core.durations.parse_duration``, whose message names both forms (``true`` included).
    duration: Any = None
    #: Strict: ``true`` and ``"30"`` are not numbers of seconds (an int is).
    seconds: StrictFloat | None = Field(default=None, ge=0)


class SetClockBody(Strict):
    now: StrictStr


class OrganizationCreateBody(Strict):
    name: Annotated[StrictStr, Field(min_length=1, max_length=120)]
    environment: Environment = Environment.SANDBOX
    developerMode: StrictBool = True
    kyc: KycStatus = KycStatus.APPROVED
    #: Create an API token at once (returned in ``tokens``).
    withToken: StrictBool = True


class OrganizationUpdateBody(NoNulls):
    #: null is refused (it changed nothing and answered 200) except the fee rate's, which
    #: goes back to the platform default.
    nullable = frozenset({"customFeeRate"})

    name: Annotated[StrictStr, Field(min_length=1, max_length=120)] | None = None
    environment: Environment | None = None
    developerMode: StrictBool | None = None
    kyc: KycStatus | None = None
    #: A fraction, 0.05 = 5%; null goes back to the platform default. Its range and places
    #: are the organization's rule (orgs/organizations.py: ``rate_problem``).
    customFeeRate: Annotated[Decimal, BeforeValidator(_ascii_rate)] | None = None
    redirectUrls: Annotated[list[Uri], Field(max_length=MAX_REDIRECT_URLS)] | None = None


class TokenCreateBody(Strict):
    name: Annotated[StrictStr, Field(min_length=1, max_length=80)] = "default"


class ReviewBody(Strict):
    #: Shown as the withdrawal's ``note`` (a rejection defaults to "Rejected in review").
    note: Annotated[StrictStr, Field(min_length=1, max_length=500)] | None = None


class WithdrawalListQuery(Strict):
    """``GET /_sandbox/withdrawals``: any other parameter is a 400 naming it (as the event log
    and the webhook journal refuse theirs), so a misspelt filter never lists everything."""

    #: The organization, named ``orgId`` as on the other control routes; ``org`` (the name
    #: first documented) is the same filter.
    orgId: StrictStr | None = None
    org: StrictStr | None = None
    status: StrictStr | None = None
    page: StrictStr | None = None  # read by core/pagination.py
    limit: StrictStr | None = None

    def organization(self) -> str | None:
        if self.orgId is not None and self.org is not None and self.orgId != self.org:
            raise ValidationFailed("orgId and org are the same filter: send one")
        return self.orgId if self.orgId is not None else self.org


#: A control-plane list's ``limit`` when absent, and its largest.
CONTROL_LIMIT, MAX_CONTROL_LIMIT = 100, 1000


def control_limit(raw: str | None) -> int:
    """A control-plane list's ``limit`` (``/clock``, ``/requests``, ``/webhooks/attempts``),
    read as every query integer is."""
    return query_integer(raw, "limit", CONTROL_LIMIT, MAX_CONTROL_LIMIT)


class JournalQuery(Strict):
    """``GET /_sandbox/requests`` and the dashboard's Requests page: another parameter is a 400
    naming it, as on the other lists (a misspelt filter never shows everything)."""

    limit: StrictStr | None = None
    method: StrictStr | None = None
    status: StrictStr | None = None
    path: StrictStr | None = None

    def only(self) -> JournalFilter:
        return JournalFilter.of(self.method, self.status, self.path)


class OwnerWalletBody(Strict):
    #: False makes POST /withdrawals of the organization answer 402 until set back to true.
    canCover: StrictBool
