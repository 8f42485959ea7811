"""Control-plane routes of the contract: the document and the conformance report.

Documented with examples in docs/control-plane.md (## Contract and conformance).
"""

from __future__ import annotations

from flask import Blueprint, Response, request

from svc_sandbox.contract.document import served_contract
from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.web import error_response, json_response, sandbox

blueprint = Blueprint("control_contract", __name__)


@blueprint.errorhandler(SandboxError)
def render_error(error: SandboxError) -> Response:
    return error_response(error, {"error": error.message, "code": error.code})


@blueprint.get("/contract")
def contract_document() -> Response:
    """The commerce contract (JSON; ``?format=yaml`` for YAML)."""
    document = served_contract(sandbox().settings.root("base_url"))
    wanted = request.args.get("format", "json")
    if wanted == "json":
        return json_response(document)
    if wanted == "yaml":
        import yaml

        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
        return Response(text, mimetype="application/yaml")
    raise ValidationFailed("format must be json or yaml")


@blueprint.get("/conformance")
def conformance_report() -> Response:
    return json_response(sandbox().conformance.report())


@blueprint.delete("/conformance")
def clear_conformance() -> Response:
    sandbox().conformance.clear()
    return json_response(sandbox().conformance.report())
