"""The dashboard's overview: the seed, and the seed an imported state draws from."""

from __future__ import annotations

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox


def test_the_overview_says_when_the_state_came_from_another_seed() -> None:
    document = create_app(Sandbox(seed=7)).test_client().get("/_sandbox/state").json
    http = create_app(Sandbox(seed=1)).test_client()
    page = http.get("/_sandbox/ui").get_data(as_text=True)
    assert "<strong>Seed</strong><br>1</div>" in page and "state-seed" not in page

    assert http.put("/_sandbox/state", json=document).status_code == 200
    page = http.get("/_sandbox/ui").get_data(as_text=True)
    assert '<span class="muted" id="state-seed">state imported from seed 7</span>' in page


def test_a_rows_button_is_named_with_its_subject() -> None:
    """Every token's button read "Revoke" alike, its row not said (WCAG 2.4.6)."""
    sandbox = Sandbox(seed=1)
    page = create_app(sandbox).test_client().get("/_sandbox/ui").get_data(as_text=True)
    for token in (t["token"] for o in sandbox.info()["organizations"] for t in o["tokens"]):
        assert f'aria-label="Revoke {token}">Revoke</button>' in page
