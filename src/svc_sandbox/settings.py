"""Settings: URL roots, seed, clock, switches. Precedence: defaults < SVC_SANDBOX_* env < flags."""

from __future__ import annotations

import difflib
import functools
import ipaddress
import os
from collections.abc import Mapping
from datetime import timedelta
from decimal import Decimal
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from svc_sandbox.commerce.payments import PUSH_OUTCOMES, provider_decision
from svc_sandbox.core.clock import ClockMode, isoformat, out_of_range, parse_instant
from svc_sandbox.core.durations import MAX_SECONDS, parse_duration
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.numbers import (
    ASCII_WHITESPACE,
    DECIMAL_TEXT,
    WHOLE_TEXT,
    decimal_text,
    whole_text,
)
from svc_sandbox.core.validation import describe, http_url_problem, root_url_problem

ENV_PREFIX = "SVC_SANDBOX_"


@functools.cache
def env_fields(model: type[BaseModel]) -> dict[str, str]:
    """Each ``SVC_SANDBOX_<FIELD>`` variable name of ``model`` and the field it sets."""
    return {ENV_PREFIX + name.upper(): name for name in model.model_fields}


#: SVC_SANDBOX_* variables that are no setting: set by ``exec`` for its command, or read by
#: the test suite (docs/testing.md, docs/dashboard.md).
OTHER_ENV_NAMES = frozenset({"SVC_SANDBOX_URL", "SVC_SANDBOX_CHROMIUM", "SVC_SANDBOX_SCREENSHOTS"})


def refusal(error: ValidationError, flags: Mapping[str, str] | None = None) -> str:
    """The first problem of settings that do not hold up, naming the value where the user
    wrote it: its command-line option (``flags``: the option of each setting given on the
    command line), else its ``SVC_SANDBOX_*`` variable (``--port must be less than or equal to
    65535``, ``SVC_SANDBOX_RATE_LIMITS must be a valid boolean, ...``), not pydantic's report."""
    first: dict[str, Any] = dict(error.errors()[0])
    if first["loc"]:
        field = str(first["loc"][0])
        where = (flags or {}).get(field) or ENV_PREFIX + field.upper()
        first["loc"] = (where, *first["loc"][1:])
    return describe(first)


#: The types whose setting ``_number_in_ascii`` reads from text.
_NUMBERS: frozenset[Any] = frozenset({int, float, Decimal})


def retry_delays(value: str) -> list[timedelta]:
    """``"1m,5m,30m"`` -> the waits; an empty string means no retries."""
    try:
        return [parse_duration(part.strip()) for part in value.split(",") if part.strip()]
    except ValidationFailed:
        raise ValueError("must be durations separated by commas, such as 1m,5m,30m") from None


HOST_SHAPE = (
    "must be an IP address or a host name, without brackets or a port (such as 127.0.0.1, "
    "::1 or 0.0.0.0; the port is --port)"
)
ALLOWED_HOST_SHAPE = "each name must be a host name or an IP address, without a scheme or a port"


def _is_ipv6(text: str) -> bool:
    """Whether ``text`` is an IPv6 address (with a zone, ``fe80::1%eth0``, too): the one
    reading of a name with a colon that is no host and port."""
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


#: The most records a retention setting keeps (2^53 - 1, the largest count JSON carries
#: exactly): far past any memory, and a length Python's collections take.
MAX_KEPT = 2**53 - 1

#: The spec's URL placeholders and their default path on the one origin (see DESIGN.md).
ROOT_DEFAULTS: dict[str, str] = {
    "base_url": "/api",
    "auth_url": "/auth",
    "wallet_base_url": "/wallet",
    "resource_url": "/wallet",
    "pay_url": "/pay",
    "simulate_url": "/simulate",
    "product_page_url": "/p",
    #: Not a placeholder of the spec: the emulated payment provider's hosted page, where a
    #: production buyer of a no-token checkout confirms (docs/spec-gaps.md, Checkout sessions).
    "provider_url": "/provider",
}
#: The settings that are roots: paths are appended to them.
ROOT_SETTINGS = frozenset({"public_url", *ROOT_DEFAULTS})


