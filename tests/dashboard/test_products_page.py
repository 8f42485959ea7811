"""The dashboard's product list: the price column says what a buyer pays."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.commerce.checkout_helpers import published


@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        ({"pricingModel": "fixed", "price": {"amount": 5_000}}, "50.00 ETB"),
        ({"pricingModel": "pwyw", "price": {"minimumAmount": 500}}, "from 5.00 ETB"),
        (
            {"pricingModel": "pwyw", "price": {"minimumAmount": 0, "defaultAmount": 2_000}},
            "from 0.00 ETB",
        ),
        ({"pricingModel": "free", "price": None}, "0.00 ETB"),
    ],
    ids=["fixed", "pwyw", "pwyw-0", "free"],
)
def test_the_price_column_says_from_for_pay_what_you_want(
    svc_http: FlaskClient, auth: dict[str, str], fields: dict[str, Any], shown: str
) -> None:
    product = published(svc_http, auth, title="Priced", **fields)
    html = svc_http.get("/_sandbox/ui/products").get_data(as_text=True)
    row = next(r for r in html.split("<tr>") if product["_id"] in r)
    assert f'<td class="num">{shown}</td>' in row
