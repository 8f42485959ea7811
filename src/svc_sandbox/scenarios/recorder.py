"""Turns the request journal of an emulator into a scenario that replays those requests.

Every request becomes a step expecting the status it got; control-plane mutations become
``control`` steps (reads of the control plane are left out); time that passed between
requests becomes ``advance`` steps (a request's own latency, applied by a latency rule the
scenario replays, is not such time). A reset in the journal marks the start: what came before
it is left out, and the scenario starts at the reset's clock with the emulator's seed, so the
replay produces the same ids (they come from the seed) as the recording. An import (a
``PUT /_sandbox/state`` answered 200) marks the start too, being a whole new state: the
scenario's first step is ``import_state`` with the document the emulator kept of it
(``Sandbox.last_import``), so the replay goes on from the same state and ids.

Recorded data is data: every ``${`` in it is written ``$${`` (a product titled ``${token}``
replays as that text, not as the API token).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from svc_sandbox.core import json_input
from svc_sandbox.core.clock import parse_instant
from svc_sandbox.core.errors import Conflict, ValidationFailed
from svc_sandbox.core.journal import JOURNAL_TEXT_CHARACTERS
from svc_sandbox.core.validation import ELLIPSIS, grouped
from svc_sandbox.identity.grants import AUTHORIZE_PARAMS
from svc_sandbox.scenarios.actions import ACTIONS, CONTROL_PREFIX, action_for
from svc_sandbox.settings import Settings

#: Control-plane requests that are not replayed (reads, and the recorder's own routes).
NOT_REPLAYED = (CONTROL_PREFIX + "/requests", CONTROL_PREFIX + "/scenario")
RESET_PATH = CONTROL_PREFIX + "/reset"
#: The identity provider's token endpoint under ``{auth_url}`` (identity/api.py).
TOKEN_PATH = "/oauth2/token"
#: Where a control-plane request a ``control`` step cannot make is sent (``root: url``).
CONTROL_URL = "${control_url}"
JSON_TYPE = "application/json"
#: Control actions that move the clock themselves: no ``advance`` step goes before them.
CLOCK_ACTIONS = ("advance", "set_clock", "run_due")
STATE_PATH = CONTROL_PREFIX + "/state"
#: The requests that start a recording (answered: a refused one changed nothing).
STARTS = frozenset({("POST", RESET_PATH, 200), ("PUT", STATE_PATH, 200)})
#: The answer's header: how many earlier requests of the session a recording could not hold
#: (before the oldest one read, none of them a reset); no header when it holds them all.
NOT_RECORDED_HEADER = "X-Svc-Sandbox-Not-Recorded"
#: A control-plane write refused for not sending its JSON type (docs/control-plane.md).
NOT_JSON = 415


def record(
    entries: list[dict[str, Any]],
    info: dict[str, Any],
    name: str,
    imported: tuple[str, bytes] | None = None,
) -> dict[str, Any]:
    """A scenario document from journal ``entries`` (oldest first) and ``GET /_sandbox``;
    ``imported`` is the last import's (request id, document as sent)."""
    steps: list[dict[str, Any]] = []
    credentials = _credentials(info)
    start = last_start(entries)
    if start is not None:
        clock = entries[start]["time"]
        if entries[start]["path"] == STATE_PATH:
            steps.append(_import_step(entries[start], imported))
            # The replay's ``token`` is the fresh emulator's, read before the import: a token
            # of the imported state is sent as it was.
            credentials = {}
        entries = entries[start + 1 :]
    else:
        clock = entries[0]["time"] if entries else info["clock"]["now"]
    roots = sorted(
        ((urlsplit(url).path.rstrip("/"), root) for root, url in info["roots"].items()),
        key=lambda item: -len(item[0]),
    )
    #: The roots as the recording server had them, longest first, for the values sent.
    urls = sorted(
        ((url.rstrip("/"), root) for root, url in info["roots"].items()),
        # A value the wallet's root shares with the resource is a token request's resource.
        key=lambda item: (-len(item[0]), item[1] != "resource_url"),
    )
    now = parse_instant(clock)
    for entry in entries:
        when = parse_instant(entry["time"])
        step = _step(entry, roots, credentials)
        if step is None:
            continue
        step = _with_root_variables(step, urls)
        page = _form_page(step, steps)
        moves_clock = _action(entry) in CLOCK_ACTIONS
        # A request's own latency (a latency rule's delay, which moved the clock on a frozen
        # sandbox) is not time between requests: the replayed rule applies it again.
        began = when - timedelta(seconds=entry.get("delaySeconds", 0))
        if not moves_clock and began > now:
            seconds = (began - now).total_seconds()
            steps.append({"control": {"action": "advance", "seconds": seconds}})
        now = max(now, when)
        if page is not None:
            steps.append(page)
        steps.append(step)
    document: dict[str, Any] = {
        "name": name,
        "description": f"Recorded from the request journal ({len(steps)} steps).",
        "tags": ["recorded"],
        "seed": info["seed"],
        "clock": clock,
    }
    issuing = _issuer_settings(steps, info["roots"])
    if issuing:
        document["settings"] = issuing
    document["steps"] = steps
    return document


