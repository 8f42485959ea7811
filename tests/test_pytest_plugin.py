"""The pytest plugin, run as users run it: pytester writes a test file and runs pytest on it."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import timedelta

# Loaded here, before pytester's in-process runs: a module first imported inside such a run is
# unloaded after it, which would leave two copies of httpx and httpcore (and of their
# exception classes) in this process.
import freezegun  # noqa: F401
import h11  # noqa: F401
import httpcore  # noqa: F401
import httpx  # noqa: F401
import pytest

import svc_sandbox.client  # noqa: F401
import svc_sandbox.testing.clock  # noqa: F401
import svc_sandbox.testing.identity  # noqa: F401  (and the identity, wallet and error modules)
import svc_sandbox.testing.webhooks  # noqa: F401
from svc_sandbox.app import create_app
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.server import ServerThread
from svc_sandbox.testing.emulator import RemoteEmulator

QUIET = ("-p", "no:cacheprovider", "-q")

ISOLATION = """
import pytest

SEEN = []

@pytest.mark.parametrize("n", [1, 2, 3])
def test_each_test_has_its_own_tenant(svc_client, svc_org, svc_emulator, n):
    svc_client.create_product(f"Book {n}", "fixed", amount=5000)
    assert [p.title for p in svc_client.list_products().items] == [f"Book {n}"]
    assert svc_org.token.startswith("svc_test_") and svc_org.live_token.startswith("svc_live_")
    SEEN.append((svc_org.id, svc_emulator.url))

def test_one_server_serves_them_all():
    assert len({url for _, url in SEEN}) == 1
    # A fresh sandbox per test with the same seed gives the same ids; a shared one, new ones.
    assert len({org for org, _ in SEEN}) == TENANTS
"""


@pytest.mark.parametrize(("scope", "tenants"), [("function", 1), ("module", 3), ("session", 3)])
def test_svc_org_isolates_tests_on_any_scope(
    pytester: pytest.Pytester, scope: str, tenants: int
) -> None:
    pytester.makepyfile(test_isolation=ISOLATION.replace("TENANTS", str(tenants)))
    result = pytester.runpytest(*QUIET, f"--svc-scope={scope}")
    result.assert_outcomes(passed=4)


SCOPE_SHARING = """
SANDBOXES = []

def test_one(svc_sandbox):
    SANDBOXES.append(svc_sandbox)

def test_two(svc_sandbox):
    SANDBOXES.append(svc_sandbox)
    assert (SANDBOXES[0] is SANDBOXES[1]) == {shared}
    assert svc_sandbox.settings.seed == {seed}
    assert svc_sandbox.settings.strict and svc_sandbox.clock.mode.value == "frozen"
"""


@pytest.mark.parametrize(
    ("options", "shared", "seed"),
    [((), False, 1), (("--svc-scope=session", "--svc-seed=7"), True, 7)],
)
def test_scope_and_seed_options(
    pytester: pytest.Pytester, options: tuple[str, ...], shared: bool, seed: int
) -> None:
    pytester.makepyfile(test_scope=SCOPE_SHARING.format(shared=shared, seed=seed))
    pytester.runpytest(*QUIET, *options).assert_outcomes(passed=2)


def test_scope_and_seed_from_the_ini_file(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nsvc_scope = session\nsvc_seed = 7\n")
    pytester.makepyfile(test_scope=SCOPE_SHARING.format(shared=True, seed=7))
    pytester.runpytest(*QUIET).assert_outcomes(passed=2)


CLOCK = """
from datetime import datetime, timedelta, timezone

import pytest

def test_advance_and_set(svc_clock):
    start = svc_clock.now()
    assert svc_clock.advance("90s") == start + timedelta(seconds=90)
    assert svc_clock.advance(timedelta(minutes=1)) == start + timedelta(seconds=150)
    later = datetime(2027, 1, 1, tzinfo=timezone.utc)
    assert svc_clock.set(later) == later

@pytest.mark.svc_freezegun
def test_python_time_follows_the_sandbox_clock(svc_clock):
    assert datetime.now(timezone.utc) == svc_clock.now()
    svc_clock.advance("2h")
    assert datetime.now(timezone.utc) == svc_clock.now()

