"""Validates HTTP requests and responses against an OpenAPI 3.1 document.

OpenAPI 3.1 schemas are JSON Schema 2020-12, so each one is checked with jsonschema's
Draft202012Validator over a ``referencing`` registry holding the whole document; every
violation names the place in the document that it broke (``schemaPath``, a JSON pointer with
``$ref`` hops followed) and the place in the message (``location``: ``body.product.title``,
``query.limit``, ``header.X-Request-Id``).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from svc_sandbox.contract.document import COMMERCE, IDENTITY, shared_contract

DOCUMENT_URI = "urn:svc-sandbox:contract"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    return "#" + "".join("/" + escape(t) for t in tokens)


@dataclass(frozen=True)
class Violation:
    """One place where a message broke the contract."""

    kind: str  # "request" or "response"
    location: str
    message: str
    schema_path: str

    def to_json(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "location": self.location,
            "message": self.message,
            "schemaPath": self.schema_path,
        }


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str  # upper case
    path: str  # the template, e.g. /products/{id}
    pointer: str  # #/paths/~1products~1{id}/get
    definition: dict[str, Any]
    parameters: tuple[tuple[str, dict[str, Any]], ...]  # (pointer, parameter object)
    regex: re.Pattern[str] = field(compare=False)
    #: Served under its own root (a path-level ``servers`` entry, e.g. ``{pay_url}``), not under
    #: ``{base_url}``: neither matched there nor in the conformance report.
    own_server: bool = False

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    def declared_statuses(self) -> list[str]:
        return list(self.definition.get("responses", {}))

    def requires_auth(self, root_security: list[dict[str, Any]]) -> bool:
        security = self.definition.get("security", root_security)
        return bool(security) and all(requirement for requirement in security)


class Contract:
    """An OpenAPI document ready to match and validate messages."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self.title = str(document["info"]["title"])
        self.version = str(document["info"]["version"])
        resource: Resource[Any] = DRAFT202012.create_resource(document)
        self._registry: Registry[Any] = Registry().with_resource(DOCUMENT_URI, resource)
        self._validators: dict[str, Draft202012Validator] = {}
        self._lock = threading.Lock()
        self.operations = list(self._operations())

    def _operations(self) -> Iterable[Operation]:
        for path, item in self.document.get("paths", {}).items():
            shared = [
                self._parameter(p, pointer("paths", path, "parameters", i))
                for i, p in enumerate(item.get("parameters", []))
            ]
            for method in METHODS:
                if method not in item:
                    continue
                definition = item[method]
                own = [
                    self._parameter(p, pointer("paths", path, method, "parameters", i))
                    for i, p in enumerate(definition.get("parameters", []))
                ]
                names = {(p["name"], p["in"]) for _, p in own}
                params = own + [(ptr, p) for ptr, p in shared if (p["name"], p["in"]) not in names]
                pattern = re.sub(r"\\\{([^}]+)\\\}", r"(?P<\1>[^/]+)", re.escape(path))
                yield Operation(
                    operation_id=definition.get("operationId", f"{method} {path}"),
                    method=method.upper(),
                    path=path,
                    pointer=pointer("paths", path, method),
                    definition=definition,
                    parameters=tuple(params),
                    regex=re.compile(f"^{pattern}$"),
                    own_server="servers" in item or "servers" in definition,
                )

    def _parameter(self, item: Mapping[str, Any], where: str) -> tuple[str, dict[str, Any]]:
        """A parameter object and the pointer where its definition lives."""
        while "$ref" in item:
            where = str(item["$ref"])
            item = self.node(where)
        return where, dict(item)

    # --- document access -----------------------------------------------------------------

    def node(self, ref: str) -> Any:
        """The node at a local pointer (``#/components/schemas/Product``)."""
        found: Any = self.document
        for token in ref.lstrip("#").split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            found = found[int(token)] if isinstance(found, list) else found[token]
        return found

    def resolve_object(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """Follows ``$ref`` of a parameter, response or header object."""
        seen = 0
        while "$ref" in item and seen < 16:
            item = self.node(item["$ref"])
            seen += 1
        return dict(item)

    def find(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation answering ``method path`` (path relative to the server) and its path
        parameters; literal paths win over templated ones."""
        best: tuple[Operation, dict[str, str]] | None = None
        for operation in self.operations:
            if operation.method != method.upper() or operation.own_server:
                continue
            matched = operation.regex.match(path)
            if matched is None:
                continue
            if "{" not in operation.path:
                return operation, {}
            best = best or (operation, matched.groupdict())
        return best

    def operation(self, operation_id: str) -> Operation:
        return next(o for o in self.operations if o.operation_id == operation_id)

    # --- schema validation -----------------------------------------------------------------

    def _validator(self, schema_pointer: str) -> Draft202012Validator:
        with self._lock:
            validator = self._validators.get(schema_pointer)
            if validator is None:
                validator = Draft202012Validator(
                    {"$ref": DOCUMENT_URI + schema_pointer},
                    registry=self._registry,
                    format_checker=FormatChecker(),
                )
                self._validators[schema_pointer] = validator
            return validator

    def check(
        self, schema_pointer: str, instance: Any, kind: str, location: str
    ) -> list[Violation]:
        """Validates ``instance`` against the schema at ``schema_pointer``: at most one
        violation, the most relevant one."""
        errors = list(self._validator(schema_pointer).iter_errors(instance))
        if not errors:
            return []
        # An ``unevaluatedProperties`` error only echoes a failure inside ``allOf``: prefer it.
        precise = [e for e in errors if e.validator != "unevaluatedProperties"]
        error = best_match(precise or errors)
        where = location + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
        )
        return [Violation(kind, where, error.message, self.schema_path_of(schema_pointer, error))]

    def schema_path_of(self, schema_pointer: str, error: ValidationError) -> str:
        """The failing keyword as a pointer into the document, following ``$ref`` hops."""
        path = schema_pointer
        node: Any = self.node(schema_pointer)
        for token in error.absolute_schema_path:
            # jsonschema descends through ``$ref`` without naming it in the path: follow it.
            hops = 0
            while isinstance(node, dict) and "$ref" in node and token not in node and hops < 16:
                path = str(node["$ref"]).removeprefix(DOCUMENT_URI)
                node = self.node(path)
                hops += 1
            path += "/" + escape(token)
            try:
                node = node[token]
            except (KeyError, IndexError, TypeError):
                node = None
        return path

    # --- requests ----------------------------------------------------------------------------

    def validate_request(
        self,
        operation: Operation,
        path_params: Mapping[str, str],
        query: Mapping[str, list[str]],
        headers: Mapping[str, str],
        content_type: str | None,
        body: bytes,
    ) -> list[Violation]:
        found: list[Violation] = []
        lowered = {k.lower(): v for k, v in headers.items()}
        for ptr, param in operation.parameters:
            name, where = param["name"], param["in"]
            if where == "path":
                raw: str | None = path_params.get(name)
            elif where == "query":
                values = query.get(name) or []
                raw = values[0] if values else None
            elif where == "header":
                raw = lowered.get(name.lower())
            else:
                continue
            location = f"{where}.{name}"
            if raw is None:
                if param.get("required"):
                    found.append(
                        Violation("request", location, f"{name} is required", ptr + "/required")
                    )
                continue
            if "schema" in param:
                found += self.check(
                    ptr + "/schema", coerce(raw, param["schema"], self), "request", location
                )
        if operation.requires_auth(self.document.get("security", [])):
            authorization = lowered.get("authorization", "")
            if not authorization.lower().startswith("bearer "):
                found.append(
                    Violation(
                        "request",
                        "header.Authorization",
                        "this operation needs 'Authorization: Bearer <API token>'",
                        operation.pointer + "/security"
                        if "security" in operation.definition
                        else "#/security",
                    )
                )
        found += self._validate_request_body(operation, content_type, body)
        return found

    def _validate_request_body(
        self, operation: Operation, content_type: str | None, body: bytes
    ) -> list[Violation]:
        spec = operation.definition.get("requestBody")
        if spec is None:
            return []
        spec_ptr = operation.pointer + "/requestBody"
        if "$ref" in spec:
            spec_ptr, spec = spec["$ref"], self.resolve_object(spec)
        if not body.strip():
            if spec.get("required"):
                return [
                    Violation(
                        "request", "body", "a request body is required", spec_ptr + "/required"
                    )
                ]
            return []
        return self.check_content(spec_ptr, spec.get("content", {}), content_type, body, "request")

    def check_content(
        self,
        owner: str,
        content: Mapping[str, Any],
        content_type: str | None,
        body: bytes,
        kind: str,
    ) -> list[Violation]:
        """A message body against the ``content`` map of the request body or response at
        ``owner``: a declared media type, JSON that parses, then its schema."""
        media = (content_type or "").split(";")[0].strip().lower()
        if media not in content:
            message = f"Content-Type {media or '(none)'} is not one of {', '.join(content)}"
            return [Violation(kind, "header.Content-Type", message, owner + "/content")]
        try:
            document = decode_body(media, body)
        except (ValueError, UnicodeDecodeError) as exc:
            message = f"body is not valid {media}: {exc}"
            return [Violation(kind, "body", message, owner + "/content")]
        return self.check(pointer_join(owner, "content", media, "schema"), document, kind, "body")

    # --- webhooks ----------------------------------------------------------------------------

    def validate_webhook(self, event_type: str, body: Any) -> list[Violation]:
        """Checks a webhook's JSON body against ``webhooks.<event_type>`` of the contract."""
        if event_type not in self.document.get("webhooks", {}):
            return [
                Violation(
                    "webhook", "type", f"{event_type} is not a declared webhook", "#/webhooks"
                )
            ]
        where = pointer(
            "webhooks", event_type, "post", "requestBody", "content", "application/json", "schema"
        )
        return self.check(where, body, "webhook", "body")

    # --- responses ---------------------------------------------------------------------------

    def response_pointer(self, operation: Operation, status: int) -> str | None:
        responses = operation.definition.get("responses", {})
        for key in (str(status), f"{str(status)[0]}XX", f"{str(status)[0]}xx", "default"):
            if key in responses:
                return pointer_join(operation.pointer, "responses", key)
        return None

    def validate_response(
        self,
        operation: Operation,
        status: int,
        headers: Mapping[str, str],
        content_type: str | None,
        body: bytes,
    ) -> list[Violation]:
        response_ptr = self.response_pointer(operation, status)
        if response_ptr is None:
            declared = ", ".join(operation.declared_statuses())
            message = (
                f"status {status} is not declared for {operation.label} (declared: {declared})"
            )
            return [Violation("response", "status", message, operation.pointer + "/responses")]
        spec = self.node(response_ptr)
        if "$ref" in spec:
            response_ptr = spec["$ref"]
            spec = self.resolve_object(spec)
        found: list[Violation] = []
        lowered = {k.lower(): v for k, v in headers.items()}
        for name, header in spec.get("headers", {}).items():
            header_ptr = pointer_join(response_ptr, "headers", name)
            if "$ref" in header:
                header_ptr, header = header["$ref"], self.resolve_object(header)
            raw = lowered.get(name.lower())
            if raw is None:
                if header.get("required"):
                    found.append(
                        Violation(
                            "response",
                            f"header.{name}",
                            f"header {name} is missing",
                            header_ptr + "/required",
                        )
                    )
                continue
            if "schema" in header:
                found += self.check(
                    header_ptr + "/schema",
                    coerce(raw, header["schema"], self),
                    "response",
                    f"header.{name}",
                )
        content = spec.get("content")
        if not content:
            return found
        return found + self.check_content(response_ptr, content, content_type, body, "response")


def decode_body(media: str, body: bytes) -> Any:
    """A body as its schema sees it: a form as an object (a repeated field becomes an array),
    a text page as a string, anything else as JSON."""
    if media == "application/x-www-form-urlencoded":
        fields: dict[str, Any] = {}
        for name, value in parse_qsl(body.decode(), keep_blank_values=True, strict_parsing=False):
            if name in fields:
                previous = fields[name]
                fields[name] = (
                    [*previous, value] if isinstance(previous, list) else [previous, value]
                )
            else:
                fields[name] = value
        return fields
    if media.startswith("text/"):
        return body.decode()
    return json.loads(body)


def pointer_join(base: str, *tokens: str | int) -> str:
    return base + "".join("/" + escape(t) for t in tokens)


def coerce(raw: str, schema: Mapping[str, Any], contract: Contract) -> Any:
    """A parameter's text as the JSON value its schema expects (``"20"`` -> 20), or the text
    itself when it does not read as one (then validation names the type)."""
    if "$ref" in schema:
        schema = contract.node(schema["$ref"])
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "integer" in kinds and re.fullmatch(r"-?[0-9]+", raw):
        return int(raw)
    if "number" in kinds:
        try:
            return float(raw)
        except ValueError:
            return raw
    if "boolean" in kinds and raw in ("true", "false"):
        return raw == "true"
    return raw


_CONTRACTS: dict[str, Contract] = {}
_CONTRACTS_LOCK = threading.Lock()


def shipped_contract(name: str) -> Contract:
    """A shipped contract, built once per process."""
    with _CONTRACTS_LOCK:
        if name not in _CONTRACTS:
            _CONTRACTS[name] = Contract(shared_contract(name))
        return _CONTRACTS[name]


def commerce_contract() -> Contract:
    return shipped_contract(COMMERCE)


def identity_contract() -> Contract:
    return shipped_contract(IDENTITY)
