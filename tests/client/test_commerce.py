"""The client against the emulator over real HTTP: every commerce operation, as a user calls it.

The emulator runs in strict mode (every response checked against the contract) and records
every request against the contract, so the last test also shows the client's request shapes
fit contracts/commerce.openapi.yaml.
"""

from __future__ import annotations

import pytest

from svc_sandbox.client import (
    CheckoutStatus,
    SvcAuthenticationError,
    SvcClient,
    SvcClientError,
    SvcNotFoundError,
    SvcPollTimeout,
)
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.testing.clock import SvcClock
from svc_sandbox.testing.emulator import Emulator
from tests.helpers import BASE_URL_OPERATIONS

BUYER = {"email": "buyer@example.com", "phone": "0911223344", "externalId": "user-7"}


@pytest.fixture
def live(svc_live_client: SvcClient) -> SvcClient:
    return svc_live_client


def earn(live: SvcClient, svc_clock: SvcClock, amount: int) -> CheckoutStatus:
    """A production direct push, paid by the default outcome 10 s later (sandbox time)."""
    created = live.create_custom_checkout(amount, "Consulting", gateway="telebirr", customer=BUYER)
    assert created.mode == "direct" and created.checkout_url is None
    return live.wait_for_checkout(created.session_id, sleep=svc_clock.advance)


# --- products -----------------------------------------------------------------------------


def test_products_create_read_update_list_and_archive(svc_client: SvcClient) -> None:
    created = svc_client.create_product(
        "Book", "fixed", amount=5000, description="A novel", metadata={"sku": "b-1"}
    )
    product = created.product
    assert (product.title, product.status, product.pricing_model) == ("Book", "draft", "fixed")
    assert created.price is not None and created.price.amount == 5000
    assert product.metadata == {"sku": "b-1"} and product.checkout_token.startswith("p_")

    assert svc_client.get_product(product.checkout_token).product.id == product.id
    updated = svc_client.update_product(product.id, title="Big book", status="published")
    assert updated.product.title == "Big book" and updated.url is not None
    # No field: PATCH {}, the product as it stands (the client refused it; the API takes it).
    assert svc_client.update_product(product.id).product.title == "Big book"

    svc_client.create_product("Tip jar", "pwyw", minimum_amount=100, status="published")
    svc_client.create_product("Sample", "free")
    page = svc_client.list_products(status="published", limit=10)
    assert [p.title for p in page.items] == ["Tip jar", "Big book"]  # newest first
    assert (page.total, page.page, page.limit) == (2, 1, 10)

    archived = svc_client.archive_product(product.id)
    assert archived.product.status == "archived"


def test_what_the_service_trims_is_checked_trimmed(live: SvcClient) -> None:
    """120 characters with whitespace around them are a title and a custom description the
    service takes (it trims them); a phone with spaces around it too."""
    padded = " " + "x" * 120 + "\t"
    product = live.create_product(padded, "free").product
    assert product.title == "x" * 120
    created = live.create_custom_checkout(
        500, padded, gateway="telebirr", customer={**BUYER, "phone": " 0911223344 "}
    )
    assert created.mode == "direct"


def test_products_of_another_tenant_are_not_found(
    svc_client: SvcClient, svc_emulator: Emulator
) -> None:
    theirs = svc_emulator.create_tenant("Other shop")
    with SvcClient(theirs.token, base_url=svc_emulator.base_url) as other:
        product = other.create_product("Theirs", "free").product
    with pytest.raises(SvcNotFoundError) as caught:
        svc_client.get_product(product.id)
    assert (caught.value.status, caught.value.code) == (404, "not_found")
    assert caught.value.request_id is not None and caught.value.request_id.startswith("req_")


# --- checkout -----------------------------------------------------------------------------


def test_product_checkout_of_a_free_product_gives_the_order_at_once(
    svc_client: SvcClient,
) -> None:
    product = svc_client.create_product("Sample", "free", status="published").product
    result = svc_client.create_checkout(product.id, customer={"email": "a@example.com"})
    assert result.free and result.order_id is not None


def test_a_sandbox_push_with_the_paying_trigger_phone_completes(
    svc_client: SvcClient,
) -> None:
    product = svc_client.create_product("Book", "fixed", amount=5000, status="published")
    result = svc_client.create_checkout(
        product.product.checkout_token,
        gateway="mpesa",
        customer={"email": "a@example.com", "phone": "251900000001"},
        metadata={"cart": 42, "gift": True},
    )
    assert result.mode == "redirect" and result.checkout_url is not None
    status = svc_client.wait_for_checkout(result.session_id, sleep=pytest.fail)
    assert status.paid and status.amount == 5000 and status.order_status == "paid"
    orders = svc_client.list_orders(status="paid")
    assert [o.checkout_session_id for o in orders.items] == [result.session_id]
    assert orders.items[0].metadata == {"cart": "42", "gift": "true"}


def test_a_failed_push_reports_its_failure_code(svc_client: SvcClient) -> None:
    result = svc_client.create_custom_checkout(
        2500, "Donation", gateway="telebirr", customer={"email": "a@b.et", "phone": "251900000002"}
    )
    status = svc_client.get_checkout(result.session_id)
    assert status.status == "expired" and status.failure is not None
    assert status.failure.code == "payment_failed"


def test_wait_for_checkout_moves_the_sandbox_clock_until_the_link_expires(
    svc_client: SvcClient, svc_clock: SvcClock
) -> None:
    result = svc_client.create_custom_checkout(1500, "Ticket")
    assert result.mode == "redirect"
    started = svc_clock.now()
    status = svc_client.wait_for_checkout(
        result.session_id, interval=60, timeout=3600, sleep=svc_clock.advance
    )
    assert status.status == "expired" and status.failure is not None
    assert status.failure.code == "session_expired"
    assert (svc_clock.now() - started).total_seconds() == 30 * 60