def test_python_time_is_real_again_after_the_test(svc_clock):
    assert datetime.now(timezone.utc).year >= 2025
    assert datetime.now(timezone.utc) != svc_clock.now()
"""


FREEZE = """
import gc

# Before the app is built (some interpreters, CPython 3.12.1 among them, start with objects
# frozen already).
AT_COLLECTION = gc.get_freeze_count()

def test_first(svc_http):
    assert gc.get_freeze_count() {first}

def test_later_objects_are_still_collected(svc_http):
    import weakref

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the collector frees it
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None
"""


FIRST_SETUP = """
import gc, sys

#: Collections that ran inside an import of the emulator or the first build of the app.
DURING_LOAD = []

def note(phase, info):
    frame = sys._getframe(0).f_back if phase == "start" else None
    while frame is not None:
        code = frame.f_code
        if "svc_sandbox" in code.co_filename and code.co_name in ("<module>", "create_app"):
            DURING_LOAD.append(code.co_filename)
            return
        frame = frame.f_back

gc.callbacks.append(note)

def test_first(svc_http):
    assert "svc_sandbox.app" in sys.modules
    assert DURING_LOAD == []
"""


@pytest.mark.parametrize("ini", ["", "svc_gc_freeze = false"], ids=["default", "off"])
def test_the_first_setup_runs_no_collection_while_the_emulator_loads(
    pytester: pytest.Pytester, ini: str
) -> None:
    """Importing the emulator and building the app make only what lives as long as the
    process: the collector is paused meanwhile (a subprocess: the emulator is not loaded yet)."""
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(test_first_setup=FIRST_SETUP)
    pytester.runpytest_subprocess(*QUIET).assert_outcomes(passed=1)


def test_loading_the_plugin_loads_no_emulator() -> None:
    """pytest loads the plugin in every run of a project with svc-sandbox installed: the
    emulator, the scenario loader and their libraries wait for a fixture or a scenario file."""
    script = (
        "import sys, svc_sandbox.pytest_plugin\n"
        "heavy = ('flask', 'werkzeug', 'pydantic', 'jsonschema', 'yaml', 'httpx')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
        "print(sorted(m for m in sys.modules if m.startswith('svc_sandbox.')))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    heavy, ours = done.stdout.splitlines()
    assert heavy == "[]"
    assert "svc_sandbox.sandbox" not in ours and "svc_sandbox.scenarios.loader" not in ours


@pytest.mark.parametrize(
    ("ini", "first"),
    [("", "> AT_COLLECTION"), ("svc_gc_freeze = false", "== AT_COLLECTION")],
    ids=["default", "off"],
)
def test_the_objects_built_with_the_app_are_frozen_unless_switched_off(
    pytester: pytest.Pytester, ini: str, first: str
) -> None:
    """A subprocess each: gc.freeze acts on the whole interpreter."""
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(test_freeze=FREEZE.format(first=first))
    pytester.runpytest_subprocess(*QUIET).assert_outcomes(passed=2)


def test_a_bad_svc_scope_in_the_ini_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nsvc_scope = sesion\n")
    pytester.makepyfile(test_scope=SCOPE_SHARING.format(shared=False, seed=1))
    result = pytester.runpytest(*QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: svc_scope (ini) / --svc-scope must be one of function, module, session, "
            "not 'sesion'"
        ]
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_svc_clock_moves_the_sandbox_and_optionally_freezegun(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_clock=CLOCK)
    pytester.runpytest(*QUIET).assert_outcomes(passed=3)


WEBHOOKS = """
def test_a_paid_checkout_is_delivered_signed(svc_client, svc_webhooks):
    product = svc_client.create_product("Book", "fixed", amount=5000, status="published")
    session = svc_client.create_checkout(
        product.product.id, gateway="telebirr",
        customer={"email": "a@example.com", "phone": "251900000001", "externalId": "u-1"},
    )
    event = svc_webhooks.wait_for("order.completed", sessionId=session.session_id)
    assert event.data["customerExternalId"] == "u-1"
    assert all(item.event is not None for item in svc_webhooks.received)

