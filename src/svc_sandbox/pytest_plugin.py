"""pytest fixtures for testing against svc-sandbox (registered through the pytest11 entry point;
docs/testing.md shows each with an example).

* ``svc_sandbox``: a Sandbox (frozen clock, seed ``--svc-seed``, strict contract mode); a fresh
  one per test by default, or per module/session with ``--svc-scope`` (then its sandbox-wide
  controls, faults, rules, triggers and rate counters, are cleared after each test).
* ``svc_emulator``: the emulator the test talks to: that Sandbox served by a real server on a
  thread (one per test process, so one per xdist worker), or the emulator at ``--svc-url``.
* ``svc_org``: a fresh tenant per test (a sandbox and a production organization, each with a
  token), so tests isolate on one shared emulator without a reset.
* ``svc_client``: a ``SvcClient`` bound to ``svc_org``'s sandbox token (``svc_live_client``:
  its production token).
* ``svc_clock``: advance/set the sandbox clock. The ``svc_freezegun`` marker (or
  ``svc_clock.follow_with_freezegun()``) moves freezegun's clock with every move of it.
* ``svc_webhooks``: a capturing receiver registered as ``svc_org``'s webhook endpoint.
* ``svc_user`` / ``svc_app`` / ``svc_authorize``: a fresh identity user (KYC approved, funded
  wallet), a fresh confidential OAuth app of ``svc_org``, and the sign-in flow giving tokens.
* ``svc_http`` / ``svc_flask_app`` / ``svc_server``: the Flask test client, the app and the
  served Sandbox, for tests of the emulator itself.

The Flask app is built once per process and finds the test's Sandbox per request
(``app.bind``), so a fresh Sandbox per test costs about a millisecond. When a test fails, its
report shows the requests the emulator journaled during the test. Options, ini values and
``SVC_SANDBOX_*`` variables are checked once in ``pytest_configure`` (testing/environment.py).
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from svc_sandbox.core.numbers import whole_text
from svc_sandbox.scenarios import pytest_items as scenario_items

# The plugin loads in every pytest run of an environment where svc-sandbox is installed, so the
# emulator (Flask, the app, the contract) is imported only when a test asks for a fixture.
if TYPE_CHECKING:
    import httpx
    from flask import Flask
    from flask.testing import FlaskClient

    from svc_sandbox.client import SvcClient
    from svc_sandbox.sandbox import Sandbox
    from svc_sandbox.server import ServerThread
    from svc_sandbox.testing.clock import FreezegunFollower, SvcClock
    from svc_sandbox.testing.emulator import Emulator, RemoteEmulator, Tenant
    from svc_sandbox.testing.identity import Authorizer, SvcApp, SvcUser
    from svc_sandbox.testing.webhooks import SvcWebhooks, WebhookReceiver

SCOPES = ("function", "module", "session")
JOURNAL_SECTION = "svc-sandbox requests during the test"
_MARK = pytest.StashKey[tuple["Emulator", str | None]]()


# --- options ------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("svc-sandbox", "svc-sandbox emulator")
    group.addoption("--svc-seed", help="seed of the emulator's ids (default 1)")
    group.addoption(
        "--svc-scope",
        choices=SCOPES,
        help="how long one svc_sandbox lives: function (default), module or session",
    )
    group.addoption("--svc-url", help="use the emulator running at this origin instead")
    parser.addini("svc_seed", "seed of the emulator's ids", default="1")
    parser.addini(
        "svc_scope", "lifetime of svc_sandbox: function, module or session", default="function"
    )
    parser.addini("svc_url", "origin of a running emulator to use instead", default="")
    parser.addini(
        "svc_gc_freeze",
        "freeze the objects alive once the emulator is loaded and the app built (gc.freeze): "
        "true (default) or false",
        type="bool",
        default=True,
    )
    scenario_items.pytest_addoption(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "svc_freezegun: Python's clock is frozen at the sandbox time and moves with it",
    )
    scenario_items.pytest_configure(config)
    # Every option, ini value and SVC_SANDBOX_* variable is checked here: a bad one is one
    # usage error naming it, not an INTERNALERROR or a traceback in every test.
    config.stash[_OPTIONS] = _read_options(config)


def configured_seed(config: pytest.Config) -> int:
    """``--svc-seed`` (ini ``svc_seed``): the seed of the fixtures' sandboxes, and of a
    collected scenario file that gives none."""
    return config.stash[_OPTIONS].seed


@dataclass(frozen=True)
class Options:
    scope: str
    seed: int
    url: str | None
    gc_freeze: bool


_OPTIONS = pytest.StashKey[Options]()


def _option(config: pytest.Config, name: str) -> str:
    given = config.getoption(name)
    return str(given if given is not None else config.getini(name))


def _scope(config: pytest.Config) -> str:
    """``--svc-scope`` or the ``svc_scope`` ini value, checked."""
    scope = _option(config, "svc_scope")
    if scope not in SCOPES:
        raise pytest.UsageError(
            f"svc_scope (ini) / --svc-scope must be one of {', '.join(SCOPES)}, not {scope!r}"
        )
    return scope


def _read_options(config: pytest.Config) -> Options:
    scope = _scope(config)
    seed_text = _option(config, "svc_seed").strip()
    seed = whole_text(seed_text)
    if seed is None:
        raise pytest.UsageError(
            f"svc_seed (ini) / --svc-seed must be an integer, not {seed_text!r}"
        )
    try:
        gc_freeze = bool(config.getini("svc_gc_freeze"))
    except (ValueError, pytest.UsageError) as exc:  # "invalid truth value 'maybe'"
        raise pytest.UsageError(f"svc_gc_freeze (ini) must be true or false: {exc}") from None
    url = _option(config, "svc_url").strip() or None
    if url is not None:
        from svc_sandbox.core.validation import http_url_problem

        problem = http_url_problem(url)
        if problem:
            raise pytest.UsageError(f"svc_url (ini) / --svc-url {problem}, not {url!r}")
        url = url.rstrip("/")
    options = Options(scope, seed, url, gc_freeze)
    if url is None:
        _check_environment(config, options.seed)
    return options


def _check_environment(config: pytest.Config, seed: int) -> None:
    """SVC_SANDBOX_* as ``svc-sandbox serve`` reads them (in-process only: with --svc-url
    the running emulator has its own)."""
    from svc_sandbox.testing import environment

    if not environment.any_set():
        return
    try:
        warnings = environment.check(seed)
    except ValueError as exc:
        raise pytest.UsageError(
            f"svc-sandbox: invalid settings from the environment: {exc}"
        ) from None
    for line in warnings:
        config.issue_config_time_warning(pytest.PytestConfigWarning(line), stacklevel=2)


def pytest_sessionstart(session: pytest.Session) -> None:
    """An emulator at --svc-url that does not answer is one usage error naming the option,
    before any test (not a connection error retried in each)."""
    options = session.config.stash.get(_OPTIONS, None)
    if options is None or options.url is None:
        return
    from svc_sandbox.testing.emulator import unreachable

    problem = unreachable(options.url)
    if problem:
        raise pytest.UsageError(f"svc_url (ini) / --svc-url {options.url}: {problem}")


def _sandbox_scope(fixture_name: str, config: pytest.Config) -> Any:
    return config.stash[_OPTIONS].scope


# --- the process-wide parts: one app, one server, one receiver ------------------------------


class Runtime:
    """What one test process (one xdist worker) shares; each part is made on first use."""

    def __init__(self, options: Options) -> None:
        self.seed = options.seed
        self.remote_url = options.url
        self.gc_freeze = options.gc_freeze
        #: The Sandbox of a module or session scope, which tests share: after each test its
        #: sandbox-wide controls are cleared (``Sandbox.clear_controls``).
        self.shared: Sandbox | None = None
        self._shared_scope = options.scope != "function"
        self._app: Flask | None = None
        self._server: ServerThread | None = None
        self._receiver: WebhookReceiver | None = None
        self._remote: RemoteEmulator | None = None
        self._http: httpx.Client | None = None
        self._orgs = itertools.count(1)
        self._sandbox_loaded = False

    def new_sandbox(self) -> Sandbox:
        with self._first_time(self._sandbox_loaded):
            import svc_sandbox.testing.emulator  # noqa: F401  (every test's journal mark reads it)
            from svc_sandbox.sandbox import Sandbox
            from svc_sandbox.testing.environment import PLUGIN_OVERRIDES, localize
        if not self._sandbox_loaded:
            _warn_if_another_runs()
        self._sandbox_loaded = True

        sandbox = Sandbox(**PLUGIN_OVERRIDES, seed=self.seed)
        localize(sandbox.settings)
        if self._shared_scope:
            self.shared = sandbox
        return sandbox

    def app_for(self, sandbox: Sandbox) -> Flask:
        """The one app, serving ``sandbox`` from now on."""
        if self._app is None:
            with self._first_time(False):
                from svc_sandbox.app import create_app

                self._app = create_app(sandbox)
        else:
            from svc_sandbox.app import bind

            bind(self._app, sandbox)
        return self._app

    def _first_time(self, done: bool) -> AbstractContextManager[None]:
        """Around the first import of the emulator and the first build of the app: the cyclic
        collector paused, then (``svc_gc_freeze``) what exists frozen. What they make lives
        as long as the process: the 100 collections they triggered walked it again and again
        (40-70 ms of a 350-430 ms first setup), and once frozen the collector's full
        collections walk only what tests made (a 1,000-test function-scoped suite: 7.2-7.6 s
        down to 6.3-6.6 s)."""
        if done:
            return nullcontext()
        from svc_sandbox.core.collector import collector_paused

        return collector_paused(freeze=self.gc_freeze)

    def serve(self, sandbox: Sandbox) -> str:
        """Serves ``sandbox`` on the one server thread; its URLs name the server's port."""
        from svc_sandbox.server import ServerThread
        from svc_sandbox.testing.environment import localize

        settings = sandbox.settings
        settings.host = "127.0.0.1"
        if self._server is None:
            settings.port = 0  # a free one, written back by the server
            self._server = ServerThread(self.app_for(sandbox), settings).start()
        settings.port = self._server.port
        localize(settings)  # roots from SVC_SANDBOX_* keep their path, on this server
        self.app_for(sandbox)  # bound once the port is known: the app's rules name the origin
        return self._server.origin

    def remote(self) -> RemoteEmulator:
        from svc_sandbox.testing.emulator import RemoteEmulator

        assert self.remote_url is not None
        if self._remote is None:
            self._remote = RemoteEmulator(self.remote_url)
        return self._remote

    def receiver(self) -> WebhookReceiver:
        from svc_sandbox.testing.webhooks import WebhookReceiver

        if self._receiver is None:
            self._receiver = WebhookReceiver()
        return self._receiver

    def http(self) -> httpx.Client:
        """One connection pool for every ``svc_client`` (a new httpx.Client builds an SSL
        context: tens of milliseconds per test)."""
        import httpx

        if self._http is None:
            self._http = httpx.Client(timeout=30.0)
        return self._http

    def tenant_name(self, node_name: str) -> str:
        return f"{next(self._orgs)} {node_name}"[:100]

    def close(self) -> None:
        for part in (self._server, self._receiver, self._remote, self._http):
            if part is not None:
                part.close()


