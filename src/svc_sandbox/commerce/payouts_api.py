"""HTTP edge of balance and withdrawals (spec §4), mounted at {base_url} beside commerce/api.py.

Authentication and the commerce error shape (401 ``{message}``, else ``{error}``) are the
ones of commerce/api.py, shared rather than copied.
"""

from __future__ import annotations

from flask import Blueprint, Response, request

from svc_sandbox.commerce.api import render_error, require_principal
from svc_sandbox.commerce.payouts import Withdrawal
from svc_sandbox.commerce.schemas import WithdrawalCreateBody
from svc_sandbox.core.errors import SandboxError
from svc_sandbox.core.pagination import paginate, parse_page_request
from svc_sandbox.web import json_response, parse_body, query_values, sandbox

blueprint = Blueprint("commerce_payouts", __name__)
blueprint.register_error_handler(SandboxError, render_error)


@blueprint.get("/balance")
def get_balance() -> Response:
    principal = require_principal()
    return json_response(sandbox().payouts.balance(principal.org.id).to_public())


@blueprint.post("/withdrawals")
def create_withdrawal() -> Response:
    principal = require_principal()
    body = parse_body(WithdrawalCreateBody)
    key = request.headers.get("Idempotency-Key")
    created = sandbox().payouts.create(principal.org.id, body, key)
    return json_response(created.withdrawal.to_public(), 200 if created.replayed else 201)


@blueprint.get("/withdrawals")
def list_withdrawals() -> Response:
    principal = require_principal()
    query = query_values()
    page = parse_page_request(query)
    status = query.get("status")
    found = sandbox().payouts.list_for(principal.org.id, status, principal.environment.value)
    return json_response(paginate(found, page, Withdrawal.to_public))


@blueprint.get("/withdrawals/<withdrawal_id>")
def get_withdrawal(withdrawal_id: str) -> Response:
    principal = require_principal()
    payouts = sandbox().payouts
    withdrawal = payouts.get(principal.org.id, withdrawal_id, principal.environment.value)
    return json_response(withdrawal.to_public())
