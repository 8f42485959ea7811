"""Control-plane routes of the contract: the document and the conformance report.

Documented with examples in docs/control-plane.md (## Contract and conformance).
"""

from __future__ import annotations

from flask import Blueprint, Response, request

from svc_sandbox.contract.conformance import ConformanceRecorder
from svc_sandbox.contract.document import COMMERCE, IDENTITY, served_contract
from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.web import error_response, json_response, sandbox

blueprint = Blueprint("control_contract", __name__)


@blueprint.errorhandler(SandboxError)
def render_error(error: SandboxError) -> Response:
    return error_response(error, {"error": error.message, "code": error.code})


def family() -> str:
    """``?contract=commerce`` (default) or ``?contract=identity``."""
    name = request.args.get("contract", "commerce")
    if name not in ("commerce", "identity"):
        raise ValidationFailed("contract must be commerce or identity")
    return name


def recorder() -> ConformanceRecorder:
    sb = sandbox()
    return sb.identity_conformance if family() == "identity" else sb.conformance


@blueprint.get("/contract")
def contract_document() -> Response:
    """The commerce or identity contract (JSON; ``?format=yaml`` for YAML)."""
    settings = sandbox().settings
    if family() == "identity":
        document = served_contract(settings.issuer, IDENTITY)
    else:
        document = served_contract(settings.root("base_url"), COMMERCE)
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
    return json_response(recorder().report())


@blueprint.delete("/conformance")
def clear_conformance() -> Response:
    recorder().clear()
    return json_response(recorder().report())
