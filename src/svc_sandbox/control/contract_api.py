"""Control-plane routes of the contract: the document and the conformance report.

Documented with examples in docs/control-plane.md (## Contract and conformance).
"""

from __future__ import annotations

from flask import Blueprint, Response

from svc_sandbox.contract.api import ROOTS
from svc_sandbox.contract.conformance import ConformanceRecorder
from svc_sandbox.contract.document import BY_NAME, served_contract
from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.web import error_response, json_response, query_values, sandbox, takes_query

blueprint = Blueprint("control_contract", __name__)


@blueprint.errorhandler(SandboxError)
def render_error(error: SandboxError) -> Response:
    return error_response(error, {"error": error.message, "code": error.code})


#: ``?contract=`` names: the document and the settings root it is served under.
CONTRACTS = {name: (document, dict(ROOTS)[document]) for name, document in BY_NAME.items()}


def chosen_contract() -> tuple[str, str]:
    """The contract ``?contract=`` names: ``commerce`` (default), ``identity`` or ``wallet``."""
    name = query_values().get("contract", "commerce")
    if name not in CONTRACTS:
        raise ValidationFailed("contract must be commerce, identity or wallet")
    return CONTRACTS[name]


def chosen_recorder() -> ConformanceRecorder:
    return sandbox().recorders[chosen_contract()[0]]


@blueprint.get("/contract")
@takes_query("contract", "format")
def contract_document() -> Response:
    """A contract (``?contract=commerce|identity|wallet``; JSON, ``?format=yaml`` for YAML)."""
    name, root = chosen_contract()
    document = served_contract(sandbox().settings.root(root), name)
    wanted = query_values().get("format", "json")
    if wanted == "json":
        return json_response(document)
    if wanted == "yaml":
        import yaml

        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
        return Response(text, mimetype="application/yaml")
    raise ValidationFailed("format must be json or yaml")


@blueprint.get("/conformance")
@takes_query("contract")
def conformance_report() -> Response:
    """The report of one contract (``?contract=``, default commerce)."""
    return json_response(chosen_recorder().report())


@blueprint.delete("/conformance")
@takes_query("contract")
def clear_conformance() -> Response:
    """Clears the report of the contract ``?contract=`` names, and answers it."""
    chosen = chosen_recorder()
    chosen.clear()
    return json_response(chosen.report())