def test_an_expiry_arrives_by_moving_the_clock_not_by_sleeping(svc_client, svc_webhooks, svc_clock):
    start = svc_clock.now()
    session = svc_client.create_custom_checkout(1000, "Ticket")
    event = svc_webhooks.wait_for("checkout.session.expired", sessionId=session.session_id)
    assert event.data["failure"]["code"] == "session_expired"
    assert (svc_clock.now() - start).total_seconds() == 1800

def test_a_webhook_that_never_comes_fails_with_what_did(svc_client, svc_webhooks):
    import pytest
    svc_client.create_custom_checkout(1000, "Ticket")
    with pytest.raises(AssertionError, match="received \\\\[\\\\('checkout.session.expired'"):
        svc_webhooks.wait_for("order.completed")

def test_another_tenants_events_do_not_arrive(svc_webhooks, svc_emulator):
    from svc_sandbox.client import SvcClient
    other = svc_emulator.create_tenant("Other")
    client = SvcClient(other.token, base_url=svc_emulator.base_url)
    client.create_custom_checkout(1000, "Ticket")
    svc_emulator.advance(__import__("datetime").timedelta(hours=1))
    assert svc_webhooks.received == []
"""


def test_svc_webhooks_captures_and_waits_on_the_sandbox_clock(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_webhooks=WEBHOOKS)
    pytester.runpytest(*QUIET).assert_outcomes(passed=4)


LATE_READS = """
from datetime import timedelta

import httpx
import pytest
from svc_sandbox.client import build_test_webhook

def pay(svc_client):
    customer = {"email": "buyer@example.com", "phone": "251900000001"}  # pays at once
    return svc_client.create_custom_checkout(
        1000, "Ticket", gateway="telebirr", customer=customer
    ).session_id

def test_events_and_received_after_the_clock_moved_on(svc_client, svc_clock, svc_webhooks):
    paid_at = svc_clock.now()
    paid = pay(svc_client)
    svc_clock.advance("1s")  # order.created and order.completed arrive, sent at paid_at
    svc_clock.advance("10m")  # the test goes on to check something later
    assert [e.data["sessionId"] for e in svc_webhooks.events("order.completed")] == [paid]
    received = [(item.arrived_at, item.error) for item in svc_webhooks.received]
    assert received == [(paid_at, None)] * 2

def test_wait_for_after_the_clock_moved_on(svc_client, svc_clock, svc_webhooks):
    paid = pay(svc_client)
    svc_clock.advance("10m")
    assert svc_webhooks.wait_for("order.completed", sessionId=paid).data["sessionId"] == paid

def post(svc_webhooks, secret, timestamp):
    hook = build_test_webhook("order.completed", secret, timestamp=timestamp)
    assert httpx.post(svc_webhooks.url, content=hook.body, headers=hook.headers).status_code == 200

@pytest.mark.parametrize(
    ("secret", "skew", "reason"),
    [
        ("whsec_not_the_endpoints", timedelta(0), "signature_mismatch"),
        (None, timedelta(seconds=-301), "timestamp_outside_tolerance"),
        # Signed 10 minutes ahead: still refused once the clock has reached its t.
        (None, timedelta(minutes=10), "timestamp_outside_tolerance"),
    ],
)
def test_a_bad_webhook_stays_rejected(svc_clock, svc_webhooks, secret, skew, reason):
    post(svc_webhooks, secret or svc_webhooks.secret, svc_clock.now() + skew)
    svc_clock.advance("10m")
    assert svc_webhooks.events() == []
    [item] = svc_webhooks.received
    assert item.event is None and f"rejected ({reason})" in item.error
    with pytest.raises(AssertionError, match=f"failed verification: .*{reason}"):
        svc_webhooks.wait_for("order.completed")

def test_a_good_webhook_read_late_is_accepted(svc_clock, svc_webhooks):
    post(svc_webhooks, svc_webhooks.secret, svc_clock.now())
    svc_clock.advance("1h")
    assert [e.type for e in svc_webhooks.events()] == ["order.completed"]
"""


def test_svc_webhooks_verifies_each_webhook_at_its_arrival(
    pytester: pytest.Pytester, emulator_options: tuple[str, ...]
) -> None:
    pytester.makepyfile(test_late_reads=LATE_READS)
    pytester.runpytest(*QUIET, *emulator_options).assert_outcomes(passed=6)


FAILING = """
def test_fails_after_some_requests(svc_client):
    svc_client.create_product("Book", "fixed", amount=5000)
    svc_client.list_orders()
    assert False, "the product was wrong"