def _warn_if_another_runs() -> None:
    """Under ``svc-sandbox exec`` without ``--svc-url`` the SVC_* variables name exec's
    emulator while the fixtures make their own: a client built from them (``SvcClient()``
    reads SVC_BASE_URL) gets 401s for a fixture's token. Said once, when a test first needs
    the in-process one (a suite that only reads the variables is not told)."""
    running = os.environ.get("SVC_SANDBOX_URL")
    if running:
        warnings.warn(
            f"SVC_SANDBOX_URL={running} is set (svc-sandbox exec?), but the svc fixtures use "
            "the plugin's own in-process emulator: SVC_BASE_URL and the other SVC_* roots and "
            'tokens name the other one. To test against it, pass --svc-url "$SVC_SANDBOX_URL"',
            pytest.PytestWarning,
            stacklevel=2,
        )


_RUNTIME = pytest.StashKey["Runtime"]()
_FOLLOWER = pytest.StashKey["FreezegunFollower"]()


@pytest.fixture(scope="session")
def _svc_runtime(pytestconfig: pytest.Config) -> Iterator[Runtime]:
    runtime = pytestconfig.stash[_RUNTIME] = Runtime(pytestconfig.stash[_OPTIONS])
    try:
        yield runtime
    finally:
        del pytestconfig.stash[_RUNTIME]
        runtime.close()


