"""Control-plane routes of wallets: fund a user's wallet, set its balance, read its transfers
and ledger entries. ``<user>`` is a user id or handle. Documented in docs/control-plane.md
("Wallets")."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from svc_sandbox.control.api import render_error
from svc_sandbox.control.wallet_schemas import FundBody, SetBalanceBody
from svc_sandbox.core.errors import SandboxError
from svc_sandbox.web import json_response, parse_body, sandbox

blueprint = Blueprint("control_wallet", __name__)
blueprint.register_error_handler(SandboxError, render_error)


def wallet_view(user_id: str) -> dict[str, Any]:
    wallets = sandbox().wallets
    user = wallets.user(user_id)
    return {"userId": user.id, "handle": user.handle, **wallets.balance(user.id).to_public()}


@blueprint.get("/wallets")
def list_wallets() -> Response:
    return json_response({"items": [wallet_view(u.id) for u in sandbox().users.all()]})


@blueprint.get("/wallets/<user>")
def get_wallet(user: str) -> Response:
    return json_response(wallet_view(sandbox().wallets.user(user).id))


@blueprint.post("/wallets/<user>/fund")
def fund(user: str) -> Response:
    body = parse_body(FundBody)
    wallets = sandbox().wallets
    wallets.fund(wallets.user(user).id, body.amountMinor, body.note)
    return json_response(wallet_view(user))


@blueprint.put("/wallets/<user>/balance")
def set_balance(user: str) -> Response:
    body = parse_body(SetBalanceBody)
    wallets = sandbox().wallets
    wallets.set_available(wallets.user(user).id, body.availableMinor, body.note)
    return json_response(wallet_view(user))


@blueprint.get("/wallets/<user>/transfers")
def list_transfers(user: str) -> Response:
    wallets = sandbox().wallets
    found = wallets.transfers_of(wallets.user(user).id)
    return json_response({"items": [t.to_control() for t in found]})


@blueprint.get("/wallets/<user>/ledger")
def list_entries(user: str) -> Response:
    wallets = sandbox().wallets
    found = wallets.ledger(wallets.user(user).id)
    return json_response({"items": [e.to_public() for e in found]})
