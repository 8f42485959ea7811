"""Who may talk to the sandbox, and how: the rules that make it safe to leave running.

Plain Python (no Flask); ``exposure_api.py`` applies them to every request. See the top of
docs/control-plane.md for what a client must send.

* Host names served (DNS rebinding): loopback names, the hosts of ``public_url`` and of the
  roots, ``allowed_hosts``; on a non-loopback bind also IP literals (a rebinding attack needs
  a DNS name the attacker controls, never an address).
* Control-plane peers: this machine only, unless ``allow_remote_control``.
* Control-plane writes: ``Content-Type: application/json`` (no HTML form can send it, so a
  page on another site cannot post to the control plane).
* Hosted-page forms: a token signed with a per-process secret, bound to what the form acts on.
* Another site's page (Fetch Metadata): only its links and forms reach the sandbox, except
  the identity provider's endpoints a browser app calls itself, for registered apps' pages
  (identity/cors.py). Elsewhere the sandbox grants no CORS, so no request such a page makes
  in the background is one it could read the answer of; refused first, it counts against no
  rate limit and fills no journal.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import re
import secrets
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from svc_sandbox.core.digests import constant_time_equal
from svc_sandbox.core.validation import SHOWN_CHARACTERS, cut, host_name, shown
from svc_sandbox.settings import ROOT_DEFAULTS, Settings

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
#: The methods that may change state: the control plane takes them as JSON only. Any other
#: method changes nothing and falls through to its 404 or 405.
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})

#: ``Sec-Fetch-Site`` values of a request another site's page made the browser send.
OTHER_SITES = frozenset({"cross-site", "same-site"})


def cross_site_problem(site: str | None, mode: str | None) -> str | None:
    """Why a browser request from another site's page is refused (``Sec-Fetch-Site``,
    ``Sec-Fetch-Mode``), or None: only a navigation (a link followed, a form submitted) may
    come from another site. ``same-site`` counts: another port of 127.0.0.1 is another
    origin, often someone else's dev server."""
    if site not in OTHER_SITES or mode == "navigate":
        return None
    return (
        f"Requests that another site's page makes in the background are refused "
        f"(Sec-Fetch-Site: {site}, Sec-Fetch-Mode: {mode}): this endpoint grants no CORS; "
        "call it from your server, a terminal or a test"
    )


#: Headers on every response.
COMMON_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    # Payment-link URLs carry the session's pay token: never hand them to another site.
    "Referrer-Policy": "no-referrer",
    # Nothing here is another site's to frame or embed, JSON included (GET /_sandbox holds
    # every token): pages also say frame-ancestors 'none'.
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
}
#: The control plane's answers (tokens, secrets, passwords, the whole state) and the
#: dashboard's pages stay out of the browser's disk cache.
CONTROL_CACHE_CONTROL = "no-store"


def is_loopback(address: str | None) -> bool:
    """Whether an address (or ``localhost``) is this machine's loopback."""
    if address is None:
        return False
    if address.lower() == "localhost":
        return True
    try:
        parsed = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return parsed.ipv4_mapped.is_loopback  # an IPv4 client of a dual-stack "::" bind
    return parsed.is_loopback


def is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def ascii_host(name: str) -> str:
    """``name`` lowercased, an internationalized one in its ASCII (IDNA) form, as a Host
    header and a URL field carry it (``bücher.example`` -> ``xn--bcher-kva.example``); an
    IPv6 address or a name IDNA refuses as it is. Hosts compare in this form everywhere."""
    name = name.lower()
    if name.isascii() or ":" in name:
        return name
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:  # a label IDNA refuses: never matches a Host header (ASCII)
        return name


def target_authority(target: str) -> str | None:
    """The authority of an absolute-form request target (``http://host:port/path``, RFC 9112
    §3.2.2), None for the origin form (``/path``) and ``*``."""
    if target[:1] == "/" or "://" not in target:
        return None
    rest = target.partition("://")[2]
    return re.split(r"[/?#]", rest, maxsplit=1)[0]


#: How many distinct Host headers ``HostRule`` remembers its answer for (any others are
#: worked out each time: a client sending random names must not grow the memory).
HOST_ANSWERS_KEPT = 64


class HostRule:
    """Which ``Host`` header names this server answers."""

    def __init__(self, settings: Settings) -> None:
        names = set(LOOPBACK_NAMES)
        urls = [settings.public_url, *(getattr(settings, root) for root in ROOT_DEFAULTS)]
        names |= {ascii_host(host) for url in urls if url and (host := urlsplit(url).hostname)}
        extra = {ascii_host(n.strip()) for n in settings.allowed_hosts.split(",") if n.strip()}
        self.any = "*" in extra
        self.names = frozenset(names | extra)
        self.addresses = not is_loopback(settings.host)
        self.origin = settings.origin
        #: Answers by Host header: every request asks, and a server sees only a few names.
        self._answers: dict[str, bool] = {}

    def allows(self, header: str) -> bool:
        answer = self._answers.get(header)
        if answer is None:
            answer = self._allows(header)
            if len(self._answers) < HOST_ANSWERS_KEPT:
                self._answers[header] = answer
        return answer

    def _allows(self, header: str) -> bool:
        name = host_name(header)
        if name is None:
            return False
        return self.any or name in self.names or (self.addresses and is_ip_literal(name))

    def refusal(self, header: str, sent_as: str = "Host") -> str:
        """Why ``header`` (sent as ``sent_as``) is refused, naming it as sent."""
        name = host_name(header)
        if name is None:
            return (
                f"{sent_as} {shown(header)} is not a host name with an optional port (send "
                f"one Host line naming this server): use {self.origin}"
            )
        return (
            f"{sent_as} {shown(header)} is not served here (a guard against DNS rebinding): "
            f"use {self.origin}, or start svc-sandbox with --allowed-hosts "
            f"{cut(name, SHOWN_CHARACTERS)}"
        )