@pytest.fixture(autouse=True)
def _svc_each_test(request: pytest.FixtureRequest) -> Iterator[FreezegunFollower | None]:
    """Around every test (cheap when it uses no svc fixture): the ``svc_freezegun`` marker's
    freezegun, and after a test on a shared Sandbox, its sandbox-wide controls cleared."""
    follower = _freezegun_of(request)
    if follower is not None:
        request.node.stash[_FOLLOWER] = follower  # started just before the body
    try:
        yield follower
    finally:
        if follower is not None:
            follower.stop()
        runtime = request.config.stash.get(_RUNTIME, None)
        if runtime is not None and runtime.shared is not None:
            runtime.shared.clear_controls()


def _freezegun_of(request: pytest.FixtureRequest) -> FreezegunFollower | None:
    marker = request.node.get_closest_marker("svc_freezegun")
    if marker is None:
        return None
    if marker.args or marker.kwargs:
        pytest.fail(
            "@pytest.mark.svc_freezegun takes no arguments: Python's clock follows the "
            f"sandbox clock (got {marker.args!r}, {marker.kwargs!r})",
            pytrace=False,
        )
    from svc_sandbox.testing.clock import FreezegunFollower

    emulator: Emulator = request.getfixturevalue("svc_emulator")
    try:
        return FreezegunFollower(emulator)
    except ModuleNotFoundError as exc:
        missing = str(exc)
    pytest.fail(missing, pytrace=False)  # outside the except: no chained traceback


