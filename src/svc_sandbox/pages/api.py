"""Hosted pages (server-rendered, working without JavaScript), on three roots:

* {pay_url}/cs_<id>: the payment-link page; POST {pay_url}/<payToken> is one attempt;
* {simulate_url}/<session_id>: the sandbox simulator, approve and fail buttons;
* {product_page_url}/<token>: a published product's public page, which starts a hosted checkout.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, redirect, render_template, request

from svc_sandbox.commerce.api import client_ip
from svc_sandbox.commerce.schemas import CheckoutBody, PayBody
from svc_sandbox.core.errors import NotFound, SandboxError
from svc_sandbox.core.validation import parse
from svc_sandbox.pages.views import field_errors, product_view, santim, session_view
from svc_sandbox.web import error_response, json_body, json_response, sandbox

#: The stylesheet and the small scripts of the hosted pages and the dashboard (no CDN).
assets = Blueprint("assets", __name__, static_folder="static", static_url_path="")
ASSETS_PREFIX = "/_assets"
pay = Blueprint("pay_pages", __name__, template_folder="templates")
simulate = Blueprint("simulator_pages", __name__, template_folder="templates")
product_pages = Blueprint("product_pages", __name__, template_folder="templates")


def wants_json() -> bool:
    return request.mimetype == "application/json"


def page(template: str, status: int = 200, **context: Any) -> Response:
    context.setdefault("values", {})
    context.setdefault("errors", {})
    return Response(render_template(template, **context), status, mimetype="text/html")


def form_page(template: str, error: SandboxError, **context: Any) -> Response:
    """The form again after a refused submission: what was typed, the error by its field."""
    values = dict(request.form.items())
    response = page(
        template,
        error.status,
        error=error.message,
        values=values,
        errors=field_errors(error.message, list(values)),
        **context,
    )
    response.headers.update(error.headers)
    return response


def not_found_page(message: str) -> Response:
    return render_page_error(NotFound(message))


def render_page_error(error: SandboxError) -> Response:
    if wants_json():
        return error_response(error, {"error": error.message})
    title = "Page not found" if error.status == 404 else "Something went wrong"
    response = page("message.html", error.status, title=title, error=error)
    for name, value in error.headers.items():
        response.headers[name] = value
    return response


for blueprint in (pay, simulate, product_pages):
    blueprint.register_error_handler(SandboxError, render_page_error)


def form_fields() -> dict[str, str]:
    """A submitted form without its empty inputs (an empty input means "not given")."""
    return {k: v for k, v in request.form.items() if v.strip() != ""}


# --- payment link -------------------------------------------------------------------------


@pay.get("/<pay_token>")
def pay_page(pay_token: str) -> Response:
    sb = sandbox()
    session = sb.checkout.by_pay_token(pay_token)
    return page("pay.html", session=session_view(sb, session))


@pay.post("/<pay_token>")
def pay_attempt(pay_token: str) -> Response:
    """One attempt: JSON answers CheckoutStatus; the page's form gets a redirect back (303)."""
    sb = sandbox()
    sb.limits.take_pay(client_ip())
    session = sb.checkout.by_pay_token(pay_token)
    if wants_json():
        sb.checkout.pay(pay_token, parse(PayBody, json_body()))
        return json_response(sb.checkout.status_of(session))
    try:
        sb.checkout.pay(pay_token, parse(PayBody, form_fields()))
    except SandboxError as error:
        return form_page("pay.html", error, session=session_view(sb, session))
    return redirect(f"{sb.settings.root('pay_url')}/{pay_token}", 303)  # type: ignore[return-value]


# --- simulator ----------------------------------------------------------------------------


@simulate.get("/<session_id>")
def simulator_page(session_id: str) -> Response:
    sb = sandbox()
    return page("simulate.html", session=session_view(sb, sb.checkout.get(session_id)))


@simulate.post("/<session_id>/approve")
def simulator_approve(session_id: str) -> Response:
    sb = sandbox()
    sb.checkout.get(session_id)
    sb.payments.approve(session_id)
    return back_to_simulator(session_id)


@simulate.post("/<session_id>/fail")
def simulator_fail(session_id: str) -> Response:
    sb = sandbox()
    sb.checkout.get(session_id)
    fields = json_body() if wants_json() else form_fields()
    sb.payments.fail(session_id, str(fields.get("code", "payment_failed")))
    return back_to_simulator(session_id)


def back_to_simulator(session_id: str) -> Response:
    sb = sandbox()
    if wants_json():
        return json_response(sb.checkout.status(session_id))
    url = f"{sb.settings.root('simulate_url')}/{session_id}"
    return redirect(url, 303)  # type: ignore[return-value]


# --- product page -------------------------------------------------------------------------


def published_product(token: str) -> Any:
    product = sandbox().products.find(token)
    if product is None or not product.published:
        raise NotFound("Product not found")
    return product


@product_pages.get("/<token>")
def product_page(token: str) -> Response:
    return page("product.html", product=product_view(sandbox(), published_product(token)))


@product_pages.post("/<token>")
def product_buy(token: str) -> Response:
    """The buy form: a checkout without a token and without a gateway (the hosted page)."""
    sb = sandbox()
    product = published_product(token)
    sb.limits.take_checkout(None, client_ip())
    fields = form_fields()
    answers = {k[len("field_") :]: v for k, v in fields.items() if k.startswith("field_")}
    body: dict[str, Any] = {
        "productId": token,
        "customer": {k: fields[k] for k in ("email", "name") if k in fields},
    }
    if answers:
        body["collectedFields"] = answers
    try:
        if "amount" in fields:
            body["amount"] = santim(fields["amount"])
        result = sb.checkout.create(None, parse(CheckoutBody, body))
    except SandboxError as error:
        return form_page("product.html", error, product=product_view(sb, product))
    if "orderId" in result:
        return page("message.html", title="Thank you", done=result, error=None)
    return redirect(result["checkoutUrl"], 303)  # type: ignore[return-value]
