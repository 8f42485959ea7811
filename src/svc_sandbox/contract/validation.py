"""Validates HTTP requests and responses against an OpenAPI 3.1 document.

OpenAPI 3.1 schemas are JSON Schema 2020-12. Whether a message fits is decided by a compiled
validator (``jsonschema_rs``, about a microsecond a message); only a message it refuses goes
through jsonschema's Draft202012Validator over a ``referencing`` registry holding the whole
document, which words the violation: the place in the document that it broke (``schemaPath``,
a JSON pointer with ``$ref`` hops followed) and the place in the message (``location``:
``body.product.title``, ``query.limit``, ``header.X-Request-Id``). The two agree by
construction where they could differ: the compiled validator checks the contract's formats
with jsonschema's own format checkers (contract/formats.py), and when it refuses what
jsonschema accepts (its ``$`` does not match before a final newline) jsonschema's verdict
stands, as it always did.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, quote

import jsonschema_rs

from svc_sandbox.contract import formats
from svc_sandbox.contract.document import COMMERCE, IDENTITY, WALLET, shared_contract
from svc_sandbox.core import json_input
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.numbers import decimal_text
from svc_sandbox.core.validation import (
    SHOWN_CHARACTERS,
    grouped,
    repeated,
    shown,
    too_long_message,
)

if TYPE_CHECKING:  # jsonschema is imported when a message is first checked, not at start-up
    from jsonschema import Draft202012Validator, FormatChecker
    from jsonschema.exceptions import ValidationError

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
    #: Whether checking a request reads its query string / its headers (most do not: the
    #: edge then skips building them).
    reads_query: bool = False
    reads_headers: bool = False
    takes_body: bool = False
    #: Served under its own root (a path-level ``servers`` entry, e.g. ``{pay_url}``), not under
    #: ``{base_url}``: neither matched there nor in the conformance report.
    own_server: bool = False
    #: The operation's security requirement (its own or the document's): alternatives, each
    #: the scheme names sent together. An empty alternative makes credentials optional.
    security: tuple[tuple[str, ...], ...] = ()
    security_pointer: str = "#/security"

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    def declared_statuses(self) -> list[str]:
        return list(self.definition.get("responses", {}))

    @property
    def requires_auth(self) -> bool:
        return bool(self.security) and all(self.security)


class Contract:
    """An OpenAPI document ready to match and validate messages."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self.title = str(document["info"]["title"])
        self.version = str(document["info"]["version"])
        self._validators: dict[str, Draft202012Validator] = {}
        self._fast: dict[str, jsonschema_rs.Validator] = {}
        self._nodes: dict[str, Any] = {}
        self._plans: dict[tuple[str, int], _ResponsePlan | None] = {}
        self._fast_registry: jsonschema_rs.Registry | None = None
        self._format_checker: FormatChecker | None = None
        self._lock = threading.RLock()
        self.operations = list(self._operations())
        #: (METHOD, literal path) -> operation; the templated ones per method, in order.
        self._literal: dict[tuple[str, str], Operation] = {}
        self._templated: dict[str, list[Operation]] = {}
        for operation in self.operations:
            if operation.own_server:
                continue  # served under its own root: never matched under {base_url}
            if "{" in operation.path:
                self._templated.setdefault(operation.method, []).append(operation)
            else:
                self._literal.setdefault((operation.method, operation.path), operation)

    def _operations(self) -> Iterable[Operation]:
        schemes = self.document.get("components", {}).get("securitySchemes", {})
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
                security = tuple(
                    tuple(requirement)
                    for requirement in definition.get("security", self.document.get("security", []))
                )
                # Credentials are checked when every alternative names a scheme (requires_auth);
                # the check then reads the headers, and the query for an apiKey sent there.
                checked = bool(security) and all(security)
                in_query = checked and any(
                    schemes.get(name, {}).get("in") == "query"
                    for requirement in security
                    for name in requirement
                )
                yield Operation(
                    operation_id=definition.get("operationId", f"{method} {path}"),
                    method=method.upper(),
                    path=path,
                    pointer=pointer("paths", path, method),
                    definition=definition,
                    parameters=tuple(params),
                    regex=re.compile(pattern),
                    reads_query=in_query or any(p["in"] == "query" for _, p in params),
                    reads_headers=checked or any(p["in"] == "header" for _, p in params),
                    takes_body="requestBody" in definition,
                    own_server="servers" in item or "servers" in definition,
                    security=security,
                    security_pointer=pointer("paths", path, method, "security")
                    if "security" in definition
                    else "#/security",
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
        known = self._nodes.get(ref)  # the document never changes: each walk is done once
        if known is not None:
            return known
        found: Any = self.document
        for token in ref.lstrip("#").split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            found = found[int(token)] if isinstance(found, list) else found[token]
        self._nodes[ref] = found
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
        method = method.upper()
        literal = self._literal.get((method, path))
        if literal is not None:
            return literal, {}
        for operation in self._templated.get(method, ()):
            matched = operation.regex.fullmatch(path)
            if matched is not None:
                return operation, matched.groupdict()
        return None

    def operation(self, operation_id: str) -> Operation:
        return next(o for o in self.operations if o.operation_id == operation_id)

    # --- schema validation -----------------------------------------------------------------

    def _validator(self, schema_pointer: str) -> Draft202012Validator:
        from referencing import Registry
        from referencing.jsonschema import DRAFT202012

        with self._lock:
            validator = self._validators.get(schema_pointer)
            if validator is None:
                resource = DRAFT202012.create_resource(self.document)
                registry: Registry[Any] = Registry().with_resource(DOCUMENT_URI, resource)
                validator = _explaining_validator()(
                    {"$ref": DOCUMENT_URI + schema_pointer},
                    registry=registry,
                    format_checker=self._formats_checker(),
                )
                self._validators[schema_pointer] = validator
            return validator

    def _formats_checker(self) -> FormatChecker:
        with self._lock:
            if self._format_checker is None:
                self._format_checker = formats.format_checker()
            return self._format_checker

    def warm(self) -> None:
        """Loads jsonschema and compiles the request-body validators ahead of the first
        request (``serve`` calls this from a background thread once it is ready)."""
        self._formats_checker()
        for operation in self.operations:
            spec = operation.definition.get("requestBody")
            if spec is None:
                continue
            owner = operation.pointer + "/requestBody"
            if "$ref" in spec:
                owner, spec = spec["$ref"], self.resolve_object(spec)
            for media in spec.get("content", {}):
                self._compiled(_schema_of(owner, media))

    def _compiled(self, schema_pointer: str) -> jsonschema_rs.Validator:
        """The compiled validator of a schema (built once per pointer). Its format checks are
        jsonschema's own, so both validators mean the same by ``uri``, ``email``, ..."""
        validator = self._fast.get(schema_pointer)
        if validator is None:
            with self._lock:
                validator = self._fast.get(schema_pointer)
                if validator is None:
                    if self._fast_registry is None:
                        self._fast_registry = jsonschema_rs.Registry(
                            [(DOCUMENT_URI, dict(self.document))]
                        )
                    validator = jsonschema_rs.validator_for(
                        # A URI fragment: "{id}" in a path template must be percent-encoded.
                        {"$ref": DOCUMENT_URI + quote(schema_pointer, safe="#/~")},
                        registry=self._fast_registry,
                        validate_formats=True,
                        formats=formats.callbacks(self._formats_checker()),
                    )
                    self._fast[schema_pointer] = validator
        return validator

    def check(
        self, schema_pointer: str, instance: Any, kind: str, location: str
    ) -> list[Violation]:
        """Validates ``instance`` against the schema at ``schema_pointer``: at most one
        violation, the most relevant one. The compiled validator answers first; jsonschema
        runs only on a refusal, to word it (and its verdict stands)."""
        if self._compiled(schema_pointer).is_valid(instance):
            return []
        return self.explain(schema_pointer, instance, kind, location)

    def check_text(
        self, schema_pointer: str, schema: Mapping[str, Any], raw: str, kind: str, location: str
    ) -> list[Violation]:
        """A parameter's or header's text against its schema, read as the value the schema
        expects (``coerce``); an integer too long to convert is named, not converted."""
        value = coerce(raw, schema, self)
        if isinstance(value, json_input.LongInteger):
            message = too_long_message(location.partition(".")[2] or location)
            return [Violation(kind, location, message, schema_pointer)]
        return self.check(schema_pointer, value, kind, location)

    def explain(
        self, schema_pointer: str, instance: Any, kind: str, location: str
    ) -> list[Violation]:
        """The jsonschema check alone: the most relevant violation, worded (chosen among the
        first ``EXPLAINED_ERRORS`` of each keyword, see ``_explaining_validator``)."""
        errors = self.errors(schema_pointer, instance)
        if not errors:
            return []
        # An ``unevaluatedProperties`` error only echoes a failure inside ``allOf``: prefer it.
        precise = [e for e in errors if e.validator != "unevaluatedProperties"]
        from jsonschema.exceptions import best_match

        error = best_match(precise or errors)
        where = location + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
        )
        return [Violation(kind, where, worded(error), self.schema_path_of(schema_pointer, error))]

    def errors(self, schema_pointer: str, instance: Any) -> list[ValidationError]:
        """The errors an explanation chooses from: at most ``EXPLAINED_ERRORS``, each keyword's
        (and each ``oneOf``/``anyOf`` alternative's) first ones at most as many."""
        found = self._validator(schema_pointer).iter_errors(instance)
        return list(islice(found, EXPLAINED_ERRORS))

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
        lowered = {k.lower(): v for k, v in headers.items()} if operation.reads_headers else {}
        for ptr, param in operation.parameters:
            name, where = param["name"], param["in"]
            if where == "path":
                raw: str | None = path_params.get(name)
            elif where == "query":
                values = query.get(name) or []
                if len(values) > 1 and not _takes_many(param):
                    # The emulator refuses it (web.query_values): the check says so too.
                    found.append(Violation("request", f"query.{name}", repeated(name), ptr))
                    continue
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
                found += self.check_text(ptr + "/schema", param["schema"], raw, "request", location)
        if operation.requires_auth:
            found += self._check_security(operation, lowered, query)
        found += self._validate_request_body(operation, content_type, body)
        return found

    def _check_security(
        self, operation: Operation, headers: Mapping[str, str], query: Mapping[str, list[str]]
    ) -> list[Violation]:
        """The operation's security requirement: met when every scheme of one alternative
        is sent (OpenAPI: alternatives OR-ed, the schemes of one AND-ed). Otherwise one
        violation per scheme missing from the alternative closest to being met."""
        schemes = self.document.get("components", {}).get("securitySchemes", {})
        closest: list[str] | None = None
        for requirement in operation.security:
            missing = [
                name for name in requirement if not _scheme_sent(schemes[name], headers, query)
            ]
            if not missing:
                return []
            if closest is None or len(missing) < len(closest):
                closest = missing
        return [
            Violation(
                "request",
                _scheme_location(schemes[name]),
                _scheme_message(name, schemes[name]),
                operation.security_pointer,
            )
            for name in closest or ()
        ]

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
        except ValidationFailed as exc:
            return [Violation(kind, "body", exc.message, owner + "/content")]
        except (ValueError, UnicodeDecodeError) as exc:
            message = f"body is not valid {media}: {exc}"
            return [Violation(kind, "body", message, owner + "/content")]
        return self.check(_schema_of(owner, media), document, kind, "body")

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

    def _response_plan(self, operation: Operation, status: int) -> _ResponsePlan | None:
        """What checking a ``status`` response of ``operation`` needs, ``$ref`` hops resolved
        (the document never changes: computed once per operation and status)."""
        key = (operation.pointer, status)
        plan = self._plans.get(key)
        if plan is None and key not in self._plans:
            response_ptr = self.response_pointer(operation, status)
            if response_ptr is not None:
                spec = self.node(response_ptr)
                if "$ref" in spec:
                    response_ptr = spec["$ref"]
                    spec = self.resolve_object(spec)
                headers = []
                for name, header in spec.get("headers", {}).items():
                    header_ptr = pointer_join(response_ptr, "headers", name)
                    if "$ref" in header:
                        header_ptr, header = header["$ref"], self.resolve_object(header)
                    headers.append((name, header_ptr, header))
                plan = _ResponsePlan(response_ptr, tuple(headers), spec.get("content"))
            with self._lock:
                self._plans[key] = plan
        return plan

    def validate_response(
        self,
        operation: Operation,
        status: int,
        headers: HeaderItems,
        content_type: str | None,
        body: bytes,
    ) -> list[Violation]:
        plan = self._response_plan(operation, status)
        if plan is None:
            declared = ", ".join(operation.declared_statuses())
            message = (
                f"status {status} is not declared for {operation.label} (declared: {declared})"
            )
            return [Violation("response", "status", message, operation.pointer + "/responses")]
        found: list[Violation] = []
        lowered = {k.lower(): v for k, v in headers.items()} if plan.headers else {}
        for name, header_ptr, header in plan.headers:
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
                found += self.check_text(
                    header_ptr + "/schema", header["schema"], raw, "response", f"header.{name}"
                )
        if not plan.content:
            return found
        return found + self.check_content(
            plan.pointer, plan.content, content_type, body, "response"
        )