"""


def test_a_failure_shows_the_requests_of_the_test(
    pytester: pytest.Pytester, emulator_options: tuple[str, ...]
) -> None:
    """With --svc-url the emulator is shared, and the list says it may hold others' requests."""
    pytester.makepyfile(test_failing=FAILING)
    result = pytester.runpytest(*QUIET, *emulator_options)
    result.assert_outcomes(failed=1)
    shared = "(a shared emulator: other clients' requests in this time are listed too)"
    result.stdout.fnmatch_lines(
        [
            "*svc-sandbox requests during the test*",
            *([shared] if emulator_options else []),
            "*req_*  201  POST /api/products",
            "*req_*  200  GET /api/orders",
        ]
    )
    if not emulator_options:
        result.stdout.no_fnmatch_line(shared)


MANY_REQUESTS = """
def test_fails_after_more_requests_than_the_journal_keeps(svc_client):
    svc_client.create_product("Book", "fixed", amount=5000)
    for _ in range(1000):
        svc_client.list_orders()
    assert False
"""


def test_a_failure_after_more_requests_than_the_journal_keeps_says_so(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_SANDBOX_RATE_LIMITS", "false")
    pytester.makepyfile(test_many=MANY_REQUESTS)
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*svc-sandbox requests during the test*",
            "(earlier requests not shown: the journal keeps the last 1000)",
            "*req_*  200  GET /api/orders",
        ]
    )
    result.stdout.no_fnmatch_line("*POST /api/products*")


@pytest.fixture
def running_emulator() -> Iterator[str]:
    """An emulator already running, as ``svc-sandbox serve`` would be."""
    sandbox = Sandbox(clock_mode="frozen", seed=3, port=0)
    server = ServerThread(create_app(sandbox), sandbox.settings).start()
    try:
        yield server.origin
    finally:
        server.close()


@pytest.fixture(params=["in-process", "remote"])
def emulator_options(request: pytest.FixtureRequest, running_emulator: str) -> tuple[str, ...]:
    """The pytest options of a run with the plugin's own emulator, then with ``--svc-url``."""
    return (f"--svc-url={running_emulator}",) if request.param == "remote" else ()


REMOTE = """
def test_the_fixtures_drive_a_running_emulator(svc_client, svc_webhooks, svc_emulator):
    assert svc_emulator.base_url == "{url}/api"
    session = svc_client.create_custom_checkout(1000, "Ticket")
    svc_webhooks.wait_for("checkout.session.expired", sessionId=session.session_id)
    assert svc_client.get_checkout(session.session_id).status == "expired"

def test_svc_sandbox_says_it_is_in_process_only(svc_sandbox):
    pass

def test_svc_http_is_named_as_asked_for(svc_http):
    pass
"""


def test_svc_url_uses_a_running_emulator(pytester: pytest.Pytester, running_emulator: str) -> None:
    pytester.makepyfile(test_remote=REMOTE.format(url=running_emulator))
    result = pytester.runpytest(*QUIET, f"--svc-url={running_emulator}")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*svc_sandbox needs the in-process Sandbox; with --svc-url use svc_emulator*",
            "*svc_http needs the in-process Sandbox; with --svc-url use svc_emulator*",
        ],
        consecutive=False,
    )


XDIST = """
import os
import pytest

@pytest.mark.parametrize("n", range(6))
def test_each_worker_has_its_emulator(svc_client, svc_emulator, n):
    svc_client.create_product("Book", "free")
    assert svc_client.list_products().total == 1
    worker = os.environ["PYTEST_XDIST_WORKER"]
    with open(f"{worker}-{n}.url", "w") as out:
        out.write(svc_emulator.url)
"""


