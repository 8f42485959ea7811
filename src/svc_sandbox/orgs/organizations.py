"""Organizations, their settings as the dashboard would set them, and their API tokens."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import NotFound, Unauthorized, ValidationFailed, found
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot


class Environment(StrEnum):
    SANDBOX = "sandbox"
    PRODUCTION = "production"


class KycStatus(StrEnum):
    NOT_STARTED = "not_started"
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


#: An API token (docs/spec-gaps.md "Token shape"): the API's check, the client's and the tool
#: server's (client/commerce.py: is_api_token, redact).
TOKEN_SHAPE = re.compile(r"svc_(test|live)_[A-Za-z0-9]{8,128}")
#: 401 for a token retired by an earlier switch whose environment is the current one again.
RETIRED_MESSAGE = (
    "This token was created before the organization switched environment. Create a new token."
)


#: Decimal places a custom fee rate may have. A finer rate changes no fee (fees are rounded
#: to whole santim), and the answer writes the rate out in full.
MAX_RATE_PLACES = 30
#: Redirect URLs an organization may register (each tokenless checkout's ``successUrl`` is
#: matched against them).
MAX_REDIRECT_URLS = 100


def rate_text(rate: Decimal | None) -> str | None:
    """A rate (None: the platform's) as its exact decimal string without an exponent: 1E-30
    is written 0.000000000000000000000000000001. A string, not a JSON number: most clients
    read a number as a float, which cannot hold every decimal rate exactly. A zero with a huge
    exponent (``0E+999999``, a rate of 0) keeps its short form, not a huge one."""
    if rate is None:
        return None
    if rate.is_zero():
        rate = rate.copy_abs()  # -0.0 (a JSON number may have the sign) is the rate 0
    exponent = rate.as_tuple().exponent
    if isinstance(exponent, int) and abs(exponent) <= MAX_RATE_PLACES:
        return format(rate, "f")
    return str(rate)


def rate_problem(rate: Decimal) -> str | None:
    """What keeps ``rate`` from being a fee rate (None: nothing): a fraction from 0 to 1 with at
    most ``MAX_RATE_PLACES`` decimal places. The control plane's PATCH and a state import both
    ask here, so an imported organization holds only rates a PATCH could have set."""
    if rate < 0:
        return "must be greater than or equal to 0"
    if rate > 1:
        return "must be less than or equal to 1"
    exponent = rate.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -MAX_RATE_PLACES:
        return f"must have at most {MAX_RATE_PLACES} decimal places"
    return None


def check_rate(rate: Decimal) -> None:
    problem = rate_problem(rate)
    if problem:
        raise ValidationFailed(f"customFeeRate {problem}")


@dataclass
class Organization:
    id: str
    name: str
    environment: Environment
    developer_mode: bool
    kyc: KycStatus
    created_at: datetime
    #: Withdrawal fee rate as a fraction (0.07 = 7%); None means the platform default.
    custom_fee_rate: Decimal | None = None
    redirect_urls: list[str] = field(default_factory=list)

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "environment": self.environment.value,
            "developerMode": self.developer_mode,
            "kyc": self.kyc.value,
            "customFeeRate": rate_text(self.custom_fee_rate),
            "redirectUrls": list(self.redirect_urls),
            "createdAt": isoformat(self.created_at),
        }


@dataclass
class ApiToken:
    token: str
    org_id: str
    environment: Environment
    name: str
    created_at: datetime
    revoked: bool = False
    #: Its organization switched away from its environment: it stops working for good
    #: (spec §5.2), also after a switch back.
    retired: bool = False

    @property
    def usable(self) -> bool:
        return not (self.revoked or self.retired)

    def to_public(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "organizationId": self.org_id,
            "environment": self.environment.value,
            "name": self.name,
            "revoked": self.revoked,
            "retired": self.retired,
            "usable": self.usable,
            "createdAt": isoformat(self.created_at),
        }


@dataclass(frozen=True)
class Principal:
    """Who a commerce request acts for: an organization, in the environment of its token."""

    org: Organization
    token: ApiToken

    @property
    def environment(self) -> Environment:
        return self.token.environment


class OrganizationService(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.orgs: dict[str, Organization] = {}
        self.tokens: dict[str, ApiToken] = {}

    @locked
    def create(
        self,
        name: str,
        environment: Environment = Environment.SANDBOX,
        developer_mode: bool = True,
        kyc: KycStatus = KycStatus.NOT_STARTED,
    ) -> Organization:
        if not name or len(name) > 120:
            raise ValidationFailed("name must be 1 to 120 characters")
        org = Organization(
            id=self.ids.object_id(self.orgs),
            name=name,
            environment=Environment(environment),
            developer_mode=developer_mode,
            kyc=KycStatus(kyc),
            created_at=self.clock.now(),
        )
        self.orgs[org.id] = org
        return org

    @locked
    def get(self, org_id: str) -> Organization:
        return found(self.orgs.get(org_id), f"organization {org_id} not found")

    @locked
    def all(self) -> list[Organization]:
        return list(self.orgs.values())

    @locked
    def update(
        self,
        org_id: str,
        *,
        environment: Environment | None = None,
        developer_mode: bool | None = None,
        kyc: KycStatus | None = None,
        custom_fee_rate: Decimal | None | bool = False,
        redirect_urls: list[str] | None = None,
        name: str | None = None,
    ) -> Organization:
        """Changes what the dashboard would change. ``custom_fee_rate=False`` leaves it as is."""
        org = self.get(org_id)
        if isinstance(custom_fee_rate, Decimal):
            check_rate(custom_fee_rate)  # before any change: a refused PATCH changes nothing
        if name is not None:
            org.name = name
        if environment is not None and Environment(environment) is not org.environment:
            self._retire_tokens(org)
            org.environment = Environment(environment)
        if developer_mode is not None:
            org.developer_mode = developer_mode
        if kyc is not None:
            org.kyc = kyc
        if custom_fee_rate is not False:
            org.custom_fee_rate = custom_fee_rate  # type: ignore[assignment]
        if redirect_urls is not None:
            org.redirect_urls = list(redirect_urls)
        return org

    def _retire_tokens(self, org: Organization) -> None:
        """Spec §5.2: a switch stops the tokens of the environment left, for good."""
        for token in self.tokens.values():
            if token.org_id == org.id and token.environment is org.environment:
                token.retired = True

    @locked
    def create_token(self, org_id: str, name: str = "default") -> ApiToken:
        org = self.get(org_id)
        token = ApiToken(
            token=self.ids.api_token(org.environment.value, self.tokens),
            org_id=org.id,
            environment=org.environment,
            name=name,
            created_at=self.clock.now(),
        )
        self.tokens[token.token] = token
        return token

    @locked
    def revoke_token(self, token: str) -> ApiToken:
        found = self.tokens.get(token)
        if found is None:
            raise NotFound("token not found")
        found.revoked = True
        return found

    @locked
    def tokens_of(self, org_id: str) -> list[ApiToken]:
        return [t for t in self.tokens.values() if t.org_id == org_id]

    @locked
    def authenticate(self, token: str) -> Principal:
        """The organization a bearer token acts for, or 401 as spec section 5 words it."""
        if not TOKEN_SHAPE.fullmatch(token):  # whole: "$" would let a final newline through
            raise Unauthorized("Malformed API token: expected svc_test_... or svc_live_...")
        found = self.tokens.get(token)
        if found is None:
            raise Unauthorized("Invalid API token")
        if found.revoked:
            raise Unauthorized("This API token has been revoked")
        org = self.orgs[found.org_id]
        if found.environment is not org.environment:
            raise Unauthorized(
                f"This token was created for the {found.environment.value} environment, but the "
                f"organization is now in {org.environment.value}. Create a new token."
            )
        if found.retired:
            raise Unauthorized(RETIRED_MESSAGE)
        return Principal(org=org, token=found)

    def export(self) -> dict[str, Any]:
        return {
            "orgs": [snapshot(o) for o in self.orgs.values()],
            "tokens": [snapshot(t) for t in self.tokens.values()],
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.orgs = {o["id"]: from_json(Organization, o) for o in data["orgs"]}
        self.tokens = {t["token"]: from_json(ApiToken, t) for t in data["tokens"]}
        for token in self.tokens.values():
            # An export without ``retired`` (older versions): a token of another environment
            # than its organization's can only be there because the organization switched.
            org = self.orgs.get(token.org_id)
            if org is not None and token.environment is not org.environment:
                token.retired = True