# --- the emulator -------------------------------------------------------------------------


#: The fixtures that need the in-process Sandbox (none can follow ``--svc-url``), outermost
#: first: svc_server and svc_http use svc_flask_app or svc_sandbox.
IN_PROCESS_FIXTURES = (("svc_server", "svc_http"), ("svc_flask_app",), ("svc_sandbox",))


@pytest.fixture(scope=_sandbox_scope)
def svc_sandbox(request: pytest.FixtureRequest, _svc_runtime: Runtime) -> Iterator[Sandbox]:
    """The in-process Sandbox (not available with ``--svc-url``)."""
    if _svc_runtime.remote_url:
        # Named as the test asked for them (svc_http reaches this through svc_flask_app).
        used = request.node.fixturenames
        asked = next(
            (
                [f for f in level if f in used]
                for level in IN_PROCESS_FIXTURES
                if set(level) & set(used)
            ),
            ["svc_sandbox"],
        )
        verb = "needs" if len(asked) == 1 else "need"
        pytest.fail(
            f"{' and '.join(asked)} {verb} the in-process Sandbox; with --svc-url use "
            "svc_emulator, svc_org, svc_client, svc_clock and svc_webhooks",
            pytrace=False,
        )
    sandbox = _svc_runtime.new_sandbox()
    try:
        yield sandbox
    finally:
        sandbox.stop()


@pytest.fixture
def svc_emulator(request: pytest.FixtureRequest, _svc_runtime: Runtime) -> Emulator:
    """The emulator this test talks to: ``svc_sandbox`` served on the process's server thread,
    or the one at ``--svc-url``."""
    from svc_sandbox.testing.emulator import InProcessEmulator

    if _svc_runtime.remote_url:
        return _svc_runtime.remote()
    sandbox: Sandbox = request.getfixturevalue("svc_sandbox")
    return InProcessEmulator(sandbox, _svc_runtime.serve(sandbox))


@pytest.fixture
def svc_org(
    request: pytest.FixtureRequest, svc_emulator: Emulator, _svc_runtime: Runtime
) -> Tenant:
    return svc_emulator.create_tenant(_svc_runtime.tenant_name(request.node.name))


@pytest.fixture
def svc_client(svc_emulator: Emulator, svc_org: Tenant, _svc_runtime: Runtime) -> SvcClient:
    from svc_sandbox.client import SvcClient

    return SvcClient(svc_org.token, base_url=svc_emulator.base_url, http=_svc_runtime.http())


@pytest.fixture
def svc_live_client(svc_emulator: Emulator, svc_org: Tenant, _svc_runtime: Runtime) -> SvcClient:
    """A ``SvcClient`` of ``svc_org``'s production organization (payouts need production)."""
    from svc_sandbox.client import SvcClient

    return SvcClient(svc_org.live_token, base_url=svc_emulator.base_url, http=_svc_runtime.http())


@pytest.fixture
def svc_clock(
    svc_emulator: Emulator, _svc_each_test: FreezegunFollower | None
) -> Iterator[SvcClock]:
    from svc_sandbox.testing.clock import SvcClock

    clock = SvcClock(svc_emulator, _svc_each_test)
    try:
        yield clock
    finally:
        clock.stop()


@pytest.fixture
def svc_webhooks(
    svc_emulator: Emulator, svc_org: Tenant, _svc_runtime: Runtime
) -> Iterator[SvcWebhooks]:
    from svc_sandbox.testing.webhooks import SvcWebhooks

    webhooks = SvcWebhooks(svc_emulator, _svc_runtime.receiver(), svc_org)
    try:
        yield webhooks
    finally:
        webhooks.close()


# --- identity: users, apps, sign-in -------------------------------------------------------


@pytest.fixture
def svc_user(svc_emulator: Emulator) -> SvcUser:
    """A fresh identity user: KYC approved, its wallet funded (``wallet_minor``)."""
    from svc_sandbox.testing.identity import create_user

    return create_user(svc_emulator)


@pytest.fixture
def svc_app(request: pytest.FixtureRequest, svc_emulator: Emulator, svc_org: Tenant) -> SvcApp:
    """A fresh confidential OAuth app of ``svc_org`` (every scope, ``wallet:send`` approved),
    with its secret."""
    from svc_sandbox.testing.identity import create_app

    return create_app(svc_emulator, svc_org, f"App of {request.node.name}")