def _issuer_settings(steps: list[dict[str, Any]], roots: dict[str, str]) -> dict[str, str]:
    """The recording server's ``auth_url`` and ``resource_url`` when a token was issued and
    they are not a fresh sandbox's: its tokens (sent again as recorded) name them (``iss``,
    ``aud``), so an in-process replay is made with them, and another server without them
    skips the scenario, saying so, instead of refusing every token."""
    issued = any(
        step.get("request", {}).get("root") == "auth_url"
        and step["request"].get("path") == TOKEN_PATH
        for step in steps
    )
    if not issued:
        return {}
    fresh = Settings()
    return {
        name: roots[name].rstrip("/")
        for name in ("auth_url", "resource_url")
        if roots[name].rstrip("/") != fresh.root(name).rstrip("/")
    }


def dump(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


#: Line breaks of YAML 1.1 beyond ``\n`` and ``\r``: NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
UNICODE_LINE_BREAKS = "\x85\u2028\u2029"


class _Dumper(yaml.SafeDumper):
    r"""PyYAML's safe dumper, except that a text holding a Unicode line break is written
    double-quoted, where it is an escape (``\N``, ``\L``, ``\P``): written raw in a plain or
    single-quoted scalar, the reader folds a NEL into a space (``Caf\u00e9\u0085Menu`` came
    back ``Caf\u00e9 Menu``), and the replay would send other text."""

    def represent_str(self, data: str) -> yaml.ScalarNode:
        if any(char in data for char in UNICODE_LINE_BREAKS):
            return self.represent_scalar("tag:yaml.org,2002:str", data, style='"')
        return super().represent_str(data)


_Dumper.add_representer(str, _Dumper.represent_str)


#: Form actions of hosted pages whose page is one path segment up.
FORM_ACTIONS = ("approve", "fail", "confirm", "cancel")
#: The identity provider's pages with a form (sign-in, consent) and the statuses they come
#: with: its ``csrf_token`` is the browser's, the same in each of them.
IDENTITY_PAGES = ("/oauth2/authorize", "/signin")
IDENTITY_PAGE_STATUSES = (200, 401)


def _form_page(step: dict[str, Any], before: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Where a recorded form's CSRF token comes from in the replay (the recording's token is
    bound to the recording process's secret): a hosted page's ``csrf`` from a GET of its page
    (returned, to go before the form), the identity provider's ``csrf_token`` saved from its
    last page in ``before`` (or from a GET of its authorize page)."""
    request = step.get("request")
    if request is None:
        return None
    form = request.get("form", {})
    if "csrf_token" in form:
        form["csrf_token"] = "${csrf_token}"
        return _identity_page(request, before)
    if "csrf" not in form:
        return None
    form["csrf"] = "${csrf}"
    path = request["path"]
    head, _, last = path.rpartition("/")
    page_path = head if last in FORM_ACTIONS else path
    page = {"method": "GET", "root": request["root"], "path": page_path, "auth": "none"}
    return {"request": page, "expect": {"status": 200}, "save": {"csrf": "form.csrf"}}


def _identity_page(request: dict[str, Any], before: list[dict[str, Any]]) -> dict[str, Any] | None:
    save = {"csrf_token": "form.csrf_token"}
    for earlier in reversed(before):
        page = earlier.get("request")
        if (
            page is not None
            and page["root"] == request["root"]
            and page["path"] in IDENTITY_PAGES
            and earlier["expect"]["status"] in IDENTITY_PAGE_STATUSES
        ):
            earlier["save"] = {**earlier.get("save", {}), **save}
            return None
    query = {k: v for k, v in request["form"].items() if k in AUTHORIZE_PARAMS}
    get = {"method": "GET", "root": request["root"], "path": IDENTITY_PAGES[0], "query": query}
    return {"request": {**get, "auth": "none"}, "expect": {"status": 200}, "save": save}


def _escaped(value: Any) -> Any:
    """``value`` with every ``${`` of its text written ``$${`` (a scenario reads it as text)."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escaped(item) for item in value]
    return value


def last_start(entries: list[dict[str, Any]]) -> int | None:
    """The last successful reset or import: what came before it is replaced whole. A refused
    one (a reset sent without its JSON type: 415) changed nothing and starts nothing."""
    found = None
    for index, entry in enumerate(entries):
        if (entry["method"], entry["path"], entry["status"]) in STARTS:
            found = index
    return found


def _import_step(entry: dict[str, Any], imported: tuple[str, bytes] | None) -> dict[str, Any]:
    """The import that starts the recording, its document inline (the journal keeps bodies
    up to 16 KiB only; the emulator keeps the last import's whole)."""
    if imported is not None and imported[0] == entry["requestId"]:
        document = json.loads(imported[1])
    else:
        document = _body(entry)
    if not isinstance(document, dict):
        raise Conflict(
            f"the document imported at {entry['time']} is no longer kept (the emulator keeps"
            " the last import's): record from a later reset or import"
        )
    return {"control": _escaped({"action": "import_state", **document}), "expect": {"status": 200}}


def _with_root_variables(step: dict[str, Any], urls: list[tuple[str, str]]) -> dict[str, Any]:
    """``step`` with every value that is one of the recording server's roots, or an address
    under one, written with the root's variable (``${resource_url}``): a token request's
    ``resource``, a ``successUrl`` on this server. The replay's server has its own roots (an
    in-process sandbox's, another port's), where a literal URL answered ``invalid_target``."""

    def written(value: Any) -> Any:
        if isinstance(value, str):
            for url, root in urls:
                if value == url or value.startswith((url + "/", url + "?")):
                    return f"${{{root}}}" + value[len(url) :]
            return value
        if isinstance(value, dict):
            return {k: written(v) for k, v in value.items()}
        if isinstance(value, list):
            return [written(item) for item in value]
        return value

    return {
        kind: {k: (v if k in ("root", "path", "expect") else written(v)) for k, v in part.items()}
        if isinstance(part, dict) and kind in ("request", "control")
        else part
        for kind, part in step.items()
    }


def _credentials(info: dict[str, Any]) -> dict[str, str]:
    """Seeded tokens -> the variable that holds them in a scenario."""
    found: dict[str, str] = {}
    for org in info["organizations"]:
        variable = "token" if org["environment"] == "sandbox" else "production_token"
        if variable in found.values():
            continue
        live = [t["token"] for t in org["tokens"] if t["usable"]]
        if live:
            found[live[0]] = variable
    return found


def _header(value: str | None) -> str | None:
    """A journal's header value as a replay can send it: one the journal cut
    (``JOURNAL_TEXT_CHARACTERS``, the last an ellipsis) without its ellipsis, which a header
    cannot carry (not Latin-1), so the recording loads and sends the 4,095 characters kept."""
    if value is not None and len(value) == JOURNAL_TEXT_CHARACTERS and value.endswith(ELLIPSIS):
        return value[:-1]
    return value


def _body(entry: dict[str, Any]) -> Any:
    """The entry's JSON body, or None when it has none or the API refuses it as JSON
    (``json_input.decode``: a key written twice, ``NaN``, a number too large for a float,
    NUL, a lone surrogate, too deep), which decoded and dumped again would not be the
    request that came: such a body is recorded as it came, raw."""
    raw = entry.get("body")
    if raw is None:
        return None
    try:
        return json_input.decode(raw, "body")
    except ValidationFailed:
        return None


def _query(text: str) -> dict[str, str | list[str]] | None:
    """A query as the scenario's ``query``: a parameter sent more than once is a list of its
    values, in the order sent (the replay sends each); None when its escapes are not UTF-8."""
    try:
        return grouped(parse_qsl(text, keep_blank_values=True, errors="strict"))
    except UnicodeDecodeError:
        return None


def _action(entry: dict[str, Any]) -> str | None:
    """The control action of a control-plane request (a step of its own or a request)."""
    found = action_for(entry["method"], entry["path"])
    return found[0] if found is not None else None


def _step(
    entry: dict[str, Any], roots: list[tuple[str, str]], credentials: dict[str, str]
) -> dict[str, Any] | None:
    method, path = entry["method"], entry["path"]
    if path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/"):
        if method == "GET" or path.startswith(NOT_REPLAYED):
            return None
        found = action_for(method, path)
        if found is None:
            return None
        action, arguments = found
        body = _body(entry)
        sent = entry.get("form") is not None or entry.get("body") or entry.get("bodyBase64")
        unsendable = sent and not (isinstance(body, dict) and entry.get("contentType") == JSON_TYPE)
        query = _query(entry["query"]) if entry.get("query") else {}
        if query is None or any(not ACTIONS[action].in_query(name) for name in query):
            unsendable = True  # a parameter the action does not send (a refused ?dry=1)
        if unsendable or entry["status"] == NOT_JSON:
            # A body or query a control step cannot send (it sends a JSON object and its
            # route's own parameters), or a write refused for not being JSON (a control step
            # would carry it out): a request to the control plane sending it as it came.
            step = _request_step(entry, "url", path[len(CONTROL_PREFIX) :], credentials)
            step["request"]["path"] = CONTROL_URL + step["request"]["path"]
            return step
        control: dict[str, Any] = {"action": action, **arguments, **(query or {})}
        if isinstance(body, dict):
            control.update(body)
        return {"control": _escaped(control), "expect": {"status": entry["status"]}}
    root, prefix = next(((r, p) for p, r in roots if path.startswith(p + "/")), (None, ""))
    if root is None:
        return None
    return _request_step(entry, root, path[len(prefix) :], credentials)


def _request_step(
    entry: dict[str, Any], root: str, path: str, credentials: dict[str, str]
) -> dict[str, Any]:
    request: dict[str, Any] = {"method": entry["method"], "root": root, "path": path}
    query = entry.get("query")
    if query:
        parsed = _query(query)
        if parsed is None:  # percent-escapes that are not UTF-8 (%FF): sent as they came
            request["path"] += "?" + query
        else:
            request["query"] = parsed
    if entry.get("form") is not None:
        request["form"] = entry["form"]
    elif entry.get("body") or entry.get("bodyBase64"):
        body = _body(entry)
        if body is not None and entry.get("contentType") == JSON_TYPE:
            request["json"] = body
        else:
            if entry.get("body"):
                request["raw"] = entry["body"]
            else:  # not UTF-8 (a UTF-16 JSON body): its bytes
                request["raw_base64"] = entry["bodyBase64"]
            content_type = _header(entry.get("contentType"))
            request["headers"] = {"Content-Type": content_type or "text/plain"}
    authorization = _header(entry.get("authorization"))
    if authorization:
        token = authorization.partition(" ")[2].strip()
        if token in credentials:
            request["auth"] = credentials[token]
        else:
            request["auth"] = "none"
            request.setdefault("headers", {})["Authorization"] = authorization
    elif root == "base_url":
        request["auth"] = "none"
    step = _escaped(request)
    for name, detail in (("Idempotency-Key", "idempotencyKey"), ("X-Svc-Key", "svcKey")):
        value = _header(entry.get(detail))
        if value:
            # A seeded token (the wallet's X-Svc-Key) is written as its variable.
            known = credentials.get(value)
            step.setdefault("headers", {})[name] = f"${{{known}}}" if known else _escaped(value)
    return {"request": step, "expect": {"status": entry["status"]}}
