"""AsyncSvcClient: the same operations and errors as SvcClient, awaited."""

from __future__ import annotations

import asyncio

import pytest

from svc_sandbox.client import AsyncSvcClient, SvcNotFoundError, SvcPollTimeout
from svc_sandbox.testing.clock import SvcClock
from svc_sandbox.testing.emulator import Emulator, Tenant


def test_the_async_client_checks_out_and_waits_on_the_sandbox_clock(
    svc_emulator: Emulator, svc_org: Tenant, svc_clock: SvcClock
) -> None:
    async def scenario() -> None:
        async with AsyncSvcClient(svc_org.token, base_url=svc_emulator.base_url) as svc:
            product = await svc.create_product("Book", "fixed", amount=5000, status="published")
            paid = await svc.create_checkout(
                product.product.id,
                gateway="cbe",
                customer={"email": "a@example.com", "phone": "251900000001"},
            )
            assert (await svc.wait_for_checkout(paid.session_id)).paid
            link = await svc.create_custom_checkout(1000, "Ticket")
            expired = await svc.wait_for_checkout(
                link.session_id, interval=300, timeout=3600, sleep=svc_clock.advance
            )
            assert expired.failure is not None and expired.failure.code == "session_expired"
            orders = await svc.list_orders()
            assert [o.checkout_session_id for o in orders.items] == [paid.session_id]
            with pytest.raises(SvcNotFoundError):
                await svc.get_withdrawal("0" * 24)

    asyncio.run(scenario())


def test_the_async_poll_gives_up_with_poll_timeout(svc_emulator: Emulator, svc_org: Tenant) -> None:
    async def scenario() -> SvcPollTimeout:
        async with AsyncSvcClient(svc_org.token, base_url=svc_emulator.base_url) as svc:
            link = await svc.create_custom_checkout(1000, "Ticket")

            async def no_wait(seconds: float) -> None:
                pass

            with pytest.raises(SvcPollTimeout) as caught:
                await svc.wait_for_checkout(link.session_id, timeout=6, sleep=no_wait)
            return caught.value

    assert asyncio.run(scenario()).code == "poll_timeout"


def test_the_async_client_refuses_invalid_arguments_before_sending() -> None:
    async def scenario() -> None:
        async with AsyncSvcClient(base_url="http://127.0.0.1:9/api") as svc:
            with pytest.raises(ValueError, match="^token"):
                await svc.create_custom_checkout(1000, "Tip")
            with pytest.raises(ValueError, match="^limit"):
                await svc.list_products(limit=0)

    asyncio.run(scenario())