def test_wait_for_checkout_gives_up_with_poll_timeout(
    svc_client: SvcClient, svc_clock: SvcClock
) -> None:
    result = svc_client.create_custom_checkout(1500, "Ticket")
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        svc_clock.advance(seconds)

    with pytest.raises(SvcPollTimeout) as caught:
        svc_client.wait_for_checkout(result.session_id, interval=2, timeout=10, sleep=sleep)
    assert caught.value.code == "poll_timeout" and caught.value.status is None
    assert slept == [2.0] * 5
    assert caught.value.last is not None and caught.value.last.status == "open"
    said = "after 6 polls over 10.0 s: the next poll would pass the 10 s timeout"
    assert said in caught.value.message


# --- balance and withdrawals ---------------------------------------------------------------


def test_a_sandbox_organization_has_no_withdrawable_balance(svc_client: SvcClient) -> None:
    balance = svc_client.get_balance()
    assert (balance.eligible, balance.balance_minor, balance.currency) == (False, 0, "ETB")


def test_earnings_withdrawn_once_per_idempotency_key(live: SvcClient, svc_clock: SvcClock) -> None:
    assert earn(live, svc_clock, 50000).paid
    assert live.get_balance().balance_minor == 50000

    first = live.create_withdrawal(20000, "telebirr", "0911223344", idempotency_key="order-123")
    again = live.create_withdrawal(20000, "telebirr", "0911223344", idempotency_key="order-123")
    assert again.id == first.id and first.idempotency_key == "order-123"
    assert first.net_amount == first.amount - first.fee_amount - first.tax_amount
    assert live.get_balance().balance_minor == 30000

    assert live.get_withdrawal(first.id).id == first.id
    assert [w.id for w in live.list_withdrawals().items] == [first.id]


def test_a_withdrawal_above_the_earnings_names_the_amount(
    live: SvcClient, svc_clock: SvcClock
) -> None:
    earn(live, svc_clock, 20000)
    with pytest.raises(SvcClientError) as caught:
        live.create_withdrawal(30000, "mpesa", "0911223344")
    assert caught.value.status == 400 and "amount" in caught.value.message


# --- errors -------------------------------------------------------------------------------


def test_an_unknown_token_is_a_401_with_the_services_message(svc_emulator: Emulator) -> None:
    client = SvcClient("svc_test_unknown0000", base_url=svc_emulator.base_url)
    with client, pytest.raises(SvcAuthenticationError) as caught:
        client.list_orders()
    error = caught.value
    assert (error.status, error.code, error.message) == (401, "unauthorized", "Invalid API token")
    assert error.request_id is not None and error.request_id.startswith("req_")


def test_polling_a_session_needs_no_token(svc_client: SvcClient, svc_emulator: Emulator) -> None:
    result = svc_client.create_custom_checkout(1000, "Coffee")
    with SvcClient(base_url=svc_emulator.base_url) as anonymous:
        assert anonymous.get_checkout(result.session_id).status == "open"


# --- the request shapes fit the contract -----------------------------------------------------

CLIENT_OPERATIONS = set(BASE_URL_OPERATIONS)


def test_every_request_of_the_client_fits_the_contract(
    svc_client: SvcClient, live: SvcClient, svc_clock: SvcClock, svc_sandbox: Sandbox
) -> None:
    product = svc_client.create_product(
        "Book", "pwyw", minimum_amount=500, default_amount=900, media=["https://cdn.example/b.png"]
    ).product
    svc_client.update_product(product.id, status="published", minimum_amount=600)
    svc_client.get_product(product.checkout_token)
    svc_client.list_products(page=1, limit=5, status="published")
    link = svc_client.create_checkout(
        product.id, amount=700, customer=BUYER, success_url="https://shop.example/{CHECKOUT_ID}"
    )
    svc_client.get_checkout(link.session_id)
    svc_client.create_checkout(product.id, amount=700, success_url="myapp://paid/{CHECKOUT_ID}")
    svc_client.list_orders(status="pending")
    svc_client.archive_product(product.id)
    earn(live, svc_clock, 30000)
    live.get_balance()
    withdrawal = live.create_withdrawal(10000, "cbe", "251911223344", idempotency_key="k-1")
    live.get_withdrawal(withdrawal.id)
    live.list_withdrawals(status="pending", limit=100)

    report = svc_sandbox.conformance.report()
    assert report["violations"] == []
    exercised = {o["operationId"] for o in report["operations"] if o["requests"]}
    assert exercised == CLIENT_OPERATIONS


def test_help_shows_each_method_with_the_parameters_of_its_operation() -> None:
    """Each method takes its operation's parameters after ``self`` and returns what the call
    answers: ``help(SvcClient.update_product)`` showed ``(self, /, *args, **kwargs)``."""
    import inspect

    from svc_sandbox.client import AsyncSvcClient

    update = inspect.signature(SvcClient.update_product)
    assert list(update.parameters)[:3] == ["self", "product_id", "title"]
    assert update.parameters["amount"].kind is inspect.Parameter.KEYWORD_ONLY
    assert update.return_annotation == "ProductResponse"
    for name in ("create_product", "get_product", "list_orders", "create_withdrawal"):
        method = inspect.signature(getattr(SvcClient, name))
        kinds = {p.kind for p in method.parameters.values()}
        assert inspect.Parameter.VAR_POSITIONAL not in kinds, name
        assert method == inspect.signature(getattr(AsyncSvcClient, name)), name