@pytest.fixture
def svc_authorize(svc_emulator: Emulator) -> Authorizer:
    """``svc_authorize(user, app, scopes=...)``: runs the authorization code flow as the user
    (PKCE, consent, callback, code exchange) and returns the app's tokens."""
    from svc_sandbox.testing.identity import Authorizer

    return Authorizer(svc_emulator)


# --- the emulator's own HTTP surface (tests of svc-sandbox itself) --------------------------


@dataclass
class RunningServer:
    url: str
    sandbox: Sandbox


@pytest.fixture
def svc_flask_app(svc_sandbox: Sandbox, _svc_runtime: Runtime) -> Flask:
    """The Flask app, serving ``svc_sandbox``."""
    return _svc_runtime.app_for(svc_sandbox)


@pytest.fixture
def svc_http(svc_flask_app: Flask) -> FlaskClient:
    """A Flask test client of the app (no sockets)."""
    return svc_flask_app.test_client()


@pytest.fixture
def svc_server(svc_sandbox: Sandbox, _svc_runtime: Runtime) -> RunningServer:
    """``svc_sandbox`` served by a real multi-threaded server on 127.0.0.1."""
    return RunningServer(url=_svc_runtime.serve(svc_sandbox), sandbox=svc_sandbox)


# --- reports ------------------------------------------------------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Marks where the test's requests start in the emulator's journal; starts the
    ``svc_freezegun`` marker's freezegun once the fixtures are set up, and stops it (and the
    one ``svc_clock.follow_with_freezegun()`` started) as the body ends: pytest times the
    call by the clock right after, and a frozen one made it last 56 years (``--durations``)
    and each teardown a negative time."""
    funcargs: dict[str, Any] = getattr(item, "funcargs", {})
    if "svc_emulator" in funcargs or "svc_sandbox" in funcargs:
        _mark_journal(item, funcargs)
    follower = item.stash.get(_FOLLOWER, None)
    if follower is not None:
        follower.start()
    yield
    if follower is not None:
        follower.stop()
    if "svc_clock" in funcargs:
        from svc_sandbox.testing.clock import SvcClock

        clock = funcargs["svc_clock"]
        if isinstance(clock, SvcClock):  # (not a fixture of the user's own of that name)
            clock.stop()


def _mark_journal(item: pytest.Item, funcargs: dict[str, Any]) -> None:
    from svc_sandbox.sandbox import Sandbox
    from svc_sandbox.testing.emulator import Emulator, InProcessEmulator, journal_mark

    emulator = funcargs.get("svc_emulator")
    sandbox = funcargs.get("svc_sandbox")
    if emulator is None and isinstance(sandbox, Sandbox):
        emulator = InProcessEmulator(sandbox, sandbox.settings.origin)
    if isinstance(emulator, Emulator):
        item.stash[_MARK] = (emulator, journal_mark(emulator))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test's report shows the requests the emulator answered during it."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.when == "setup" or _MARK not in item.stash:
        return
    # Let go of the emulator once the test is reported (or torn down without a call): items
    # live as long as the run, and each held its function-scoped Sandbox until the end.
    emulator, mark = item.stash[_MARK]
    del item.stash[_MARK]
    if report.when != "call" or not report.failed:
        return
    from svc_sandbox.core.journal import JOURNAL_ENTRIES
    from svc_sandbox.testing.emulator import RemoteEmulator, requests_since

    try:
        since = requests_since(emulator, mark)
    except Exception as exc:  # the report must not fail because the emulator went away
        report.sections.append((JOURNAL_SECTION, f"(journal unavailable: {exc})"))
        return
    lines = [
        f"{e['time']}  {e['requestId']}  {e['status']}  {e['method']} {e['path']}"
        for e in since.entries
    ]
    if not since.complete:
        lines.insert(
            0, f"(earlier requests not shown: the journal keeps the last {JOURNAL_ENTRIES})"
        )
    if isinstance(emulator, RemoteEmulator) and lines:
        # --svc-url: one emulator for every worker and anyone else using it.
        lines.insert(0, "(a shared emulator: other clients' requests in this time are listed too)")
    report.sections.append((JOURNAL_SECTION, "\n".join(lines) or "(no requests)"))


# --- collection hooks ---------------------------------------------------------------------

#: YAML scenario files as test items (scenarios/pytest_items.py; its options and markers are
#: added by pytest_addoption and pytest_configure above).
pytest_collect_file = scenario_items.pytest_collect_file
