"""Control-plane routes of withdrawals: review decisions, the owner-wallet switch, listing.

The real service decides reviews and knows the owner's wallet in its back office; here a test
or a person does. Documented in docs/control-plane.md ("Withdrawals").
"""

from __future__ import annotations

from flask import Blueprint, Response

from svc_sandbox.commerce.payouts import LIFECYCLE, Withdrawal
from svc_sandbox.control.api import render_error
from svc_sandbox.control.schemas import OwnerWalletBody, ReviewBody, WithdrawalListQuery
from svc_sandbox.core.errors import SandboxError
from svc_sandbox.core.pagination import paginate, parse_page_request
from svc_sandbox.core.validation import parse
from svc_sandbox.web import json_body, json_response, parse_body, query_values, sandbox, takes_query

blueprint = Blueprint("control_payouts", __name__)
blueprint.register_error_handler(SandboxError, render_error)


def withdrawal_view(withdrawal: Withdrawal) -> dict[str, object]:
    """The public shape plus what only the control plane shows."""
    return {**withdrawal.to_public(), "organizationId": withdrawal.org_id}


@blueprint.get("/withdrawals")
@takes_query(WithdrawalListQuery)
def list_withdrawals() -> Response:
    """Newest first; filters ``orgId`` (or ``org``) and ``status``; an organization that does
    not exist has no withdrawals (an empty page, as the event log's ``orgId``)."""
    values = query_values()
    query = parse(WithdrawalListQuery, dict(values))
    page = parse_page_request(values)
    found = sandbox().payouts.list_for(query.organization(), query.status)
    return json_response(paginate(found, page, withdrawal_view))


@blueprint.get("/withdrawals/lifecycle")
def lifecycle() -> Response:
    return json_response({"name": LIFECYCLE.name, "transitions": LIFECYCLE.table()})


@blueprint.get("/withdrawals/<withdrawal_id>")
def get_withdrawal(withdrawal_id: str) -> Response:
    return json_response(withdrawal_view(sandbox().payouts.find(withdrawal_id)))


@blueprint.post("/withdrawals/<withdrawal_id>/approve")
def approve(withdrawal_id: str) -> Response:
    body = parse(ReviewBody, json_body(optional=True))
    return json_response(withdrawal_view(sandbox().payouts.approve(withdrawal_id, body.note)))


@blueprint.post("/withdrawals/<withdrawal_id>/reject")
def reject(withdrawal_id: str) -> Response:
    body = parse(ReviewBody, json_body(optional=True))
    return json_response(withdrawal_view(sandbox().payouts.reject(withdrawal_id, body.note)))


@blueprint.get("/orgs/<org_id>/owner-wallet")
def read_owner_wallet(org_id: str) -> Response:
    can_cover = sandbox().payouts.owner_wallet_can_cover(org_id)
    return json_response({"organizationId": org_id, "canCover": can_cover})


@blueprint.put("/orgs/<org_id>/owner-wallet")
def set_owner_wallet(org_id: str) -> Response:
    body = parse_body(OwnerWalletBody)
    can_cover = sandbox().payouts.set_owner_wallet(org_id, body.canCover)
    return json_response({"organizationId": org_id, "canCover": can_cover})