def remote_control_refusal(peer: str | None) -> str:
    return (
        f"The control plane answers only this machine (this request came from {peer}): "
        f"start svc-sandbox with --allow-remote-control to allow other machines"
    )


JSON_ONLY = (
    "Control-plane requests that change state must send Content-Type: application/json "
    "(an empty body is fine)"
)


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of an absolute URL, as written."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


#: An origin as a CSP source expression (CSP 3 host-source): http(s), an ASCII host name or an
#: IP literal (IPv6 in brackets), an optional port.
CSP_ORIGIN = re.compile(r"https?://(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?")


def csp_source(url: str) -> str | None:
    """The origin of ``url`` as a CSP source (an internationalized host in its ASCII form),
    or None when it reads as no origin: a URL is never a way to add a directive (``;``) or
    another source (a space) to a policy."""
    try:
        parts = urlsplit(url)
        port = parts.port
        host = ascii_host(parts.hostname or "")
    except ValueError:  # http://[::1
        return None
    if ":" in host:
        # CSP's host-source has no form for an IPv6 literal (Chromium ignores "http://[::1]",
        # so a sign-in or consent form whose app returns to [::1] went nowhere): the scheme
        # alone is the narrowest source that lets the form reach it.
        return f"{parts.scheme}:" if parts.scheme in ("http", "https") else None
    source = f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
    return source if CSP_ORIGIN.fullmatch(source) else None


def content_security_policy(settings: Settings, form_targets: Sequence[str] = ()) -> str:
    """The CSP of the pages: no inline script or style; the one stylesheet and the small
    scripts come from the sandbox itself (/_assets), which the scripts also fetch from (the
    session poll, the control plane); forms only to the sandbox's roots, never framed.
    Images are the products' media URLs. ``form_targets``: URLs a form's redirect may also go
    to (form-action covers the redirects after a post: the sign-in and consent pages end at
    the app's redirect URI)."""
    return _policy((*settings.roots().values(), *form_targets))


@functools.lru_cache(maxsize=256)
def _policy(urls: tuple[str, ...]) -> str:
    """The policy naming the origins of ``urls``: a pure function of them, kept for the
    roots a test suite binds a fresh Sandbox with at every test (75 µs each time) and the
    redirect URIs the consent pages repeat."""
    origins = sorted({source for source in map(csp_source, urls) if source})
    own = "'self' " + " ".join(origins)
    return "; ".join(
        [
            "default-src 'none'",
            "style-src 'self'",
            "script-src 'self'",
            "connect-src " + own,
            "img-src http: https: data:",
            "form-action " + own,
            "base-uri 'none'",
            "frame-ancestors 'none'",
        ]
    )


class FormTokens:
    """CSRF tokens of the hosted pages' forms: HMAC of what the form acts on (a session,
    a pay token, a product token) under a secret made per process. The secret is not from
    the seeded id factory on purpose: a seed is public (default 1), so tokens derived from
    it could be forged; it touches no resource id, event or API body."""

    FIELD = "csrf"

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    def issue(self, subject: str) -> str:
        return hmac.new(self._secret, subject.encode(), hashlib.sha256).hexdigest()[:32]

    def valid(self, subject: str, token: str | None) -> bool:
        # A posted form can carry any text: compared as bytes (core/digests.py).
        return token is not None and constant_time_equal(self.issue(subject), token)


STALE_FORM = (
    "This form is out of date or did not come from this page: nothing was changed. "
    "Go back, reload the page and try again."
)


def usable_origins(settings: Settings) -> list[str]:
    """Origins a person can open for a server bound to ``settings.host``: a wildcard bind is
    reached through loopback and this machine's addresses, never at ``0.0.0.0``."""
    if settings.public_url:
        return [settings.public_url]
    if settings.host not in WILDCARD_BINDS:
        return [settings.origin]
    origins = [settings.origin]
    for address in machine_addresses():
        origin = f"http://{address}:{settings.port}"
        if not is_loopback(address) and origin not in origins:
            origins.append(origin)
    return origins


#: A documentation address (RFC 5737): only asked which way the machine would route to it.
ROUTE_PROBE = ("192.0.2.1", 9)


def machine_addresses() -> list[str]:
    """This machine's IPv4 addresses as far as the standard library can tell: what its
    name resolves to (often only 127.0.0.1 in a container's hosts file), and the address it
    would send from to a non-local one (a UDP socket's connect sends nothing: it only picks
    the route; no route, none)."""
    try:
        _, _, addresses = socket.gethostbyname_ex(socket.gethostname())
    except OSError:
        addresses = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(ROUTE_PROBE)
            addresses.append(probe.getsockname()[0])
    except OSError:
        pass
    return addresses