#: The errors of one keyword (and of a whole message) an explanation looks at. A body breaking
#: the contract once per item (``media: [1]*100000``, 25,000 metadata keys) cost seconds to
#: minutes of CPU, without a token, when every error was collected; an ordinary body has a
#: handful, so its explanation is the same.
EXPLAINED_ERRORS = 50


@functools.cache
def _explaining_validator() -> type[Draft202012Validator]:
    """Draft 2020-12 whose every keyword yields at most ``EXPLAINED_ERRORS`` errors. The
    errors are made lazily, so a keyword stops walking its items at the bound; ``oneOf`` and
    ``anyOf`` collect each alternative's errors in a list, which the bound keeps short too."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    def bounded(keyword: Any) -> Any:
        def check(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
            return islice(keyword(validator, value, instance, schema) or (), EXPLAINED_ERRORS)

        return check

    keywords = {name: bounded(k) for name, k in Draft202012Validator.VALIDATORS.items()}
    explaining: type[Draft202012Validator] = extend(Draft202012Validator, keywords)
    return explaining


def worded(error: ValidationError) -> str:
    """jsonschema's message with each value of the message it repeats shown as every message
    shows one (``core.validation.shown``: cut to 80 characters): the value itself (``'xx…'
    is too long``) and the keys or items of an object or array (``('kk…' was unexpected)``).
    What the message quotes of the document stays whole; so does a short value."""
    message: str = error.message
    instance = error.instance
    values = [instance, *instance] if isinstance(instance, dict | list) else [instance]
    for value in values:
        text = repr(value)
        if len(text) > SHOWN_CHARACTERS:
            message = message.replace(text, shown(value))
    return message


def _scheme_sent(
    scheme: Mapping[str, Any], headers: Mapping[str, str], query: Mapping[str, list[str]]
) -> bool:
    """Whether a request carries a credential for a security scheme (its shape only: the
    server decides whether it is valid). ``headers`` have lower-case names."""
    kind = scheme.get("type")
    if kind == "apiKey":
        name = str(scheme["name"])
        if scheme.get("in") == "query":
            return bool(query.get(name))
        if scheme.get("in") == "cookie":
            cookies = headers.get("cookie", "")
            return any(part.strip().startswith(name + "=") for part in cookies.split(";"))
        return bool(headers.get(name.lower(), "").strip())
    expected = str(scheme.get("scheme", "bearer")) if kind == "http" else "bearer"
    return headers.get("authorization", "").lower().startswith(expected.lower() + " ")


def _scheme_location(scheme: Mapping[str, Any]) -> str:
    if scheme.get("type") == "apiKey":
        return f"{scheme.get('in', 'header')}.{scheme['name']}"
    return "header.Authorization"


def _scheme_message(name: str, scheme: Mapping[str, Any]) -> str:
    """What the operation needs, worded from the scheme: how it is sent, and what it is
    (the first sentence of the scheme's description)."""
    kind = scheme.get("type")
    if kind == "apiKey":
        place = {"query": "query parameter", "cookie": "cookie"}.get(scheme.get("in", ""), "header")
        how = f"the {scheme['name']} {place}"
    else:
        word = str(scheme.get("scheme", "bearer")) if kind == "http" else "bearer"
        placeholder = "<token>" if word.lower() == "bearer" else "<credentials>"
        how = f"'Authorization: {word.capitalize()} {placeholder}'"
    what = " ".join(str(scheme.get("description", "")).split()).split(". ")[0].rstrip(".")
    return f"this operation needs {how} (security scheme {name}" + (f": {what})" if what else ")")


class HeaderItems(Protocol):
    """Response headers: a dict, or werkzeug's ``Headers`` as it is (no copy per response)."""

    def items(self) -> Iterable[tuple[str, str]]: ...


@dataclass(frozen=True, slots=True)
class _ResponsePlan:
    pointer: str  # the response object, after its $ref
    headers: tuple[tuple[str, str, dict[str, Any]], ...]  # (name, pointer, header object)
    content: dict[str, Any] | None


def decode_body(media: str, body: bytes) -> Any:
    """A body as its schema sees it: a form as an object (a repeated field becomes an array),
    a text page as a string, anything else as JSON."""
    if media == "application/x-www-form-urlencoded":
        return grouped(parse_qsl(body.decode(), keep_blank_values=True, strict_parsing=False))
    if media.startswith("text/"):
        return body.decode()
    # The edge's parse: a body too deep for the parser (or the schema walk) is a violation,
    # never a RecursionError in a before-request hook.
    return json_input.decode(body)


def _takes_many(param: Mapping[str, Any]) -> bool:
    """Whether a query parameter may be sent more than once (an array, exploded: OpenAPI's
    default for ``form``)."""
    return param.get("schema", {}).get("type") == "array" and bool(param.get("explode", True))


def pointer_join(base: str, *tokens: str | int) -> str:
    return base + "".join("/" + escape(t) for t in tokens)


@functools.lru_cache(maxsize=1024)
def _schema_of(owner: str, media: str) -> str:
    """The pointer of a body's schema (the same few on every request: computed once)."""
    return pointer_join(owner, "content", media, "schema")


def coerce(raw: str, schema: Mapping[str, Any], contract: Contract) -> Any:
    """A parameter's text as the JSON value its schema expects (``"20"`` -> 20), or the text
    itself when it does not read as one (then validation names the type); an integer with
    more digits than Python converts is a ``json_input.LongInteger``."""
    if "$ref" in schema:
        schema = contract.node(schema["$ref"])
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "integer" in kinds and re.fullmatch(r"-?[0-9]+", raw):
        return json_input.integer(raw)
    if "number" in kinds and decimal_text(raw, exponent=True) is not None:
        # ASCII digits only (core/numbers.py): float() also reads "٥", "1_0", "inf", " 5".
        return float(raw)
    if "boolean" in kinds and raw in ("true", "false"):
        return raw == "true"
    return raw


_CONTRACTS: dict[str, Contract] = {}
_CONTRACTS_LOCK = threading.Lock()


def shipped_contract(name: str) -> Contract:
    """A shipped contract (``COMMERCE``, ``IDENTITY``, ``WALLET``), built once per process."""
    with _CONTRACTS_LOCK:
        if name not in _CONTRACTS:
            _CONTRACTS[name] = Contract(shared_contract(name))
        return _CONTRACTS[name]


def commerce_contract() -> Contract:
    return shipped_contract(COMMERCE)


def identity_contract() -> Contract:
    return shipped_contract(IDENTITY)


def wallet_contract() -> Contract:
    return shipped_contract(WALLET)