def test_one_emulator_per_xdist_worker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_xdist=XDIST)
    result = pytester.runpytest_subprocess(*QUIET, "-n", "2", "--svc-scope=session")
    result.assert_outcomes(passed=6)
    urls: dict[str, set[str]] = {}
    for path in pytester.path.glob("*.url"):
        urls.setdefault(path.name.split("-")[0], set()).add(path.read_text())
    assert len(urls) == 2  # both workers ran tests
    assert all(len(seen) == 1 for seen in urls.values())  # one emulator per worker
    assert len(set().union(*urls.values())) == 2  # on two ports


IDENTITY = """
import pytest
from svc_sandbox.client import SvcClientError

def test_a_fresh_user_signs_in_to_a_fresh_app_and_pays_a_seeded_user(
    svc_user, svc_app, svc_authorize, svc_org
):
    assert svc_user.wallet_minor == 1_000_000 and svc_user.handle
    assert svc_app.client_secret and svc_app.api_key == svc_org.token
    scopes = ["openid", "profile", "wallet:read", "wallet:send"]
    tokens = svc_authorize(svc_user, svc_app, scopes=scopes)
    assert tokens.scopes == scopes
    with svc_app.identity_client() as idp:
        assert idp.userinfo(tokens.access_token).sub == svc_user.id
    with svc_app.wallet_client(tokens.access_token) as wallet:
        assert wallet.balance().available_minor == 1_000_000
        sent = wallet.send(2500, recipient_handle="tigist", idempotency_key="invoice-0001")
        assert sent.deduped is False
        assert wallet.balance().available_minor == 1_000_000 - 2500

def test_each_test_gets_its_own_user_and_app(svc_user, svc_app):
    SEEN.append((svc_user.id, svc_app.client_id))
    assert len(set(SEEN)) == len(SEEN)

def test_granted_scopes_can_be_fewer_and_opaque_tokens_are_refused(
    svc_user, svc_app, svc_authorize
):
    tokens = svc_authorize(
        svc_user, svc_app, scopes=["openid", "wallet:read", "wallet:send"],
        granted=["openid", "wallet:read"], resource=None,
    )
    assert tokens.scopes == ["openid", "wallet:read"]
    wallet = svc_app.wallet_client(tokens.access_token)
    with wallet, pytest.raises(SvcClientError) as refused:
        wallet.balance()
    assert refused.value.code == "invalid_token"

SEEN = []
"""


def test_svc_user_svc_app_and_svc_authorize(
    pytester: pytest.Pytester, emulator_options: tuple[str, ...]
) -> None:
    pytester.makepyfile(test_identity=IDENTITY)
    pytester.runpytest(*QUIET, *emulator_options).assert_outcomes(passed=3)


SHARED_CONTROLS = """
import httpx

def no_token_checkouts(svc_emulator, svc_client, count):
    product = svc_client.create_product("Book", "fixed", amount=5000, status="published")
    body = {"productId": product.product.checkout_token, "gateway": "telebirr",
            "customer": {"email": "a@b.et", "phone": "251900000003"}}
    with httpx.Client(base_url=svc_emulator.base_url) as http:
        return [http.post("/checkout", json=body).status_code for _ in range(count)]

def test_a_sets_every_sandbox_wide_control(svc_emulator, svc_client, svc_clock):
    # §8: 40 no-token checkouts per 5 minutes per IP, and every test comes from 127.0.0.1.
    assert no_token_checkouts(svc_emulator, svc_client, 41)[-1] == 429
    control = svc_emulator.control
    control("POST", "/_sandbox/faults", {"refuseCheckouts": 2, "initiateFailures": ["down"]})
    control("PATCH", "/_sandbox/payments/provider", {"productionPushOutcome": "payment_rejected"})
    control("POST", "/_sandbox/faults/latency", {"path": "/api/*", "delaySeconds": 600})
    control("POST", "/_sandbox/faults/notifications", {"kind": "lost"})
    control("POST", "/_sandbox/webhooks/faults/receiver", {"count": 3})
    control("POST", "/_sandbox/triggers", {"phone": "0911000111", "outcome": "fail"})
    svc_clock.advance("1m")

def test_b_finds_them_cleared_and_the_clock_shared(svc_emulator, svc_client, svc_clock):
    control = svc_emulator.control
    provider = control("GET", "/_sandbox/faults")
    assert (provider["refuseCheckouts"], provider["initiateFailures"]) == (0, [])
    assert provider["productionPushOutcome"] == "approve"
    assert control("GET", "/_sandbox/faults/latency")["items"] == []
    assert control("GET", "/_sandbox/faults/notifications")["items"] == []
    assert control("GET", "/_sandbox/webhooks/faults/receiver")["count"] == 0
    triggers = control("GET", "/_sandbox/triggers")["items"]
    assert [t for t in triggers if t["source"] == "custom"] == []
    assert svc_clock.now().isoformat() == "2026-01-01T00:01:00+00:00"  # shared, as documented
    assert no_token_checkouts(svc_emulator, svc_client, 1) == [200]
"""


