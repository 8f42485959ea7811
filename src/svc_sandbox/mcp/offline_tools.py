"""The tools of spec §1 that work without a token (reading note 2): verifying and building
signed webhooks, searching and reading the docs. They call the same pure functions the
emulator and the client use, never the API."""

from __future__ import annotations

import shlex
from typing import Annotated, Any, Literal

import httpx
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from svc_sandbox.client import SignatureError, build_test_webhook, verify_webhook
from svc_sandbox.client.signing import DEFAULT_TOLERANCE
from svc_sandbox.core.validation import http_url_problem
from svc_sandbox.mcp import docs
from svc_sandbox.mcp.backend import Backend, backend_of
from svc_sandbox.mcp.results import Format, answer

#: 9999-12-31T23:59:59Z, the last second a webhook's ``created`` timestamp can carry.
MAX_TIMESTAMP = 253_402_300_799

# --- output models ----------------------------------------------------------------------


class VerifyOutput(BaseModel):
    valid: bool
    reason: str | None = Field(
        description="null when valid, else malformed_header, no_signature, "
        "signature_mismatch, timestamp_outside_tolerance or invalid_body"
    )
    message: str
    event: dict[str, Any] | None = Field(description="the verified event envelope")


class TestWebhookOutput(BaseModel):
    event: dict[str, Any]
    body: str = Field(description="the exact raw body (sign and send these bytes)")
    headers: dict[str, str]
    signature: str = Field(description="the X-Svc-Signature header value")
    curl: str = Field(description="a ready command that POSTs the webhook")
    sent: bool = Field(description="true when the tool POSTed it to `url` (stdio only)")
    receiverStatus: int | None = Field(description="the receiver's HTTP status when sent")


class SearchHit(BaseModel):
    id: str
    title: str
    score: float
    snippet: str


class SearchOutput(BaseModel):
    query: str
    results: list[SearchHit]


class DocOutput(BaseModel):
    id: str
    title: str
    text: str
    offset: int
    totalChars: int
    nextOffset: int | None


# --- webhooks ---------------------------------------------------------------------------


async def svc_verify_webhook(
    ctx: Context[Any, Any],
    payload: Annotated[str, Field(description="the raw request body, exactly as received")],
    signature: Annotated[str, Field(description="the X-Svc-Signature header value")],
    secret: Annotated[
        str | None, Field(description="signing secret; default env SVC_WEBHOOK_SECRET")
    ] = None,
    tolerance_seconds: Annotated[
        int | None,
        Field(strict=True, ge=0, description="replay window either side of now; null: off"),
    ] = DEFAULT_TOLERANCE,
    now: Annotated[
        int | None,
        Field(
            strict=True,
            ge=0,
            le=MAX_TIMESTAMP,
            description="unix seconds to check against (default: now)",
        ),
    ] = None,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, VerifyOutput]:
    """Check a webhook's X-Svc-Signature (HMAC-SHA256 over "<t>.<raw body>") and replay
    window, offline (no token). Answers valid true with the event, or valid false with why."""
    key = backend_of(ctx).secret(secret)
    try:
        event = verify_webhook(payload, signature, key, tolerance_seconds, now=now)
    except SignatureError as error:
        result = VerifyOutput(valid=False, reason=error.reason, message=error.message, event=None)
        text = f"**Not valid** (`{error.reason}`): {error.message}"
    else:
        document = event.to_wire()
        result = VerifyOutput(valid=True, reason=None, message="signature verified", event=document)
        text = f"**Valid**: event `{event.id}` of type `{event.type}`."
    return answer(text, result.model_dump(mode="json"), response_format)


