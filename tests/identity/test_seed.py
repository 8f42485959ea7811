"""The seeded apps are registered as given (``Apps.register``, no URL grammar loaded at
start-up): their constants must be what ``create`` makes of them, the rules a client's app
registration goes through."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from svc_sandbox.identity.seed import SEEDED_APPS
from svc_sandbox.sandbox import Sandbox


@pytest.mark.parametrize("seeded", SEEDED_APPS, ids=[a[0] for a in SEEDED_APPS])
def test_a_seeded_app_is_what_create_makes_of_its_constants(seeded: tuple[Any, ...]) -> None:
    sandbox = Sandbox(clock_mode="frozen")
    name, uris, scopes, client_type, website, logo_url = seeded
    (registered,) = [a for a in sandbox.oauth_apps.all() if a.name == name]
    created, _ = sandbox.oauth_apps.create(
        registered.org_id, name, uris, scopes, client_type, website=website, logo_url=logo_url
    )
    fields = ("name", "client_type", "redirect_uris", "scopes", "website", "logo_url")
    assert [getattr(created, f) for f in fields] == [getattr(registered, f) for f in fields]
    assert created.grant_types == registered.grant_types
    # Its lists are its own: a record that shared the module's constants would carry an
    # in-place change into every Sandbox of the process.
    assert registered.redirect_uris is not uris and registered.scopes is not scopes


def test_starting_a_sandbox_does_not_load_the_uri_grammar() -> None:
    """30 ms of every start-up (its regular expressions): loaded when a URL is first checked."""
    probe = (
        "import sys; from svc_sandbox.sandbox import Sandbox; from svc_sandbox.app import "
        "create_app; create_app(Sandbox(clock_mode='frozen')); "
        "print('rfc3986_validator' in sys.modules)"
    )
    answer = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert answer.stdout.strip() == "False", answer.stderr
