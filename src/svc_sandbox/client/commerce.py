"""``SvcClient``: the commerce API (spec §4) over httpx, one typed method per operation.

Arguments are checked before anything is sent (``ValueError`` naming the parameter); every
answer is decoded into the spec's models or raised as an ``SvcError``.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from svc_sandbox.client import arguments as check
from svc_sandbox.client.errors import (
    SvcError,
    SvcPollTimeout,
    SvcRateLimitError,
    SvcResponseError,
    SvcTransportError,
    from_answer,
)
from svc_sandbox.client.models import (
    ArchivedProduct,
    Balance,
    CheckoutResult,
    CheckoutStatus,
    Order,
    Page,
    ProductListItem,
    ProductResponse,
    Withdrawal,
)
from svc_sandbox.core.clock import monotonic

M = TypeVar("M", bound=BaseModel)

DEFAULT_BASE_URL = "http://127.0.0.1:8700/api"
REQUEST_ID_HEADER = "X-Request-Id"
TOKEN_SHAPE = re.compile(r"^svc_(test|live)_[A-Za-z0-9]+$")
#: Spec §8: ``waitForCheckout`` polls every 2 s and gives up after 5 minutes.
POLL_INTERVAL = 2.0
POLL_TIMEOUT = 300.0

PRODUCT_STATUSES = ("draft", "published", "archived")
ORDER_STATUSES = ("pending", "paid", "failed")
WITHDRAWAL_STATUSES = ("pending", "reviewing", "approved", "rejected", "processing", "completed")


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    if math.isinf(value):
        raise ValueError(f"{name} must be finite")
    return float(value)


class SvcClient:
    """A client of the commerce API at ``base_url`` (default: env ``SVC_BASE_URL``, else the
    local emulator), authenticated with an API ``token`` (``svc_test_...`` or ``svc_live_...``;
    None for the calls that need none: checkout without a token and polling)."""

    def __init__(
        self,
        token: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        if token is not None and not (isinstance(token, str) and TOKEN_SHAPE.match(token)):
            raise ValueError("token must be an API token: svc_test_... or svc_live_...")
        base = base_url or os.environ.get("SVC_BASE_URL") or DEFAULT_BASE_URL
        if not isinstance(base, str) or not check.HTTP_URL.match(base):
            raise ValueError(f"base_url must be an absolute http(s) URL, got {base!r}")
        self.token = token
        self.base_url = base.rstrip("/")
        self.timeout = _positive("timeout", timeout)
        #: Made on the first request: building an httpx.Client (its SSL context) costs tens
        #: of milliseconds, and a call refused by the argument checks needs none.
        self._client: httpx.Client | None = http
        self._owns_http = http is None

    @property
    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout)
        return self._client

    # --- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        if self._owns_http and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> SvcClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- products ---------------------------------------------------------------------------

    def create_product(
        self,
        title: str,
        pricing_model: str,
        *,
        amount: int | None = None,
        minimum_amount: int | None = None,
        default_amount: int | None = None,
        description: str | None = None,
        media: list[str] | None = None,
        metadata: Mapping[str, str] | None = None,
        status: str | None = None,
    ) -> ProductResponse:
        """POST /products. ``amount`` is required for fixed, ``minimum_amount`` for pwyw."""
        model = check.choice("pricing_model", pricing_model, ("fixed", "pwyw", "free"))
        if model == "fixed" and amount is None:
            raise ValueError("amount is required for a fixed product")
        if model == "pwyw" and minimum_amount is None:
            raise ValueError("minimum_amount is required for a pwyw product")
        body: dict[str, Any] = {
            "title": check.text("title", title, 1, 120),
            "pricingModel": model,
        }
        price = check.price(amount, minimum_amount, default_amount)
        if price:
            body["price"] = price
        body.update(self._product_fields(description, media, metadata))
        if status is not None:
            body["status"] = check.choice("status", status, ("draft", "published"))
        return self._call("POST", "/products", ProductResponse, json_body=body)

    def list_products(
        self, *, page: int = 1, limit: int = 20, status: str | None = None
    ) -> Page[ProductListItem]:
        query = check.page_query(page, limit, status, PRODUCT_STATUSES)
        return self._call("GET", "/products", Page[ProductListItem], params=query)

    def get_product(self, product_id: str) -> ProductResponse:
        ref = check.product_ref("product_id", product_id)
        return self._call("GET", f"/products/{ref}", ProductResponse)

    def update_product(
        self,
        product_id: str,
        *,
        title: str | None = None,
        description: str | None = None,
        media: list[str] | None = None,
        metadata: Mapping[str, str] | None = None,
        status: str | None = None,
        amount: int | None = None,
        minimum_amount: int | None = None,
        default_amount: int | None = None,
    ) -> ProductResponse:
        """PATCH /products/{id}: sends only the arguments given (None means unchanged)."""
        ref = check.product_ref("product_id", product_id)
        body: dict[str, Any] = {}
        if title is not None:
            body["title"] = check.text("title", title, 1, 120)
        body.update(self._product_fields(description, media, metadata))
        if status is not None:
            body["status"] = check.choice("status", status, PRODUCT_STATUSES)
        price = check.price(amount, minimum_amount, default_amount)
        if price:
            body["price"] = price
        if not body:
            raise ValueError("update_product needs at least one field to change")
        return self._call("PATCH", f"/products/{ref}", ProductResponse, json_body=body)

    def archive_product(self, product_id: str) -> ArchivedProduct:
        ref = check.product_ref("product_id", product_id)
        return self._call("DELETE", f"/products/{ref}", ArchivedProduct)

    @staticmethod
    def _product_fields(
        description: str | None, media: list[str] | None, metadata: Mapping[str, str] | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if description is not None:
            body["description"] = check.text("description", description, 0, 5000)
        if media is not None:
            body["media"] = check.media(media)
        if metadata is not None:
            body["metadata"] = check.string_map("metadata", metadata)
        return body

    # --- checkout ---------------------------------------------------------------------------

    def create_checkout(
        self,
        product_id: str,
        *,
        customer: Mapping[str, Any] | None = None,
        gateway: str | None = None,
        success_url: str | None = None,
        metadata: Mapping[str, str | int | float | bool] | None = None,
        amount: int | None = None,
        collected_fields: Mapping[str, Any] | None = None,
        checkout_link: str | None = None,
    ) -> CheckoutResult:
        """POST /checkout for a product (``amount`` only for pay-what-you-want)."""
        body: dict[str, Any] = {"productId": check.product_ref("product_id", product_id)}
        body.update(self._checkout_fields(customer, gateway, success_url, metadata))
        if amount is not None:
            body["amount"] = check.integer("amount", amount)
        if collected_fields is not None:
            if not isinstance(collected_fields, Mapping):
                raise ValueError("collected_fields must be a mapping keyed by checkout-field id")
            body["collectedFields"] = dict(collected_fields)
        if checkout_link is not None:
            if not (isinstance(checkout_link, str) and checkout_link.startswith("cl_")):
                raise ValueError(f"checkout_link must be a cl_... token, got {checkout_link!r}")
            body["checkoutLink"] = checkout_link
        return self._call("POST", "/checkout", CheckoutResult, json_body=body)

    def create_custom_checkout(
        self,
        amount: int,
        description: str,
        *,
        customer: Mapping[str, Any] | None = None,
        gateway: str | None = None,
        success_url: str | None = None,
        metadata: Mapping[str, str | int | float | bool] | None = None,
    ) -> CheckoutResult:
        """POST /checkout for an arbitrary amount (needs a token; at least 100 santim)."""
        if self.token is None:
            raise ValueError("token is required for a custom-amount checkout")
        body: dict[str, Any] = {
            "amount": check.integer("amount", amount, minimum=100),
            "description": check.text("description", description, 1, 120),
        }
        body.update(self._checkout_fields(customer, gateway, success_url, metadata))
        return self._call("POST", "/checkout", CheckoutResult, json_body=body)

    @staticmethod
    def _checkout_fields(
        customer: Mapping[str, Any] | None,
        gateway: str | None,
        success_url: str | None,
        metadata: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if customer is not None:
            body["customer"] = check.customer(customer)
        if gateway is not None:
            body["gateway"] = check.gateway("gateway", gateway)
        if success_url is not None:
            body["successUrl"] = check.url("success_url", success_url)
        if metadata is not None:
            body["metadata"] = check.string_map("metadata", metadata, scalars=True)
        return body

    def get_checkout(self, session_id: str) -> CheckoutStatus:
        """GET /checkout/{sessionId} (needs no token)."""
        sid = check.hex_id("session_id", session_id)
        return self._call("GET", f"/checkout/{sid}", CheckoutStatus, auth=False)

    def wait_for_checkout(
        self,
        session_id: str,
        *,
        interval: float = POLL_INTERVAL,
        timeout: float = POLL_TIMEOUT,
        sleep: Callable[[float], Any] = time.sleep,
    ) -> CheckoutStatus:
        """Polls until the session is completed or expired (spec §8: every 2 s, for up to
        5 minutes), then raises ``SvcPollTimeout`` (code ``poll_timeout``).

        ``sleep`` is called with ``interval`` between polls; a test passes one that advances
        the sandbox clock instead. The time waited is the larger of what ``sleep`` was asked
        for and what really passed, so an instant fake sleep still ends on time.
        """
        check.hex_id("session_id", session_id)
        interval = _positive("interval", interval)
        timeout = _positive("timeout", timeout)
        started = monotonic()
        slept = 0.0
        while True:
            status = self.get_checkout(session_id)
            if status.done:
                return status
            waited = max(slept, monotonic() - started)
            if waited + interval > timeout:
                error = SvcPollTimeout(
                    f"checkout session {session_id} is still {status.status} after "
                    f"{timeout:g} s of polling",
                    code="poll_timeout",
                )
                error.last = status
                raise error
            sleep(interval)
            slept += interval

    # --- orders, balance, withdrawals -------------------------------------------------------

    def list_orders(
        self, *, page: int = 1, limit: int = 20, status: str | None = None
    ) -> Page[Order]:
        query = check.page_query(page, limit, status, ORDER_STATUSES)
        return self._call("GET", "/orders", Page[Order], params=query)

    def get_balance(self) -> Balance:
        return self._call("GET", "/balance", Balance)

    def create_withdrawal(
        self,
        amount: int,
        gateway: str,
        account: str,
        *,
        idempotency_key: str | None = None,
    ) -> Withdrawal:
        """POST /withdrawals; a repeated ``idempotency_key`` returns the first withdrawal."""
        body = {
            "amount": check.integer("amount", amount, minimum=10000),
            "gateway": check.gateway("gateway", gateway),
            "account": check.phone("account", account),
        }
        headers = {}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = check.idempotency_key(idempotency_key)
        return self._call("POST", "/withdrawals", Withdrawal, json_body=body, headers=headers)

    def list_withdrawals(
        self, *, page: int = 1, limit: int = 20, status: str | None = None
    ) -> Page[Withdrawal]:
        query = check.page_query(page, limit, status, WITHDRAWAL_STATUSES)
        return self._call("GET", "/withdrawals", Page[Withdrawal], params=query)

    def get_withdrawal(self, withdrawal_id: str) -> Withdrawal:
        wid = check.hex_id("withdrawal_id", withdrawal_id)
        return self._call("GET", f"/withdrawals/{wid}", Withdrawal)

    # --- transport --------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        model: type[M],
        *,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        auth: bool = True,
    ) -> M:
        sent = {"Accept": "application/json", **(headers or {})}
        if auth and self.token is not None:
            sent["Authorization"] = f"Bearer {self.token}"
        content = None
        if json_body is not None:
            content = json.dumps(json_body, separators=(",", ":")).encode()
            sent["Content-Type"] = "application/json"
        request = self._http.build_request(
            method, self.base_url + path, content=content, params=params, headers=sent
        )
        try:
            response = self._http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise SvcTransportError(
                f"{method} {path}: no answer within {self.timeout:g} s ({exc})", code="timeout"
            ) from exc
        except httpx.HTTPError as exc:
            raise SvcTransportError(
                f"{method} {path}: {type(exc).__name__}: {exc}", code="connection_error"
            ) from exc
        try:
            return decode(response, model)
        finally:
            response.close()


def decode(response: httpx.Response, model: type[M]) -> M:
    """The model of a 2xx answer, or the ``SvcError`` of anything else (never a bare
    JSON or transport exception)."""
    status = response.status_code
    request_id = response.headers.get(REQUEST_ID_HEADER)
    try:
        raw = response.read()
    except httpx.HTTPError as exc:
        raise SvcResponseError(
            f"the answer ({status}) was cut off: {exc}",
            status=status,
            code="truncated_response",
            request_id=request_id,
        ) from exc
    try:
        body: Any = json.loads(raw)
        parsed = True
    except ValueError:
        body, parsed = raw.decode("utf-8", "replace"), False
    if status >= 400:
        error = from_answer(status, body, request_id)
        if isinstance(error, SvcRateLimitError):
            retry = response.headers.get("Retry-After", "")
            error.retry_after = float(retry) if retry.replace(".", "", 1).isdigit() else None
        raise error
    if not parsed:
        kind = response.headers.get("Content-Type", "no content type")
        raise SvcResponseError(
            f"the answer ({status}, {kind}) is not valid JSON: {str(body)[:200]!r}",
            status=status,
            code="invalid_response",
            request_id=request_id,
            body=body,
        )
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise SvcResponseError(
            f"the answer ({status}) does not fit {model.__name__}: {where}: {first['msg']}",
            status=status,
            code="invalid_response",
            request_id=request_id,
            body=body,
        ) from exc


__all__ = ["DEFAULT_BASE_URL", "SvcClient", "SvcError", "decode"]
