"""The wallet API's HTTP edge (spec §4 "Wallet API", §5 two factors, §7), at {wallet_base_url}.

Every call proves two factors in this order (docs/spec-gaps.md, wallet): the bearer access
token from the Authorization header only (401 ``invalid_token``), then ``X-Svc-Key`` (401
``jamidev_key_required``), then the scope the route needs (403 ``insufficient_scope``).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.core.json_input import NumberTooLong
from svc_sandbox.wallet.access import WalletCaller, authenticate
from svc_sandbox.wallet.errors import bad_request
from svc_sandbox.wallet.send_input import amount_out_of_bounds, parse_send
from svc_sandbox.web import error_response, json_body, json_response, sandbox

blueprint = Blueprint("wallet", __name__)


@blueprint.errorhandler(SandboxError)
def render_error(error: SandboxError) -> Response:
    """Spec §7: body ``{error}`` (the code); ``message`` says what to fix."""
    return error_response(error, {"error": error.code, "message": error.message})


def caller(scope: str) -> WalletCaller:
    return authenticate(
        sandbox(),
        request.headers.get("Authorization"),
        request.headers.get("X-Svc-Key"),
        scope,
    )


def send_body() -> Any:
    """The JSON document of a send (web.json_body's rules); a 400 is ``invalid_request``."""
    try:
        request.get_data(cache=True).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise bad_request("invalid_request", f"body is not UTF-8 (byte {exc.start})") from None
    try:
        return json_body()
    except NumberTooLong as refused:
        # A valid JSON integer too long to read: as amountMinor it is out of §8's bounds.
        if refused.path == ("amountMinor",):
            raise amount_out_of_bounds(too_small=refused.negative) from None
        raise bad_request("invalid_request", refused.message) from None
    except ValidationFailed as refused:
        raise bad_request("invalid_request", refused.message) from None


@blueprint.get("")
@blueprint.get("/")
def read_balance() -> Response:
    who = caller("wallet:read")
    return json_response(sandbox().wallets.balance(who.user.id).to_public())


@blueprint.post("/send")
def send() -> Response:
    who = caller("wallet:send")
    body = parse_send(send_body())
    sent = sandbox().wallets.send(who.user, who.client_id, body)
    answer = {"transfer": sent.transfer.to_public(), "deduped": sent.deduped}
    return json_response(answer, 200 if sent.deduped else 201)