@pytest.mark.parametrize("scope", ["module", "session"])
def test_a_shared_sandbox_clears_sandbox_wide_controls_after_each_test(
    pytester: pytest.Pytester, scope: str
) -> None:
    """Faults, rules, triggers and per-IP counters a test set do not reach the next test's own
    svc_org; the data and the clock stay shared (docs/testing.md)."""
    pytester.makepyfile(test_shared=SHARED_CONTROLS)
    pytester.runpytest(*QUIET, f"--svc-scope={scope}").assert_outcomes(passed=2)


FREEZEGUN_FOLLOWS = """
from datetime import datetime, timedelta, timezone

import pytest

def python_now():
    return datetime.now(timezone.utc)

@pytest.mark.svc_freezegun
def test_wait_for_moves_python_time(svc_client, svc_webhooks, svc_emulator):
    session = svc_client.create_custom_checkout(1000, "Ticket")
    svc_webhooks.wait_for("checkout.session.expired", sessionId=session.session_id)
    assert python_now() == svc_emulator.now() > datetime(2026, 1, 1, 0, 29, tzinfo=timezone.utc)

@pytest.mark.svc_freezegun
def test_the_clock_set_naive_is_utc_and_python_follows(svc_clock):
    svc_clock.set(datetime(2026, 2, 1))
    assert svc_clock.now() == datetime(2026, 2, 1, tzinfo=timezone.utc) == python_now()
"""

FREEZEGUN_IN_PROCESS = """
from datetime import datetime, timedelta, timezone

import httpx
import pytest

def python_now():
    return datetime.now(timezone.utc)

@pytest.mark.svc_freezegun
def test_without_svc_clock_svc_sandbox_advance_moves_python_time(svc_sandbox):
    assert python_now() == svc_sandbox.now()
    svc_sandbox.advance(timedelta(hours=5))
    assert python_now() == svc_sandbox.now() == datetime(2026, 1, 1, 5, tzinfo=timezone.utc)

@pytest.mark.svc_freezegun
def test_a_control_plane_request_moves_python_time(svc_emulator, svc_clock):
    httpx.post(svc_emulator.url + "/_sandbox/clock/advance", json={"duration": "2h"})
    assert python_now() == svc_clock.now() == datetime(2026, 1, 1, 2, tzinfo=timezone.utc)

@pytest.mark.svc_freezegun("bogus", when=3)
def test_arguments_are_refused(svc_clock):
    pass

def test_python_time_is_real_after_the_tests():
    import freezegun.api

    assert python_now().year >= 2025 and not freezegun.api.freeze_factories
"""


def test_the_svc_freezegun_marker_follows_every_clock_move(
    pytester: pytest.Pytester, emulator_options: tuple[str, ...]
) -> None:
    pytester.makepyfile(test_follows=FREEZEGUN_FOLLOWS)
    pytester.runpytest(*QUIET, *emulator_options).assert_outcomes(passed=2)


def test_the_svc_freezegun_marker_in_process(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_in_process=FREEZEGUN_IN_PROCESS)
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.svc_freezegun takes no arguments*"])


FREEZEGUN_TIMED = """
import pytest

@pytest.mark.svc_freezegun
def test_marked(svc_clock):
    svc_clock.advance("1h")

def test_following(svc_clock):
    svc_clock.follow_with_freezegun()
    svc_clock.advance("1h")
"""


