"""Hosted pages (server-rendered, working without JavaScript), on three roots:

* {pay_url}/cs_<id>: the payment-link page; POST {pay_url}/<payToken> is one attempt;
* {simulate_url}/<session_id>: the sandbox simulator, approve and fail buttons (sandbox
  sessions only: a production session is 404 there);
* {product_page_url}/<token>: a published product's public page, which starts a hosted checkout;
* {provider_url}/<session_id>: the emulated provider's hosted page of a production no-token
  checkout, where the buyer confirms (or cancels) the payment.

Every form carries a CSRF token (``exposure.FormTokens``) bound to what it acts on; a form post
without a valid one answers 403 and changes nothing. JSON requests need none.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, redirect, render_template, request

from svc_sandbox.commerce.api import client_ip
from svc_sandbox.commerce.products import Product
from svc_sandbox.commerce.schemas import CheckoutBody, HostedConfirmBody, PayBody
from svc_sandbox.core import json_input
from svc_sandbox.core.errors import NotFound, SandboxError, ValidationFailed
from svc_sandbox.core.validation import parse
from svc_sandbox.exposure import FormTokens
from svc_sandbox.exposure_api import form_tokens, require_form_token
from svc_sandbox.pages.views import (
    field_errors,
    field_labels,
    nothing_to_pay,
    product_view,
    pwyw_santim,
    session_view,
    thanked_order,
)
from svc_sandbox.web import error_response, form_body, json_body, json_response, sandbox

#: The stylesheet and the small scripts of the hosted pages and the dashboard (no CDN).
assets = Blueprint("assets", __name__, static_folder="static", static_url_path="")
ASSETS_PREFIX = "/_assets"
#: Browsers ask every origin for /favicon.ico; a 404 there is a console error on every first
#: page load (the dashboard audit), so the origin answers with the pages' icon.
favicon = Blueprint("favicon", __name__)
FAVICON_PATH = "/favicon.ico"


@favicon.get(FAVICON_PATH)
def favicon_icon() -> Response:
    return Response(_icon(), mimetype="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


@functools.cache
def _icon() -> bytes:
    return (Path(__file__).parent / "static" / "favicon.svg").read_bytes()


pay = Blueprint("pay_pages", __name__, template_folder="templates")
simulate = Blueprint("simulator_pages", __name__, template_folder="templates")
product_pages = Blueprint("product_pages", __name__, template_folder="templates")
provider = Blueprint("provider_pages", __name__, template_folder="templates")


def wants_json() -> bool:
    return request.mimetype == "application/json"


def page(
    template: str, status: int = 200, *, form_subject: str | None = None, **context: Any
) -> Response:
    """A rendered page; ``form_subject`` names what its forms act on (their CSRF token)."""
    csrf = form_tokens().issue(form_subject) if form_subject else None
    context.setdefault("values", {})
    context.setdefault("errors", {})
    text = render_template(template, csrf=csrf, **context)
    response = Response(text, status, mimetype="text/html")
    if request.method in ("GET", "HEAD"):
        # A page shows a session's state now: Back must fetch it again, not show a paid
        # session's Pay form. A POST's answer (a refused form) is kept, so that Back to it
        # is no "Confirm Form Resubmission"; forms.js fetches its page instead.
        response.headers["Cache-Control"] = "no-store"
    return response


def form_page(
    template: str,
    error: SandboxError,
    *,
    form_subject: str,
    labels: dict[str, str] | None = None,
    **context: Any,
) -> Response:
    """The form again after a refused submission: what was typed, the error by its field
    (named by its label in ``labels``)."""
    values = {k: v for k, v in form_body().items() if k != FormTokens.FIELD}
    response = page(
        template,
        error.status,
        form_subject=form_subject,
        error=error.message,
        values=values,
        # A labelled input left out of the body (a script's post) still gets its error.
        errors=field_errors(error.message, [*values, *(labels or {})], labels),
        **context,
    )
    response.headers.update(error.headers)
    return response


def not_found_page(message: str) -> Response:
    return render_page_error(NotFound(message))


def render_page_error(error: SandboxError) -> Response:
    if wants_json():
        return error_response(error, {"error": error.message})
    title = {404: "Page not found", 429: "Too many tries"}.get(error.status, "Something went wrong")
    response = page("message.html", error.status, title=title, error=error)
    for name, value in error.headers.items():
        response.headers[name] = value
    return response


for blueprint in (pay, simulate, product_pages, provider):
    blueprint.register_error_handler(SandboxError, render_page_error)


def form_fields() -> dict[str, str]:
    """A submitted form without its empty inputs (an empty input means "not given") and
    without its CSRF token (checked before). Its strings pass the same check as a JSON body's
    (no NUL: a form can send ``%00``)."""
    fields = {k: v for k, v in form_body().items() if v.strip() != "" and k != FormTokens.FIELD}
    json_input.check(fields, "form")
    return fields


# --- payment link -------------------------------------------------------------------------


@pay.get("/<pay_token>")
def pay_page(pay_token: str) -> Response:
    sb = sandbox()
    session = sb.checkout.by_pay_token(pay_token)
    return page("pay.html", form_subject=pay_token, session=session_view(sb, session))


@pay.post("/<pay_token>")
def pay_attempt(pay_token: str) -> Response:
    """One attempt: JSON answers CheckoutStatus; the page's form gets a redirect (303) to the
    simulator page when the prompt waits for it (§8: "any other number opens the simulator
    page"), else back to the payment page (a trigger phone's outcome, a custom trigger)."""
    sb = sandbox()
    require_form_token(pay_token)
    if wants_json():
        sb.limits.take_pay(client_ip())
        session = sb.checkout.by_pay_token(pay_token)
        sb.checkout.pay(pay_token, parse(PayBody, json_body()))
        return json_response(sb.checkout.status_of(session))
    try:
        # The limit first, as above (§8 counts attempts at any token); refused, the buyer
        # gets the form back with what was typed, and the wait.
        sb.limits.take_pay(client_ip())
        session = sb.checkout.by_pay_token(pay_token)
        sb.checkout.pay(pay_token, parse(PayBody, form_fields()))
    except SandboxError as error:
        session = sb.checkout.by_pay_token(pay_token)  # an unknown link: its 404 page
        return form_page(
            "pay.html", error, form_subject=pay_token, session=session_view(sb, session)
        )
    back = f"{sb.settings.root('pay_url')}/{pay_token}"
    return redirect(sb.checkout.simulator_waiting(session) or back, 303)  # type: ignore[return-value]


# --- simulator ----------------------------------------------------------------------------


@simulate.get("/<session_id>")
def simulator_page(session_id: str) -> Response:
    sb = sandbox()
    view = session_view(sb, sb.checkout.simulated_session(session_id))
    return page("simulate.html", form_subject=session_id, session=view)


@simulate.post("/<session_id>/approve")
def simulator_approve(session_id: str) -> Response:
    sb = sandbox()
    require_form_token(session_id)
    sb.checkout.simulated_session(session_id)
    refused = refusal_of(lambda: sb.payments.approve(session_id))
    if refused is not None:
        return simulator_again(session_id, refused)
    return back_to_simulator(session_id)


@simulate.post("/<session_id>/fail")
def simulator_fail(session_id: str) -> Response:
    sb = sandbox()
    require_form_token(session_id)
    sb.checkout.simulated_session(session_id)
    fields = json_body() if wants_json() else form_fields()
    if not isinstance(fields, dict):
        raise ValidationFailed("body must be a JSON object")
    code = str(fields.get("code", "payment_failed"))
    refused = refusal_of(lambda: sb.payments.fail(session_id, code))
    if refused is not None:
        return simulator_again(session_id, refused)
    return back_to_simulator(session_id)


def refusal_of(decide: Callable[[], object]) -> SandboxError | None:
    """Runs a button's decision; its refusal, for a page to show, or None once done. A JSON
    request gets the refusal as raised. A decision a page of an earlier state asks for (a
    second tab: Approve on a session paid in the other) was the dead-end error page; the
    page shows the session as it is now, with the refusal."""
    try:
        decide()
    except SandboxError as error:
        if wants_json():
            raise
        return error
    return None


def simulator_again(session_id: str, error: SandboxError) -> Response:
    """The simulator page with the refusal as its message: the page has no field to mark
    (a refused ``code`` is a button's value, so its message is said whole)."""
    sb = sandbox()
    view = session_view(sb, sb.checkout.simulated_session(session_id))
    response = page(
        "simulate.html", error.status, form_subject=session_id, error=error.message, session=view
    )
    response.headers.update(error.headers)
    return response


def back_to_simulator(session_id: str) -> Response:
    sb = sandbox()
    if wants_json():
        return json_response(sb.checkout.status(session_id))
    url = f"{sb.settings.root('simulate_url')}/{session_id}"
    return redirect(url, 303)  # type: ignore[return-value]


# --- product page -------------------------------------------------------------------------


def published_product(token: str) -> Product:
    product = sandbox().products.find(token)
    if product is None or not product.published:
        raise NotFound("Product not found")
    return product


@product_pages.get("/<token>")
def product_page(token: str) -> Response:
    view = product_view(sandbox(), published_product(token))
    return page("product.html", form_subject=token, product=view)


@product_pages.post("/<token>")
def product_buy(token: str) -> Response:
    """The buy form: a checkout without a token and without a gateway (the hosted page)."""
    sb = sandbox()
    require_form_token(token)
    product = published_product(token)
    try:
        sb.limits.take_checkout(None, client_ip())
    except SandboxError as error:
        return product_form_again(product, error)  # with what was typed, and the wait
    fields = form_fields()
    answers = {k[len("field_") :]: v for k, v in fields.items() if k.startswith("field_")}
    body: dict[str, Any] = {
        "productId": token,
        "customer": {k: fields[k] for k in ("email", "name", "phone") if k in fields},
    }
    if answers:
        body["collectedFields"] = answers
    try:
        if "amount" in fields and product.pricing_model == "pwyw":
            body["amount"] = pwyw_santim(product, fields["amount"])
        if nothing_to_pay(product, body.get("amount")):
            body["customer"].pop("phone", None)  # the phone is for a payment; none is asked
        result = sb.checkout.create(None, parse(CheckoutBody, body))
    except SandboxError as error:
        return product_form_again(product, error)
    if "orderId" in result:
        # Post/redirect/get, as the paid flows: a reload of the thank-you page must not buy
        # again (it answered the POST itself, and a reload made a second order).
        done = f"{sb.settings.root('product_page_url')}/{token}/orders/{result['orderId']}"
        return redirect(done, 303)  # type: ignore[return-value]
    return redirect(result["checkoutUrl"], 303)  # type: ignore[return-value]


@product_pages.get("/<token>/orders/<order_id>")
def product_order_page(token: str, order_id: str) -> Response:
    """The thank-you page of an order the product page gave at once (nothing to pay)."""
    done = thanked_order(sandbox(), token, order_id)
    return page("message.html", title="Thank you", done=done, error=None)


def product_form_again(product: Product, error: SandboxError) -> Response:
    view = product_view(sandbox(), product)
    return form_page(
        "product.html",
        error,
        form_subject=product.checkout_token,
        labels=field_labels(view),
        product=view,
    )


# --- the emulated provider's hosted page (production, no token, no gateway) ----------------


@provider.get("/<session_id>")
def provider_page(session_id: str) -> Response:
    sb = sandbox()
    view = session_view(sb, sb.checkout.hosted_session(session_id))
    return page("provider.html", form_subject=session_id, session=view)


@provider.post("/<session_id>/confirm")
def provider_confirm(session_id: str) -> Response:
    """The buyer confirms with the phone they pay from; the page shows the outcome (303)."""
    sb = sandbox()
    require_form_token(session_id)
    sb.limits.take_provider_confirm(client_ip())
    fields = json_body() if wants_json() else form_fields()
    try:
        sb.checkout.confirm_hosted(session_id, parse(HostedConfirmBody, fields).phone)
    except SandboxError as error:
        if wants_json():
            raise
        view = session_view(sb, sb.checkout.hosted_session(session_id))
        return form_page("provider.html", error, form_subject=session_id, session=view)
    return back_to_provider(session_id)


@provider.post("/<session_id>/cancel")
def provider_cancel(session_id: str) -> Response:
    sb = sandbox()
    require_form_token(session_id)
    sb.checkout.hosted_session(session_id)
    refused = refusal_of(lambda: sb.payments.fail(session_id, "payment_canceled"))
    if refused is not None:
        view = session_view(sb, sb.checkout.hosted_session(session_id))
        return form_page("provider.html", refused, form_subject=session_id, session=view)
    return back_to_provider(session_id)


def back_to_provider(session_id: str) -> Response:
    sb = sandbox()
    if wants_json():
        return json_response(sb.checkout.status(session_id))
    return redirect(f"{sb.settings.root('provider_url')}/{session_id}", 303)  # type: ignore[return-value]
