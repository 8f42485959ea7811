"""The commerce API's HTTP edge: parse, call the services, serialize. Mounted at {base_url}."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from svc_sandbox.commerce.checkout import fields_not_applying
from svc_sandbox.commerce.products import Product
from svc_sandbox.commerce.schemas import CheckoutBody, ProductCreateBody, ProductUpdateBody
from svc_sandbox.contract import api as contract_api
from svc_sandbox.core.authorization import scheme_and_credentials
from svc_sandbox.core.errors import Forbidden, SandboxError, Unauthorized
from svc_sandbox.core.pagination import paginate, parse_page_request
from svc_sandbox.orgs.organizations import Principal
from svc_sandbox.web import (
    current_request,
    error_response,
    json_response,
    parse_body,
    query_values,
    sandbox,
)

blueprint = Blueprint("commerce", __name__)


#: RFC 9110 §15.5.2: a 401 names the scheme it wants; RFC 6750 §3: with ``invalid_token``
#: when a token was presented, without an error code when none was.
CHALLENGE = 'Bearer realm="svc-sandbox"'


@blueprint.errorhandler(SandboxError)
def render_error(error: SandboxError) -> Response:
    """Spec §7: 401 answers ``{message}`` (with its challenge); every other commerce error
    ``{error}``."""
    if error.status != 401:
        return error_response(error, {"error": error.message})
    response = error_response(error, {"message": error.message})
    # RFC 6750 §3.1: no credentials, or another scheme (Basic) or none after Bearer, is a
    # request without a token: the challenge names no error.
    scheme, token = scheme_and_credentials(current_request().environ.get("HTTP_AUTHORIZATION", ""))
    presented = scheme.lower() == "bearer" and bool(token)
    response.headers["WWW-Authenticate"] = (
        CHALLENGE + ', error="invalid_token"' if presented else CHALLENGE
    )
    return response


def optional_principal() -> Principal | None:
    """The caller's organization, None without an Authorization header, 401 for a bad one."""
    # The header as the server put it in the environ (what ``request.headers`` reads).
    header = current_request().environ.get("HTTP_AUTHORIZATION")
    if header is None:
        return None
    scheme, token = scheme_and_credentials(header)
    if scheme.lower() != "bearer":
        raise Unauthorized("Malformed Authorization header: expected 'Bearer <API token>'")
    if not token:
        raise Unauthorized("Missing API token: send 'Authorization: Bearer <API token>'")
    return sandbox().orgs.authenticate(token)


def require_principal() -> Principal:
    principal = optional_principal()
    if principal is None:
        message = "No API token and no dashboard session: send 'Authorization: Bearer <token>'"
        if sandbox().settings.no_credentials_status == 401:
            raise Unauthorized(message)
        raise Forbidden(message)
    return principal


def product_response(product: Product) -> dict[str, Any]:
    sb = sandbox()
    return {
        "product": product.to_public(),
        "price": product.price(),
        "url": sb.products.url_of(product, sb.settings.root("product_page_url")),
    }


def product_list_item(product: Product) -> dict[str, Any]:
    response = product_response(product)
    return {**response["product"], "price": response["price"], "url": response["url"]}


@blueprint.post("/products")
def create_product() -> Response:
    principal = require_principal()
    body = parse_body(ProductCreateBody)
    product = sandbox().products.create(principal.org.id, body)
    return json_response(product_response(product), 201)


@blueprint.get("/products")
def list_products() -> Response:
    principal = require_principal()
    query = query_values()
    page = parse_page_request(query)
    products = sandbox().products.list_for(principal.org.id, query.get("status"))
    return json_response(paginate(products, page, product_list_item))


@blueprint.get("/products/<ref>")
def get_product(ref: str) -> Response:
    principal = require_principal()
    return json_response(product_response(sandbox().products.get(principal.org.id, ref)))


@blueprint.patch("/products/<ref>")
def update_product(ref: str) -> Response:
    principal = require_principal()
    body = parse_body(ProductUpdateBody)
    product = sandbox().products.update(principal.org.id, ref, body)
    return json_response(product_response(product))


@blueprint.delete("/products/<ref>")
def archive_product(ref: str) -> Response:
    principal = require_principal()
    product = sandbox().products.archive(principal.org.id, ref)
    response = product_response(product)
    return json_response({"product": response["product"], "url": response["url"]})


# --- checkout and orders (§4) --------------------------------------------------------------


def client_ip() -> str:
    return current_request().remote_addr or "unknown"


@blueprint.post("/checkout")
def create_checkout() -> Response:
    principal = optional_principal()
    sb = sandbox()
    sb.limits.take_checkout(principal.token.token if principal else None, client_ip())
    body = parse_body(CheckoutBody)
    result = sb.checkout.create(principal, body)
    for name in fields_not_applying(body):
        contract_api.notice(
            f"body.{name}",
            f"{name} does not apply to a custom-amount checkout (no productId): it was ignored",
        )
    return json_response(result)


@blueprint.get("/checkout/<session_id>")
def checkout_status(session_id: str) -> Response:
    return json_response(sandbox().checkout.status(session_id))


@blueprint.get("/orders")
def list_orders() -> Response:
    principal = require_principal()
    query = query_values()
    page = parse_page_request(query)
    orders = sandbox().orders.list_for(
        principal.org.id, query.get("status"), principal.environment.value
    )
    return json_response(paginate(orders, page, lambda order: order.to_public()))