def test_python_time_is_real_again_when_pytest_times_the_call(pytester: pytest.Pytester) -> None:
    """freezegun stops as the body ends: pytest reads the clock right after to time the call
    (``--durations``, JUnit XML), and a frozen clock made a call last 56 years and its
    teardown a negative time."""
    pytester.makepyfile(test_timed=FREEZEGUN_TIMED)
    recorded = pytester.inline_run(*QUIET)
    recorded.assertoutcome(passed=2)
    reports = recorded.getreports("pytest_runtest_logreport")
    durations = {(r.head_line, r.when): r.duration for r in reports}
    assert {when for _, when in durations} == {"setup", "call", "teardown"}
    assert all(0 <= seconds < 600 for seconds in durations.values()), durations


WITHOUT_FREEZEGUN = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "freezegun":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Block())
for name in [name for name in sys.modules if name.split(".")[0] == "freezegun"]:
    del sys.modules[name]
"""


def test_the_svc_freezegun_marker_without_freezegun_says_to_install_it(
    pytester: pytest.Pytester,
) -> None:
    """A subprocess: the import block must not reach this process."""
    pytester.makeconftest(WITHOUT_FREEZEGUN)
    pytester.makepyfile(
        test_marked="import pytest\n\n@pytest.mark.svc_freezegun\ndef test_marked(svc_clock):\n"
        "    pass\n"
    )
    result = pytester.runpytest_subprocess(*QUIET)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*svc_freezegun marker * need freezegun: pip install freezegun"])
    assert "ModuleNotFoundError" not in result.stdout.str()


ONE_TEST = """
def test_one(svc_client):
    svc_client.create_product("Book", "fixed", amount=5000, status="published")

def test_two(svc_client):
    pass
"""


@pytest.mark.parametrize(
    ("ini", "message"),
    [
        ("svc_seed = abc", "svc_seed (ini) / --svc-seed must be an integer, not 'abc'"),
        (
            "svc_gc_freeze = maybe",
            "svc_gc_freeze (ini) must be true or false: invalid truth value 'maybe'",
        ),
        (
            "svc_url = not-a-url",
            "svc_url (ini) / --svc-url must be an absolute http(s) URL with a host, "
            "not 'not-a-url'",
        ),
        ("svc_url = http://127.0.0.1:1", "svc_url (ini) / --svc-url http://127.0.0.1:1: no svc*"),
    ],
)
def test_a_bad_ini_value_is_one_usage_error_naming_it(
    pytester: pytest.Pytester, ini: str, message: str
) -> None:
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(test_one=ONE_TEST)
    result = pytester.runpytest(*QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_an_unreachable_svc_url_option_is_one_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one=ONE_TEST)
    result = pytester.runpytest(*QUIET, "--svc-url=http://127.0.0.1:1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: svc_url (ini) / --svc-url http://127.0.0.1:1: no *"])


@pytest.mark.parametrize(
    ("variable", "value", "status", "line"),
    [
        (
            "SVC_SANDBOX_RATE_LIMITS",
            "maybe",
            pytest.ExitCode.USAGE_ERROR,
            "ERROR: svc-sandbox: invalid settings from the environment: SVC_SANDBOX_RATE_LIMITS *",
        ),
        (  # the CLI's warning (Settings.unknown_env_names), as a pytest warning
            "SVC_SANDBOX_CLOCK",
            "real",
            pytest.ExitCode.OK,
            "*PytestConfigWarning: svc-sandbox: warning: SVC_SANDBOX_CLOCK is no setting and is "
            "ignored (did you mean SVC_SANDBOX_CLOCK_MODE?)",
        ),
    ],
    ids=["bad value", "unknown name"],
)
def test_svc_sandbox_variables_are_checked_once_at_start(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    status: pytest.ExitCode,
    line: str,
) -> None:
    monkeypatch.setenv(variable, value)
    pytester.makepyfile(test_one=ONE_TEST)
    result = pytester.runpytest(*QUIET)
    assert result.ret == status
    pytest.LineMatcher(result.outlines + result.errlines).fnmatch_lines([line])
    assert "Traceback" not in result.stdout.str()


ROOTS = """
def test_the_client_talks_to_the_plugins_server(svc_emulator, svc_client):
    assert svc_emulator.base_url == svc_emulator.url + "/v2/api"
    assert svc_client.create_product("Book", "fixed", amount=5000).product.title == "Book"
