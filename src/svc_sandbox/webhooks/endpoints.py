"""Webhook endpoints (subscriptions) per organization: URL, signing secret, event filter, enabled.

The spec shows no subscription management (§6 "not shown"): the control plane manages them, and
``svc-sandbox serve --webhook-url`` sets one for each default organization.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import ValidationFailed, found
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot
from svc_sandbox.core.validation import http_url_problem
from svc_sandbox.webhooks.events import check_event_type
from svc_sandbox.webhooks.sender import INPROCESS_SCHEME, Receiver

SECRET_PREFIX = "whsec_"
#: What every endpoint id starts with (core/ids.py draws the rest).
ENDPOINT_PREFIX = "we_"
MAX_SECRET_LENGTH = 256


@dataclass
class WebhookEndpoint:
    id: str
    org_id: str
    url: str
    secret: str
    created_at: datetime
    #: Event types delivered here; empty means every type.
    event_types: list[str] = field(default_factory=list)
    enabled: bool = True
    description: str = ""

    def accepts(self, event_type: str) -> bool:
        return not self.event_types or event_type in self.event_types

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "organizationId": self.org_id,
            "url": self.url,
            "secret": self.secret,
            "eventTypes": list(self.event_types),
            "enabled": self.enabled,
            "description": self.description,
            "createdAt": isoformat(self.created_at),
        }


def check_url(url: str, field_name: str = "url") -> str:
    problem = http_url_problem(url)
    if problem:
        raise ValidationFailed(f"{field_name} {problem}")
    return url


def check_secret(secret: str, field_name: str = "secret") -> str:
    if not secret.strip():
        raise ValidationFailed(f"{field_name} must not be empty")
    if len(secret) > MAX_SECRET_LENGTH:
        raise ValidationFailed(f"{field_name} must be at most {MAX_SECRET_LENGTH} characters")
    return secret


def check_event_types(types: list[str], field_name: str = "eventTypes") -> list[str]:
    for index, type_ in enumerate(types):
        check_event_type(type_, f"{field_name}[{index}]")
    return list(dict.fromkeys(types))


class EndpointService(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        #: The secret of endpoints created without one (``--webhook-secret``); else generated.
        self.default_secret: str | None = ctx.settings.webhook_secret
        self.endpoints: dict[str, WebhookEndpoint] = {}
        #: In-process receivers by endpoint URL (``inprocess:<id>``). Python callables are
        #: not state: an export names the endpoint, an import without its callable records
        #: each attempt as a connection error until one is registered again. A reset or an
        #: import lets them go (ids repeat from the seed: a new endpoint would otherwise get
        #: the callable of an endpoint of before). The sender looks them up here at each
        #: call, so it follows the dict a restore puts in place.
        self.receivers: dict[str, Receiver] = {}
        #: Told the URLs endpoints still point at when an endpoint went or changed its URL,
        #: and none after a reset or an import: the sender closes the idle connections to
        #: every other origin (a receiver per test must not leave a socket per test).
        self.urls_in_use: list[Callable[[list[str]], None]] = []

    def generate_secret(self) -> str:
        return self.ids.secret(SECRET_PREFIX)

    @locked
    def create(
        self,
        org_id: str,
        url: str,
        secret: str | None = None,
        event_types: list[str] | None = None,
        enabled: bool = True,
        description: str = "",
    ) -> WebhookEndpoint:
        check_url(url)
        types = check_event_types(event_types or [])
        if secret is not None:
            check_secret(secret)
        endpoint = WebhookEndpoint(
            id=self.ids.object_id(self.endpoints, ENDPOINT_PREFIX),
            org_id=org_id,
            url=url,
            secret=secret or self.default_secret or self.generate_secret(),
            created_at=self.clock.now(),
            event_types=types,
            enabled=enabled,
            description=description,
        )
        self.endpoints[endpoint.id] = endpoint
        return endpoint

    @locked
    def create_in_process(
        self,
        org_id: str,
        receiver: Receiver,
        secret: str | None = None,
        event_types: list[str] | None = None,
        description: str = "in-process receiver",
    ) -> WebhookEndpoint:
        """An endpoint whose deliveries call ``receiver(body, headers) -> status`` in this
        process (same signed bytes and headers as over HTTP; no socket)."""
        endpoint = self.create(
            org_id, "http://in-process.invalid/", secret, event_types, description=description
        )
        endpoint.url = INPROCESS_SCHEME + endpoint.id
        self.receivers[endpoint.url] = receiver
        return endpoint

    @locked
    def attach(self, endpoint_id: str, receiver: Receiver) -> WebhookEndpoint:
        """``receiver`` answers the in-process endpoint ``endpoint_id`` (one an import or a
        reset let go of its callable, or one to answer otherwise). NotFound for an unknown id;
        a ValidationFailed for an endpoint with an http(s) URL, whose deliveries go out."""
        endpoint = self.get(endpoint_id)
        if not endpoint.url.startswith(INPROCESS_SCHEME):
            raise ValidationFailed(
                f"webhook endpoint {endpoint_id} delivers to {endpoint.url}, not in-process"
            )
        self.receivers[endpoint.url] = receiver
        return endpoint

    @locked
    def get(self, endpoint_id: str) -> WebhookEndpoint:
        return found(self.endpoints.get(endpoint_id), f"webhook endpoint {endpoint_id} not found")

    @locked
    def find(self, endpoint_id: str) -> WebhookEndpoint | None:
        return self.endpoints.get(endpoint_id)

    @locked
    def update(
        self,
        endpoint_id: str,
        *,
        url: str | None = None,
        secret: str | None = None,
        event_types: list[str] | None = None,
        enabled: bool | None = None,
        description: str | None = None,
    ) -> WebhookEndpoint:
        """Changes the given fields; every check runs before anything changes."""
        endpoint = self.get(endpoint_id)
        if url is not None:
            check_url(url)
        if secret is not None:
            check_secret(secret)
        types = check_event_types(event_types) if event_types is not None else None
        if url is not None and url != endpoint.url:
            endpoint.url = url
            self._tell_urls_in_use()
        if secret is not None:
            endpoint.secret = secret
        if types is not None:
            endpoint.event_types = types
        if enabled is not None:
            endpoint.enabled = enabled
        if description is not None:
            endpoint.description = description
        return endpoint

    @locked
    def rotate_secret(self, endpoint_id: str) -> WebhookEndpoint:
        endpoint = self.get(endpoint_id)
        endpoint.secret = self.generate_secret()
        return endpoint

    @locked
    def delete(self, endpoint_id: str) -> WebhookEndpoint:
        endpoint = self.get(endpoint_id)
        del self.endpoints[endpoint_id]
        self._tell_urls_in_use()
        return endpoint

    def _tell_urls_in_use(self, urls: list[str] | None = None) -> None:
        if urls is None:
            urls = [e.url for e in self.endpoints.values()]
        for listener in self.urls_in_use:
            listener(urls)

    @locked
    def list_for(self, org_id: str | None = None) -> list[WebhookEndpoint]:
        return [e for e in self.endpoints.values() if org_id is None or e.org_id == org_id]

    @locked
    def matching(self, org_id: str, event_type: str) -> list[WebhookEndpoint]:
        """The enabled endpoints of ``org_id`` that take ``event_type``, oldest first."""
        return [
            e
            for e in self.endpoints.values()
            if e.org_id == org_id and e.enabled and e.accepts(event_type)
        ]

    def export(self) -> dict[str, Any]:
        return {
            "endpoints": [snapshot(e) for e in self.endpoints.values()],
            "defaultSecret": self.default_secret,
        }

    def restore(self, data: dict[str, Any]) -> None:
        endpoints = [from_json(WebhookEndpoint, e) for e in data["endpoints"]]
        self.endpoints = {e.id: e for e in endpoints}
        self.default_secret = data["defaultSecret"]
        self.receivers = {}  # a new dict: the rollback of a failed import puts the old back
        self._tell_urls_in_use([])  # a reset or an import starts without a connection
