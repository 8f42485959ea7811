"""The one place tests get paid production earnings from.

Until checkout lands, ``earn`` adds a paid production order in-process (as checkout would);
when it does, this becomes a real production checkout over HTTP, and no test changes.
"""

from __future__ import annotations

from flask.testing import FlaskClient

from svc_sandbox.commerce.orders import CUSTOM_PAYMENT_TITLE, Order
from svc_sandbox.sandbox import Sandbox


def earn(client: FlaskClient, auth: dict[str, str], amount: int) -> None:
    """Gives the organization of ``auth`` (a production token) ``amount`` santim of earnings."""
    sandbox: Sandbox = client.application.extensions["svc_sandbox"]
    principal = sandbox.orgs.authenticate(auth["Authorization"].removeprefix("Bearer "))
    with sandbox.lock:
        now = sandbox.now()
        sandbox.orders.add(
            Order(
                id=sandbox.ids.object_id(),
                org_id=principal.org.id,
                environment=principal.environment.value,
                checkout_session_id=sandbox.ids.object_id(),
                product_id=sandbox.ids.object_id(),
                product_title=CUSTOM_PAYMENT_TITLE,
                amount=amount,
                status="paid",
                created_at=now,
                paid_at=now,
                description="Earnings for payout tests",
            )
        )