"""


def test_a_root_from_the_environment_keeps_its_path_on_the_plugins_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_SANDBOX_BASE_URL", "http://10.1.2.3/v2/api")
    monkeypatch.setenv("SVC_SANDBOX_PUBLIC_URL", "https://sandbox.example")
    pytester.makepyfile(test_roots=ROOTS)
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(passed=1, warnings=2)
    result.stdout.fnmatch_lines(
        ["*SVC_SANDBOX_BASE_URL=http://10.1.2.3/v2/api: the pytest plugin serves on its own*"]
    )


UNDER_EXEC = """
import os

def test_reads_the_variables_only():
    assert os.environ["SVC_SANDBOX_URL"]

def test_uses_the_fixtures(svc_client):
    assert svc_client.create_product("Book", "fixed", amount=5000).product.title == "Book"

def test_uses_them_again(svc_client):
    assert svc_client.list_products().total == 0
"""


@pytest.mark.parametrize(
    ("tests", "warned"),
    [("test_reads_the_variables_only", False), ("test_uses", True)],
    ids=["variables only", "fixtures"],
)
def test_under_exec_without_svc_url_the_fixtures_say_they_use_their_own_emulator(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tests: str, warned: bool
) -> None:
    """``svc-sandbox exec -- pytest``: SVC_BASE_URL names exec's emulator, the fixtures make
    their own; a suite that uses them is told once, one that only reads the variables not."""
    monkeypatch.setenv("SVC_SANDBOX_URL", "http://127.0.0.1:41234")
    pytester.makepyfile(test_exec=UNDER_EXEC)
    result = pytester.runpytest(*QUIET, "-W", "default::pytest.PytestWarning", "-k", tests)
    result.assert_outcomes(passed=2 if warned else 1, warnings=1 if warned else 0)
    if warned:
        result.stdout.fnmatch_lines(
            [
                "*SVC_SANDBOX_URL=http://127.0.0.1:41234 is set (svc-sandbox exec?), but the svc "
                'fixtures use the plugin\'s own in-process emulator*--svc-url "$SVC_SANDBOX_URL"'
            ]
        )


DROPPED_SANDBOXES = """
import gc
import weakref

import pytest

SEEN = []


@pytest.mark.parametrize("n", range(20))
def test_uses_a_fresh_sandbox(svc_sandbox, svc_client, n):
    SEEN.append(weakref.ref(svc_sandbox))
    session = svc_client.create_custom_checkout(1000, "Ticket")
    assert svc_client.get_checkout(session.session_id).status == "open"


def test_the_earlier_sandboxes_are_gone():
    gc.collect()
    assert len(SEEN) == 20
    # The last may stay bound to the plugin's one app until the next test binds another.
    assert sum(ref() is not None for ref in SEEN) <= 1
"""


def test_a_function_scoped_sandbox_is_let_go_after_its_test(pytester: pytest.Pytester) -> None:
    """Each test's Sandbox was kept (in the item's stash, for the failure report's journal)
    until the whole run ended: 1,000 tests held 1,000 Sandboxes, about 250 kB each."""
    pytester.makepyfile(test_dropped=DROPPED_SANDBOXES)
    pytester.runpytest(*QUIET).assert_outcomes(passed=21)


def test_a_remote_clock_move_waits_for_the_deliveries_it_makes(svc_server: RunningServer) -> None:
    """With --svc-url an advance answers once every attempt due on the way was made: against
    a hanging receiver a minute, past the client's 30 s read timeout (ReadTimeout, while the
    server went on sending). Here an in-process receiver takes 1 s, the client's timeout 0.3 s."""
    received: list[bytes] = []

    def slow(body: bytes, headers: dict[str, str]) -> int:
        threading.Event().wait(1.0)
        received.append(body)
        return 200

    org = svc_server.sandbox.info()["organizations"][0]["id"]
    svc_server.sandbox.add_webhook_receiver(org, slow)
    remote = RemoteEmulator(svc_server.url, timeout=0.3)
    try:
        trigger = {"type": "order.completed", "orgId": org}
        remote.control("POST", "/_sandbox/events/trigger", trigger)
        remote.advance(timedelta(seconds=1))
    finally:
        remote.close()
    assert len(received) == 1
