"""The dashboard's pages at {origin}/_sandbox/ui (GET only; server-rendered, autoescaped).

Its buttons and forms are sent by static/dashboard.js as same-origin JSON requests to the
control plane's own routes, so the dashboard has no state-changing route of its own: the
control plane's JSON-only rule is its CSRF protection (a cross-site form cannot send
``application/json``; a cross-site fetch that does needs a CORS preflight the sandbox never
grants). The script also refreshes the live parts of each page by polling it.
"""

from __future__ import annotations

from flask import Blueprint, Response, render_template, request

from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.dashboard import views
from svc_sandbox.web import query_values, sandbox

blueprint = Blueprint("dashboard", __name__, template_folder="templates")


def html(template: str, status: int = 200, **context: object) -> Response:
    return Response(render_template(template, **context), status, mimetype="text/html")


@blueprint.errorhandler(SandboxError)
def not_found(error: SandboxError) -> Response:
    """Unknown sections and ids: a page saying so (never a stack trace)."""
    context = views.timed(sandbox(), {"error": error})  # its footer's time too
    return html(
        "dashboard/error.html", error.status, sections=views.SECTIONS, current=None, **context
    )


@blueprint.get("")
@blueprint.get("/")
@blueprint.get("/<section>")
def section_page(section: str = "") -> Response:
    context = views.section(sandbox(), section)
    template = f"dashboard/{section or 'overview'}.html"
    return html(template, sections=views.SECTIONS, current=section, **context)


@blueprint.get("/requests")
def requests_page() -> Response:
    """The request journal, filtered by the page's query (a refused filter: 400, said beside
    the form)."""
    sb = sandbox()
    try:
        asked, refused = dict(query_values()), None
    except ValidationFailed as refusal:  # a parameter sent twice: said beside the form too
        asked, refused = request.args.to_dict(), refusal.message
    context = views.timed(sb, views.requests(sb, asked, refused))
    status = 400 if context["refusal"] else 200
    return html(
        "dashboard/requests.html", status, sections=views.SECTIONS, current="requests", **context
    )


@blueprint.get("/checkouts/<session_id>")
def checkout_page(session_id: str) -> Response:
    context = views.checkout_detail(sandbox(), session_id)
    return html("dashboard/checkout.html", sections=views.SECTIONS, current="checkouts", **context)