async def svc_create_test_webhook(
    ctx: Context[Any, Any],
    event_type: Annotated[
        Literal["order.created", "order.completed", "checkout.session.expired"],
        Field(description="the event to build"),
    ],
    secret: Annotated[
        str | None, Field(description="signing secret; default env SVC_WEBHOOK_SECRET")
    ] = None,
    data: Annotated[
        dict[str, Any] | None, Field(description="fields replacing the example data")
    ] = None,
    timestamp: Annotated[
        int | None,
        Field(
            strict=True, ge=0, le=MAX_TIMESTAMP, description="unix seconds signed (default: now)"
        ),
    ] = None,
    organization_id: Annotated[
        str | None,
        Field(
            pattern=r"^[0-9a-f]{24}$",
            description="organizationId of the envelope, 24 hex (default: derived from the "
            "type and time)",
        ),
    ] = None,
    url: Annotated[
        str | None,
        Field(
            pattern=r"^https?://",
            description="your receiver: over stdio the tool POSTs the webhook to it; over "
            "HTTP it is only put in the curl command",
        ),
    ] = None,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, TestWebhookOutput]:
    """Build a signed test webhook (no token) as the service would send it: body, headers and
    a curl command. Over stdio it can also POST it to `url`; over HTTP it never sends."""
    backend = backend_of(ctx)
    # The rule of a webhook endpoint's url (a host, a port in 1..65535, ASCII): httpx raised
    # past the tool's error handling for what the pattern let through (``http://[::1``).
    problem = http_url_problem(url) if url is not None else None
    if problem:
        raise ToolError(f"url {problem}")
    payload = build_test_webhook(
        event_type,
        backend.secret(secret),
        data=data,
        timestamp=timestamp,
        organization_id=organization_id,
    )
    body = payload.body.decode("utf-8")
    target = url or "$WEBHOOK_URL"
    command = ["curl", "-sS", "-X", "POST", target]
    for name, value in payload.headers.items():
        command += ["-H", f"{name}: {value}"]
    command += ["--data-binary", body]
    quoted = [shlex.quote(part) for part in command]
    if url is None:  # left for the shell to fill in
        quoted[quoted.index(shlex.quote(target))] = '"$WEBHOOK_URL"'
    curl = " ".join(quoted)
    sent, status = False, None
    if url is not None and not backend.config.http:
        status = await _deliver(backend, url, payload.body, payload.headers)
        sent = True
    result = TestWebhookOutput(
        event=payload.event,
        body=body,
        headers=payload.headers,
        signature=payload.signature,
        curl=curl,
        sent=sent,
        receiverStatus=status,
    )
    text = f"Signed `{event_type}` event `{payload.event['id']}`."
    if sent:
        text += f" POSTed to {url}: the receiver answered {status}."
    else:
        text += f" Send it with:\n\n```sh\n{curl}\n```"
    return answer(text, result.model_dump(mode="json"), response_format)


async def _deliver(backend: Backend, url: str, body: bytes, headers: dict[str, str]) -> int:
    try:
        if backend.http is not None:
            response = await backend.http.post(
                url, content=body, headers=headers, timeout=backend.config.timeout
            )
        else:  # pragma: no cover - every transport run gives its client
            async with httpx.AsyncClient(timeout=backend.config.timeout) as http:
                response = await http.post(url, content=body, headers=headers)
    except httpx.HTTPError as error:
        raise ToolError(f"url: could not POST to {url}: {type(error).__name__}: {error}") from None
    return response.status_code


# --- docs -------------------------------------------------------------------------------


async def svc_search_docs(
    query: Annotated[str, Field(min_length=1, max_length=500, description="words to look for")],
    limit: Annotated[int, Field(strict=True, ge=1, le=20, description="results, 1..20")] = 5,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, SearchOutput]:
    """Search the svc-sandbox docs and the API reference (no token), best match first. Read a
    hit with svc_read_doc and its id."""
    hits = docs.corpus().search(query, limit)
    result = SearchOutput(
        query=query,
        results=[
            SearchHit(id=h.id, title=h.title, score=round(h.score, 4), snippet=h.snippet)
            for h in hits
        ],
    )
    if hits:
        lines = [f"- `{h.id}` **{h.title}** ({h.score:.2f}): {h.snippet}" for h in hits]
        text = "\n".join([f"{len(hits)} results for “{query}”:", *lines])
    else:
        text = f"No results for “{query}”; try other words, or svc_read_doc `reference`."
    return answer(text, result.model_dump(mode="json"), response_format)


async def svc_read_doc(
    doc_id: Annotated[
        str,
        Field(
            min_length=1,
            description="a document id (e.g. `webhooks`, `reference`) or a section id "
            "(`webhooks#the-envelope`) from svc_search_docs",
        ),
    ],
    offset: Annotated[int, Field(strict=True, ge=0, description="start at this character")] = 0,
    max_chars: Annotated[
        int, Field(strict=True, ge=100, le=100000, description="characters to return")
    ] = 20000,
    response_format: Format = "markdown",
) -> Annotated[CallToolResult, DocOutput]:
    """Read a document or section of the svc-sandbox docs (no token)."""
    try:
        doc = docs.corpus().read(doc_id)
    except KeyError:
        known = ", ".join(docs.corpus().document_ids())
        raise ToolError(f"doc_id: no document {doc_id!r}; documents: {known}") from None
    text = doc.text[offset : offset + max_chars]
    end = offset + len(text)
    result = DocOutput(
        id=doc.id,
        title=doc.title,
        text=text,
        offset=offset,
        totalChars=len(doc.text),
        nextOffset=end if end < len(doc.text) else None,
    )
    shown = text if result.nextOffset is None else text + f"\n\n… (continue at offset {end})"
    return answer(shown, result.model_dump(mode="json"), response_format)