class Settings(BaseModel):
    # No setting may be NaN or infinite (a delay of inf seconds overflows the first schedule).
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    host: str = "127.0.0.1"
    port: int = Field(default=8700, ge=0, le=65535)
    public_url: str | None = None
    base_url: str | None = None
    auth_url: str | None = None
    wallet_base_url: str | None = None
    resource_url: str | None = None
    pay_url: str | None = None
    simulate_url: str | None = None
    product_page_url: str | None = None
    provider_url: str | None = None

    seed: int = 1
    clock_mode: ClockMode = ClockMode.REAL
    clock_factor: float = Field(default=1.0, gt=0, le=1_000_000)
    #: Start instant of a frozen or scaled clock (ISO 8601); real mode starts at the wall time.
    clock_start: str = "2026-01-01T00:00:00Z"
    #: How often (seconds of wall time) a real or scaled clock runs the scheduler's due work.
    tick_seconds: float = Field(default=0.5, gt=0, le=3600)

    rate_limits: bool = True
    #: What a production direct push does by itself: "approve", a failure code of §7 but
    #: session_expired, or "none" (wait for the control plane); after
    #: ``production_push_delay_seconds``. One of ``commerce.payments.PUSH_OUTCOMES``.
    production_push_outcome: str = "approve"
    production_push_delay_seconds: float = Field(default=10.0, ge=0, le=86400)
    #: A status poll checks the payment provider at most once per this many seconds per
    #: session (spec §3 "throttled per session"; see spec-gaps, notification model).
    provider_check_interval_seconds: float = Field(default=5.0, ge=0, le=3600, allow_inf_nan=False)
    #: A YAML or JSON file of custom trigger phones, loaded at start and kept by reset.
    triggers_file: str | None = None
    threads: int = Field(default=8, ge=1, le=256)
    #: Open connections waitress serves at once; more wait in the listen backlog. Idle
    #: keep-alive connections count, so the waitress default of 100 stalls busy clients.
    #: Bounded below select()'s 1024 descriptors.
    connection_limit: int = Field(default=500, ge=1, le=900)
    #: Seconds an idle connection is kept open before waitress closes it.
    channel_timeout: float = Field(default=30.0, gt=0, le=3600)
    #: Answer /_sandbox requests from peers other than this machine (off: 403). Only
    #: matters when ``host`` is not a loopback address.
    allow_remote_control: bool = False
    #: Extra Host header names served besides the loopback names and the hosts of
    #: ``public_url`` and the roots (comma-separated; ``*`` serves any, DNS rebinding included).
    allowed_hosts: str = ""
    #: Status for a commerce request with no credentials at all (spec: 403; see spec-gaps).
    no_credentials_status: Literal[401, 403] = 403
    #: Validate every commerce response against the contract; a violation becomes a 500.
    strict: bool = False

    #: Withdrawal fee rate (a fraction) of organizations without a custom rate (spec §8: 7%).
    withdrawal_fee_rate: Decimal = Field(default=Decimal("0.07"), ge=0, le=1)
    #: Government tax rate on withdrawals (a fraction; 0.15 = Ethiopian VAT), see spec-gaps.
    withdrawal_tax_rate: Decimal = Field(default=Decimal("0.15"), ge=0, le=1)
    #: What the tax applies to: the service ``fee`` (default) or the gross ``amount``.
    withdrawal_tax_base: Literal["fee", "amount"] = "fee"
    #: How a half santim rounds: ``half_up`` (away from zero) or ``half_even`` (banker's).
    withdrawal_rounding: Literal["half_up", "half_even"] = "half_up"
    #: Seconds a withdrawal waits in ``pending`` (or ``approved``) before ``processing``.
    payout_pending_seconds: float = Field(default=60.0, ge=0, le=MAX_SECONDS)
    #: Seconds a withdrawal spends in ``processing`` before ``completed``.
    payout_processing_seconds: float = Field(default=300.0, ge=0, le=MAX_SECONDS)
    #: Hours (sandbox clock) an Idempotency-Key of POST /withdrawals is remembered after its
    #: withdrawal was created; 0 (default): as long as the withdrawal exists (spec §4 sets no
    #: limit). Above 0, the same key then makes a new withdrawal (Stripe-like expiry).
    idempotency_retention_hours: float = Field(default=0.0, ge=0, le=MAX_SECONDS / 3600)
    #: A withdrawal Idempotency-Key repeated with another body: ``replay`` answers 200 with the
    #: original withdrawal (spec §4 read literally) or ``reject`` answers 422.
    withdrawal_key_reuse: Literal["replay", "reject"] = "replay"
    #: Largest body PUT /_sandbox/state takes (other routes: 1 MiB); 500 paid sessions ~ 1 MB.
    max_state_bytes: int = Field(default=512 * 1024 * 1024, ge=1024, le=16 * 1024**3)
    #: A state export to import at start (``serve --state FILE``).
    state_file: str | None = None
    #: A state import whose records name records it does not hold (an order's session, a
    #: delivery's endpoint... see state_references.py): refused with 400 (``check``) or taken
    #: as it is (``skip``: a dangling reference then answers 404 where it is followed).
    state_references: Literal["check", "skip"] = "check"
    #: Where ``serve`` writes the state export when it stops (``--export-on-exit FILE``).
    export_on_exit: str | None = None
    #: Wallet: a repeated idempotencyKey with another body ``replay``s the original transfer
    #: (spec §4 read literally) or is refused with 422 ``idempotency_key_reused`` (``reject``).
    wallet_key_reuse: Literal["replay", "reject"] = "replay"
    #: Wallet: whose API token X-Svc-Key accepts, the ``owner`` organization of the token's
    #: app or ``any`` organization's (see docs/spec-gaps.md, wallet).
    wallet_key_org: Literal["owner", "any"] = "owner"
    #: Wallet: refuse access tokens of an app the user disconnected (spec §5.6 keeps them
    #: valid until expiry; issue 12 asks for 401).
    wallet_refuse_disconnected: bool = False
    #: Wallet: santim each seeded user's wallet starts with (after reset too).
    wallet_seed_minor: int = Field(default=1_000_000, ge=0, le=10**13)
    #: A webhook endpoint set for each default organization at start (and after reset).
    webhook_url: str | None = None
    #: Its signing secret, also used by endpoints created without one; generated when unset.
    webhook_secret: str | None = Field(default=None, min_length=1, max_length=256)
    #: Seconds a receiver has to answer 2xx (spec §6: 10 s).
    webhook_timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    #: Receivers a real or scaled clock's background sender delivers to at once, one attempt
    #: at a time each (1: one attempt at a time in all, every receiver waiting on the one
    #: before). Explicit flushes and advances always send one at a time, in due order.
    webhook_senders: int = Field(default=8, ge=1, le=64)
    #: Waits before each retry, each counted from the previous attempt (spec §6; see spec-gaps).
    webhook_retries: str = "1m,5m,30m,2h,12h"
    #: Retention, so a long-running instance stays bounded (docs/performance.md): the event
    #: log keeps this many newest events (plus any a pending delivery still needs), ...
    #: Each at most MAX_KEPT: a journal's bound is a ``deque(maxlen=...)``, which a number past
    #: a C ssize_t made a traceback at start.
    events_kept: int = Field(default=100_000, ge=1, le=MAX_KEPT)
    #: ... the settled webhook deliveries kept (pending ones are always kept), ...
    deliveries_kept: int = Field(default=100_000, ge=1, le=MAX_KEPT)
    #: ... and the webhook attempt journal keeps this many most recent attempts.
    webhook_attempts_kept: int = Field(default=10_000, ge=1, le=MAX_KEPT)
    #: URI prefix of the custom claims (spec §2 ``{claims_namespace}/handle``); default
    #: ``{auth_url}/claims``.
    claims_namespace: str | None = None
    #: What the identity limits of §8 count per: the calling ``client`` (its client_id, or the
    #: IP when a request names none) or the caller's ``ip``. See docs/spec-gaps.md.
    identity_rate_limit_key: Literal["client", "ip"] = "client"
    #: Hours an identity record is kept after it expired (codes, access and refresh tokens,
    #: their grant, sign-in sessions), so its error still says "expired" rather than unknown;
    #: then it is dropped. See docs/spec-gaps.md (identity records over time).
    identity_expired_kept_hours: int = Field(default=24, ge=0, le=24 * 365 * 100)
    #: The "one-off KYC on first use" rule for app registration: ``require`` an approved
    #: organization KYC, or ``skip`` the check. See docs/spec-gaps.md.
    app_kyc: Literal["require", "skip"] = "require"

    @field_validator(
        "public_url",
        "base_url",
        "auth_url",
        "wallet_base_url",
        "resource_url",
        "pay_url",
        "simulate_url",
        "product_page_url",
        "provider_url",
        "webhook_url",
        "claims_namespace",
    )
    @classmethod
    def _absolute_http_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        problem = http_url_problem(value)
        if problem:
            raise ValueError(problem)
        if info.field_name in ROOT_SETTINGS and (problem := root_url_problem(value)):
            raise ValueError(problem)  # ``/a?q=1`` made roots such as ``/a?q=1/api``
        return value.rstrip("/")

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, value: str) -> str:
        """Host names (or IP addresses) as a Host header names them, without a scheme or a
        port: ``x.example:80`` or ``http://y.example`` never matched, and the refusal of a
        request to that host then suggested adding it."""
        for name in (n.strip() for n in value.split(",")):
            bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
            if any(c in bare for c in "/@[]"):
                raise ValueError(f"{name!r}: {ALLOWED_HOST_SHAPE}")
            if (":" in bare or bare != name) and not _is_ipv6(bare):  # an IPv6 literal only
                raise ValueError(f"{name!r}: {ALLOWED_HOST_SHAPE}")
        return value

    @field_validator("*", mode="before")
    @classmethod
    def _number_in_ascii(cls, value: Any, info: ValidationInfo) -> Any:
        """A number given as text (an environment variable) is ASCII decimal text, the rule
        of the flags (core/numbers.py): pydantic would read ``1_0`` as 10 and ``1e1``,
        ``inf`` as numbers."""
        if not isinstance(value, str) or info.field_name is None:
            return value
        annotation = cls.model_fields[info.field_name].annotation
        if annotation not in _NUMBERS and not _NUMBERS.intersection(get_args(annotation)):
            return value
        text = value.strip(ASCII_WHITESPACE)
        kinds = {annotation, *get_args(annotation)} & _NUMBERS
        if kinds == {int}:  # a count or a seed: say "whole", as the flag does
            if whole_text(text) is None:
                raise ValueError(f"must be {WHOLE_TEXT}")
            return text
        number = decimal_text(text)
        if number is None:
            raise ValueError(f"must be {DECIMAL_TEXT}")
        return number if annotation is Decimal else text

    @field_validator("no_credentials_status", mode="before")
    @classmethod
    def _status_from_text(cls, value: Any) -> Any:
        # An environment variable arrives as text, and a Literal of ints takes no "401".
        if isinstance(value, str):
            status = whole_text(value.strip(ASCII_WHITESPACE))
            return value if status is None else status
        return value

    @field_validator("host")
    @classmethod
    def _listening_host(cls, value: str) -> str:
        """An IP address or a host name, bare: ``[::1]`` or ``127.0.0.1:80`` made roots no URL
        parser reads (a traceback at start, where an address not of this machine is one
        line)."""
        if "[" in value or "]" in value or "/" in value or (":" in value and not _is_ipv6(value)):
            raise ValueError(HOST_SHAPE)
        return value

    @field_validator("production_push_outcome")
    @classmethod
    def _push_outcome(cls, value: str) -> str:
        try:
            return provider_decision(value, PUSH_OUTCOMES, "production_push_outcome")
        except ValidationFailed as refused:  # pydantic words a ValueError under the field
            raise ValueError(refused.message.removeprefix("production_push_outcome ")) from None

    @field_validator("clock_start")
    @classmethod
    def _instant_in_range(cls, value: str) -> str:
        try:
            problem = out_of_range(parse_instant(value))
        except ValueError:
            raise ValueError("must be an ISO 8601 date-time") from None
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("webhook_retries")
    @classmethod
    def _retry_list(cls, value: str) -> str:
        retry_delays(value)
        return value

    @property
    def webhook_retry_delays(self) -> list[timedelta]:
        return retry_delays(self.webhook_retries)

    @property
    def origin(self) -> str:
        """Where the URLs the sandbox hands out point: ``public_url``, else the bind address; a
        wildcard bind (``0.0.0.0``, ``::``) is no address a client can open, so loopback."""
        if self.public_url:
            return self.public_url
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(self.host, self.host)
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def root(self, name: str) -> str:
        """The absolute URL of one spec root (``base_url``, ``pay_url``, ...)."""
        explicit: str | None = getattr(self, name)
        return explicit or self.origin + ROOT_DEFAULTS[name]

    @property
    def issuer(self) -> str:
        """{auth_url}, exactly the ``iss`` of every token and authorization response."""
        return self.root("auth_url")

    @property
    def claims_prefix(self) -> str:
        return self.claims_namespace or self.issuer + "/claims"

    def shown(self) -> dict[str, Any]:
        """Every setting by its ``serve`` name as ``GET /_sandbox`` shows it: JSON values
        (decimals as strings), instants in the wire format of every other instant."""
        values = self.model_dump(mode="json")
        values["clock_start"] = isoformat(parse_instant(self.clock_start))
        return values

    def roots(self) -> dict[str, str]:
        roots = {name: self.root(name) for name in ROOT_DEFAULTS}
        roots["control_url"] = self.origin + "/_sandbox"
        return roots

    def path_of(self, name: str) -> str:
        """The path part of a root, which is where the app mounts it."""
        return urlsplit(self.root(name)).path.rstrip("/")

    @classmethod
    def load(cls, overrides: dict[str, Any] | None = None) -> Settings:
        """Defaults, then ``SVC_SANDBOX_<FIELD>`` environment variables, then ``overrides``."""
        fields = env_fields(cls)
        # One pass over the environment: a lookup per setting cost 110 µs of every Sandbox
        # a test suite builds (os.environ encodes and decodes at each call).
        values: dict[str, Any] = {fields[k]: v for k, v in os.environ.items() if k in fields}
        values.update({k: v for k, v in (overrides or {}).items() if v is not None})
        return cls.model_validate(values)

    @classmethod
    def unknown_env_names(cls) -> list[str]:
        """One line per ``SVC_SANDBOX_*`` variable of the environment that names no setting
        (and that the sandbox sets or reads otherwise), with the closest setting's name."""
        known = env_fields(cls)
        lines = []
        for name in sorted(os.environ):
            if not name.startswith(ENV_PREFIX) or name in known or name in OTHER_ENV_NAMES:
                continue
            closest = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
            hint = f" (did you mean {closest[0]}?)" if closest else ""
            lines.append(f"svc-sandbox: warning: {name} is no setting and is ignored{hint}")
        return lines
