"""The 17 tools of spec §1 and their table: the API tools, each a thin front over one call of
``svc_sandbox.client``, and the quote tool, over the fee function the emulator charges with
(the webhook and docs tools, which need no token either, are in offline_tools.py).

Every tool answers a short markdown summary plus the payload as structured content (its
output schema is the client's model of the resource, in wire names); ``response_format:
"json"`` puts the full payload in the text instead. API failures are tool errors carrying
status, code and request id.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, cast

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from svc_sandbox.client import (
    AsyncSvcClient,
    Balance,
    CheckoutResult,
    CheckoutStatus,
    Order,
    Page,
    ProductListItem,
    ProductResponse,
    SvcError,
    Withdrawal,
)
from svc_sandbox.client.arguments import CHECKOUT_LINK, MAX_PAGE
from svc_sandbox.client.models import (
    Gateway,
    OrderStatus,
    PricingModel,
    ProductStatus,
    Resource,
    WithdrawalStatus,
)
from svc_sandbox.commerce.fees import (
    DEFAULT_FEE_RATE,
    DEFAULT_TAX_RATE,
    MAX_MINOR,
    quote_withdrawal,
)
from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.errors import SandboxError
from svc_sandbox.mcp.backend import backend_of
from svc_sandbox.mcp.offline_tools import (
    svc_create_test_webhook,
    svc_read_doc,
    svc_search_docs,
    svc_verify_webhook,
)
from svc_sandbox.mcp.results import Format, answer, api_error, bad_argument, money

M = TypeVar("M", bound=Resource)

# --- parameter types (their descriptions are what a model reads) -------------------------

PageNumber = Annotated[
    int, Field(strict=True, ge=1, le=MAX_PAGE, description=f"page number, 1..{MAX_PAGE}")
]
Limit = Annotated[int, Field(strict=True, ge=1, le=100, description="items per page, 1..100")]
ProductId = Annotated[
    str,
    Field(
        min_length=1,
        description="the product's public token p_... or its 24-hex _id",
        examples=["p_x7Kq2"],
    ),
]
HexId = Annotated[str, Field(pattern=r"^[0-9a-f]{24}$", description="24 lowercase hex characters")]


#: The service trims a title and counts what is left (the client checks it the same way).
TRIMMED_TITLE = "1..120 characters after trimming surrounding whitespace"
Description = Annotated[str | None, Field(max_length=5000, description="up to 5000 characters")]


def _minor(description: str, minimum: int = 0, maximum: int | None = None) -> Any:
    return Field(strict=True, ge=minimum, le=maximum, description=description + " (integer santim)")


OptionalMinor = int | None


class CustomerInput(BaseModel):
    """The buyer (spec §2 Customer)."""

    model_config = ConfigDict(extra="forbid")

    email: str | None = Field(None, description="buyer email; required except on payment links")
    phone: str | None = Field(
        None,
        description="2519XXXXXXXX, 09XXXXXXXX or 9XXXXXXXX; required with a gateway. Sandbox: "
        "251900000001 pays instantly, 251900000002 fails instantly",
    )
    name: str | None = Field(None, description="buyer name")
    external_id: str | None = Field(None, description="your own user id (customerExternalId)")

    def to_client(self) -> dict[str, Any]:
        given = {
            "email": self.email,
            "phone": self.phone,
            "name": self.name,
            "externalId": self.external_id,
        }
        return {key: value for key, value in given.items() if value is not None}


# --- output model of the quote tool -----------------------------------------------------


class QuoteOutput(BaseModel):
    amount: int = Field(description="gross amount debited, santim")
    feeAmount: int = Field(description="service fee, santim")
    taxAmount: int = Field(description="government tax on the fee, santim")
    netAmount: int = Field(description="what reaches the account, santim")
    currency: Literal["ETB"] = "ETB"
    feeRate: str
    taxRate: str
    belowMinimum: bool = Field(description="true when amount is under the 10000 minimum")


# --- the call every API tool makes ------------------------------------------------------


async def _api(
    ctx: Context[Any, Any],
    tool: str,
    call: Callable[[AsyncSvcClient], Awaitable[M]],
    summary: Callable[[M], str],
    response_format: str,
) -> CallToolResult:
    svc = backend_of(ctx).client(tool)
    try:
        result = await call(svc)
    except SvcError as error:
        return api_error(error)
    except ValueError as error:  # the client's argument checks, before anything is sent
        raise bad_argument(error) from error
    return answer(summary(result), result.to_wire(), response_format)


def _product_line(product: Any, price: Any, url: str | None) -> str:
    amount = ""
    if price is not None:
        if price.amount is not None:
            amount = f", {money(price.amount)}"
        elif price.minimum_amount is not None:
            amount = f", from {money(price.minimum_amount)}"
    link = f" — {url}" if url else ""
    return (
        f"**{product.title}** (`{product.id}`, token `{product.checkout_token}`): "
        f"{product.pricing_model}{amount}, {product.status}{link}"
    )


def _product_summary(verb: str) -> Callable[[ProductResponse], str]:
    def render(result: ProductResponse) -> str:
        return f"{verb} " + _product_line(result.product, result.price, result.url)

    return render


def _page_summary(noun: str, line: Callable[[Any], str]) -> Callable[[Page[Any]], str]:
    def render(page: Page[Any]) -> str:
        head = f"{page.total} {noun} (page {page.page}, {len(page.items)} shown)"
        return "\n".join([head, *("- " + line(item) for item in page.items)])

    return render


def _status_summary(status: CheckoutStatus) -> str:
    parts = [f"Session `{status.session_id}` is **{status.status}**"]
    parts.append(f"amount {money(status.amount)}")
    if status.order_id:
        parts.append(f"order `{status.order_id}` ({status.order_status})")
    if status.failure is not None:
        parts.append(f"failure `{status.failure.raw_code}`: {status.failure.message}")
    if status.attempt is not None and status.attempt.last_failure is not None:
        last = status.attempt.last_failure
        parts.append(f"last attempt failed `{last.raw_code}`: {last.message}")
    parts.append(f"expires {isoformat(status.expires_at)}")
    return "; ".join(parts)


def _withdrawal_line(w: Withdrawal) -> str:
    return (
        f"`{w.id}` **{w.status}**: {money(w.amount)} to {w.gateway} {w.account} "
        f"(fee {money(w.fee_amount)}, tax {money(w.tax_amount)}, net {money(w.net_amount)})"
    )


def _order_line(order: Order) -> str:
    what = order.description or (order.product_id.title if order.product_id else None) or ""
    return f"`{order.id}` **{order.status}** {money(order.amount)} {what}".rstrip()


# --- products ---------------------------------------------------------------------------


async def svc_create_product(
    ctx: Context[Any, Any],
    title: Annotated[str, Field(description=TRIMMED_TITLE)],
    pricing_model: Annotated[
        PricingModel,
        Field(description="fixed price, pay-what-you-want, or free; locked after creation"),
    ],
    amount_minor: Annotated[OptionalMinor, _minor("price of a fixed product")] = None,
    minimum_amount_minor: Annotated[OptionalMinor, _minor("lowest pwyw amount")] = None,
    default_amount_minor: Annotated[OptionalMinor, _minor("pwyw amount pre-filled")] = None,
    description: Description = None,
    media: Annotated[list[str] | None, Field(description="image URLs (http/https)")] = None,
    metadata: Annotated[dict[str, str] | None, Field(description="string values")] = None,
    status: Annotated[
        Literal["draft", "published"] | None,
        Field(description="default draft; only a published product can be checked out"),
    ] = None,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, ProductResponse]:
    """Create a product (POST /products). A fixed product needs amount_minor, a pwyw product
    minimum_amount_minor; publish it (status "published") to sell it."""
    return await _api(
        ctx,
        "svc_create_product",
        lambda svc: svc.create_product(
            title,
            pricing_model,
            amount=amount_minor,
            minimum_amount=minimum_amount_minor,
            default_amount=default_amount_minor,
            description=description,
            media=media,
            metadata=metadata,
            status=status,
        ),
        _product_summary("Created"),
        response_format,
    )


async def svc_update_product(
    ctx: Context[Any, Any],
    product_id: ProductId,
    title: Annotated[str | None, Field(description=TRIMMED_TITLE)] = None,
    description: Description = None,
    media: Annotated[list[str] | None, Field(description="image URLs (http/https)")] = None,
    metadata: Annotated[
        dict[str, str] | None, Field(description="string values (replaces the old)")
    ] = None,
    status: Annotated[
        ProductStatus | None,
        Field(description="new status; archived hides it from checkout"),
    ] = None,
    amount_minor: Annotated[OptionalMinor, _minor("new fixed price")] = None,
    minimum_amount_minor: Annotated[OptionalMinor, _minor("new pwyw minimum")] = None,
    default_amount_minor: Annotated[OptionalMinor, _minor("new pwyw default")] = None,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, ProductResponse]:
    """Change a product (PATCH /products/{id}); send only what changes. The pricing model is
    locked (422)."""
    return await _api(
        ctx,
        "svc_update_product",
        lambda svc: svc.update_product(
            product_id,
            title=title,
            description=description,
            media=media,
            metadata=metadata,
            status=status,
            amount=amount_minor,
            minimum_amount=minimum_amount_minor,
            default_amount=default_amount_minor,
        ),
        _product_summary("Updated"),
        response_format,
    )


async def svc_get_product(
    ctx: Context[Any, Any], product_id: ProductId, response_format: Format = "markdown"
) -> Annotated[CallToolResult, ProductResponse]:
    """Read one product with its price and public page URL (GET /products/{id})."""
    return await _api(
        ctx,
        "svc_get_product",
        lambda svc: svc.get_product(product_id),
        _product_summary("Product"),
        response_format,
    )


async def svc_list_products(
    ctx: Context[Any, Any],
    page: PageNumber = 1,
    limit: Limit = 20,
    status: Annotated[ProductStatus | None, Field(description="only this status")] = None,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, Page[ProductListItem]]:
    """List products, newest first (GET /products)."""
    return await _api(
        ctx,
        "svc_list_products",
        lambda svc: svc.list_products(page=page, limit=limit, status=status),
        _page_summary("products", lambda p: _product_line(p, p.price, p.url)),
        response_format,
    )


# --- checkout ---------------------------------------------------------------------------


async def svc_create_checkout(
    ctx: Context[Any, Any],
    product_id: Annotated[
        str | None, Field(description="p_... token or 24-hex id; omit for a custom amount")
    ] = None,
    amount_minor: Annotated[
        OptionalMinor,
        _minor("custom amount (at least 100, with description) or the pwyw amount"),
    ] = None,
    description: Annotated[
        str | None,
        Field(
            description="what the buyer pays for (custom amount only): 1..120 characters "
            "after trimming"
        ),
    ] = None,
    customer: Annotated[
        CustomerInput | None,
        Field(description="the buyer: email, and phone when a gateway is given"),
    ] = None,
    gateway: Annotated[
        Gateway | None,
        Field(description="push to this wallet; omit for a payment link (buyer picks)"),
    ] = None,
    success_url: Annotated[
        str | None, Field(description="redirect after payment; {CHECKOUT_ID} is replaced")
    ] = None,
    metadata: Annotated[
        dict[str, str | int | float | bool] | None,
        Field(description="up to 20 keys; saved on the order and sent in webhooks"),
    ] = None,
    checkout_link: Annotated[
        str | None,
        Field(pattern=CHECKOUT_LINK.pattern, description="a cl_... checkout link token"),
    ] = None,
    collected_fields: Annotated[
        dict[str, str | int | float | bool] | None,
        Field(
            description="answers to the organization's checkout fields, keyed by field id "
            "(cf_...); a required field must be answered (product checkouts only)"
        ),
    ] = None,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, CheckoutResult]:
    """Start a checkout session (POST /checkout) for a published product, or for a custom
    amount (amount_minor >= 100 with description, no product_id). Returns the session id and,
    for a paid checkout, the URL to send the buyer to; a free product returns its order.
    Every argument is sent as given and the service answers, in the words of REST (a
    description is refused with a product_id, a custom amount needs a description)."""

    def call(svc: AsyncSvcClient) -> Awaitable[CheckoutResult]:
        return svc.create_checkout_as_given(
            product_id=product_id,
            amount=amount_minor,
            description=description,
            customer=customer.to_client() if customer is not None else None,
            gateway=gateway,
            success_url=success_url,
            metadata=metadata,
            checkout_link=checkout_link,
            collected_fields=collected_fields,
        )

    def summary(result: CheckoutResult) -> str:
        if result.checkout_url is None and result.mode is None:
            return f"Free order `{result.order_id}` created (session `{result.session_id}`)."
        where = result.checkout_url or "a payment prompt was pushed to the buyer's phone"
        return (
            f"Checkout session `{result.session_id}` is open ({result.mode}): {where}. "
            "Poll it with svc_get_checkout_status or svc_wait_for_checkout."
        )

    return await _api(ctx, "svc_create_checkout", call, summary, response_format)


async def svc_get_checkout_status(
    ctx: Context[Any, Any], session_id: HexId, response_format: Format = "markdown"
) -> Annotated[CallToolResult, CheckoutStatus]:
    """Read a checkout session's status (GET /checkout/{sessionId}): open, completed (orderId
    set: paid) or expired (failure says why)."""
    return await _api(
        ctx,
        "svc_get_checkout_status",
        lambda svc: svc.get_checkout(session_id),
        _status_summary,
        response_format,
    )


async def svc_wait_for_checkout(
    ctx: Context[Any, Any],
    session_id: HexId,
    timeout_seconds: Annotated[
        float,
        Field(
            strict=True, gt=0, le=300, description="give up after this long (default and max 300)"
        ),
    ] = 300,
    interval_seconds: Annotated[
        float, Field(strict=True, ge=0.1, le=60, description="seconds between polls (default 2)")
    ] = 2,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, CheckoutStatus]:
    """Poll a checkout session until it is completed or expired (every 2 s, up to 5 minutes;
    then a tool error with code poll_timeout)."""
    return await _api(
        ctx,
        "svc_wait_for_checkout",
        lambda svc: svc.wait_for_checkout(
            session_id, interval=interval_seconds, timeout=timeout_seconds
        ),
        _status_summary,
        response_format,
    )


# --- orders, balance, withdrawals -------------------------------------------------------


async def svc_list_orders(
    ctx: Context[Any, Any],
    page: PageNumber = 1,
    limit: Limit = 20,
    status: Annotated[OrderStatus | None, Field(description="only this status")] = None,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, Page[Order]]:
    """List orders, newest first (GET /orders)."""
    return await _api(
        ctx,
        "svc_list_orders",
        lambda svc: svc.list_orders(page=page, limit=limit, status=status),
        _page_summary("orders", _order_line),
        response_format,
    )


async def svc_get_balance(
    ctx: Context[Any, Any], response_format: Format = "markdown"
) -> Annotated[CallToolResult, Balance]:
    """Read the withdrawable earnings (GET /balance): the most a withdrawal can take."""

    def summary(balance: Balance) -> str:
        if balance.eligible:
            return f"Balance {money(balance.balance_minor)}, eligible to withdraw."
        # The answer does not say which condition is unmet: all three are named.
        return (
            f"Balance {money(balance.balance_minor)}, not eligible to withdraw (a withdrawal "
            "needs a production organization, Developer Mode on and approved KYC)."
        )

    return await _api(
        ctx, "svc_get_balance", lambda svc: svc.get_balance(), summary, response_format
    )


async def svc_quote_withdrawal(
    amount_minor: Annotated[int, _minor("gross amount to withdraw", maximum=MAX_MINOR)],
    fee_rate: Annotated[
        str | None,
        Field(
            pattern=r"^(0(\.[0-9]+)?|1(\.0+)?)$",
            description=f"fee fraction, default {DEFAULT_FEE_RATE} (your account's custom "
            "rate if it has one)",
        ),
    ] = None,
    tax_rate: Annotated[
        str | None,
        Field(
            pattern=r"^(0(\.[0-9]+)?|1(\.0+)?)$",
            description=f"tax fraction on the fee, default {DEFAULT_TAX_RATE}",
        ),
    ] = None,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, QuoteOutput]:
    """Quote a withdrawal offline (no token): fee, tax and net of amount_minor, computed by the
    same function the emulator charges with. Withdrawals start at 10000 santim."""
    fee = fee_rate if fee_rate is not None else DEFAULT_FEE_RATE
    tax = tax_rate if tax_rate is not None else DEFAULT_TAX_RATE
    try:
        quote = quote_withdrawal(amount_minor, fee, tax)
    except SandboxError as error:
        raise ToolError(f"Invalid argument: {error.message}") from error
    payload = {
        **quote.to_public(),
        "feeRate": str(fee),
        "taxRate": str(tax),
        "belowMinimum": amount_minor < 10000,
    }
    text = (
        f"Withdrawing {money(quote.amount)}: fee {money(quote.fee_amount)}, tax "
        f"{money(quote.tax_amount)}, net {money(quote.net_amount)} reaches the account."
    )
    if payload["belowMinimum"]:
        text += " Note: the minimum withdrawal is 100.00 ETB (10000 santim)."
    return answer(text, payload, response_format)


async def svc_create_withdrawal(
    ctx: Context[Any, Any],
    amount_minor: Annotated[int, _minor("gross amount, at least 10000", minimum=10000)],
    gateway: Annotated[Gateway, Field(description="the wallet the payout goes to")],
    account: Annotated[str, Field(description="destination phone, e.g. 251911234567")],
    idempotency_key: Annotated[
        str,
        Field(
            min_length=1,
            max_length=255,
            description="required: a repeat with the same key returns the first withdrawal",
        ),
    ],
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, Withdrawal]:
    """Withdraw earnings to a phone wallet (POST /withdrawals). Moves real money with a
    production token; refuses a sandbox token (svc_test_) before calling the API."""
    backend = backend_of(ctx)
    if backend.token is not None and backend.token.startswith("svc_test_"):
        raise ToolError(
            "svc_create_withdrawal refuses a sandbox token (svc_test_...): withdrawals pay out "
            "from a production organization; use a svc_live_ token. Nothing was sent."
        )

    def summary(withdrawal: Withdrawal) -> str:
        line = "Withdrawal " + _withdrawal_line(withdrawal)
        if (withdrawal.amount, withdrawal.gateway) != (amount_minor, gateway):
            # The key matched an earlier withdrawal: say so, or an agent takes it for the
            # payout it just asked for.
            line += (
                f"\nThe idempotency key `{idempotency_key}` was used before: this is that "
                "earlier withdrawal, returned as it is. Nothing new was created "
                f"({money(amount_minor)} to {gateway} was not paid out); send a new key for a "
                "new withdrawal."
            )
        return line

    return await _api(
        ctx,
        "svc_create_withdrawal",
        lambda svc: svc.create_withdrawal(
            amount_minor, gateway, account, idempotency_key=idempotency_key
        ),
        summary,
        response_format,
    )


async def svc_get_withdrawal(
    ctx: Context[Any, Any], withdrawal_id: HexId, response_format: Format = "markdown"
) -> Annotated[CallToolResult, Withdrawal]:
    """Read one withdrawal (GET /withdrawals/{id})."""
    return await _api(
        ctx,
        "svc_get_withdrawal",
        lambda svc: svc.get_withdrawal(withdrawal_id),
        lambda w: "Withdrawal " + _withdrawal_line(w),
        response_format,
    )


async def svc_list_withdrawals(
    ctx: Context[Any, Any],
    page: PageNumber = 1,
    limit: Limit = 20,
    status: Annotated[WithdrawalStatus | None, Field(description="only this status")] = None,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, Page[Withdrawal]]:
    """List withdrawals, newest first (GET /withdrawals)."""
    return await _api(
        ctx,
        "svc_list_withdrawals",
        lambda svc: svc.list_withdrawals(page=page, limit=limit, status=status),
        _page_summary("withdrawals", _withdrawal_line),
        response_format,
    )


# --- the table --------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolSpec:
    fn: Callable[..., Awaitable[CallToolResult]]
    title: str
    read_only: bool
    #: Talks to the commerce API (false: offline).
    api: bool = True
    idempotent: bool = False
    withdrawal: bool = False


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(svc_create_checkout, "Create checkout session", read_only=False),
    ToolSpec(svc_create_product, "Create product", read_only=False),
    ToolSpec(svc_update_product, "Update product", read_only=False, idempotent=True),
    ToolSpec(svc_get_product, "Get product", read_only=True),
    ToolSpec(svc_list_products, "List products", read_only=True),
    ToolSpec(svc_get_checkout_status, "Get checkout status", read_only=True),
    ToolSpec(svc_wait_for_checkout, "Wait for checkout", read_only=True),
    ToolSpec(svc_list_orders, "List orders", read_only=True),
    ToolSpec(svc_get_balance, "Get balance", read_only=True),
    ToolSpec(svc_quote_withdrawal, "Quote withdrawal", read_only=True, api=False),
    ToolSpec(
        svc_create_withdrawal,
        "Create withdrawal",
        read_only=False,
        idempotent=True,
        withdrawal=True,
    ),
    ToolSpec(svc_get_withdrawal, "Get withdrawal", read_only=True),
    ToolSpec(svc_list_withdrawals, "List withdrawals", read_only=True),
    ToolSpec(svc_verify_webhook, "Verify webhook", read_only=True, api=False),
    ToolSpec(svc_create_test_webhook, "Create test webhook", read_only=False, api=False),
    ToolSpec(svc_search_docs, "Search docs", read_only=True, api=False),
    ToolSpec(svc_read_doc, "Read doc", read_only=True, api=False),
)


def _tool(spec: ToolSpec) -> Tool:
    annotations = ToolAnnotations(
        title=spec.title,
        read_only_hint=spec.read_only,
        destructive_hint=None if spec.read_only else False,
        idempotent_hint=True if spec.read_only else spec.idempotent,
        open_world_hint=spec.api,
    )
    tool = Tool.from_function(spec.fn, title=spec.title, annotations=annotations)
    return _closed(tool)


def _closed(tool: Tool) -> Tool:
    """``tool`` refusing arguments it does not take: a misspelt parameter (``statuss``,
    ``minimumAmountMinor``) is a tool error naming it, never a call that silently drops it;
    the input schema says so (``additionalProperties: false``)."""
    metadata = tool.fn_metadata
    model = metadata.arg_model
    closed = cast(
        "type[BaseModel]",
        type(
            model.__name__,
            (model,),
            {"model_config": ConfigDict(extra="forbid"), "__module__": model.__module__},
        ),
    )
    return tool.model_copy(
        update={
            "fn_metadata": metadata.model_copy(update={"arg_model": closed}),
            "parameters": closed.model_json_schema(by_alias=True),
        }
    )


_BUILT: dict[str, Tool] = {}


def tools_for(*, read_only: bool, enable_withdrawals: bool) -> list[Tool]:
    """The tools a server registers: read-only mode keeps the readers; the withdrawal tool
    only when enabled. Each Tool is built once per process and shared by every server."""
    chosen = []
    for spec in TOOLS:
        if read_only and not spec.read_only:
            continue
        if spec.withdrawal and not enable_withdrawals:
            continue
        name = spec.fn.__name__
        if name not in _BUILT:
            _BUILT[name] = _tool(spec)
        chosen.append(_BUILT[name])
    return chosen
