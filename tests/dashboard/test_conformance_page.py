"""The dashboard's Conformance page: one report per contract (commerce, identity, wallet),
each with its own Clear button sending DELETE /_sandbox/conformance?contract=<name>."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from svc_sandbox.contract.document import BY_NAME
from svc_sandbox.sandbox import Sandbox


def section_of(html: str, name: str) -> str:
    found = re.search(rf'<div data-live id="conformance-{name}">(.*?)</div>\n<form', html, re.S)
    assert found is not None, name
    return found.group(1)


def test_each_contract_has_its_report_on_the_page(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    assert svc_http.get("/api/products", headers=auth).status_code == 200
    assert svc_http.get("/auth/jwks").status_code == 200
    assert svc_http.get("/auth/.well-known/openid-configuration").status_code == 200
    html = svc_http.get("/_sandbox/ui/conformance").get_data(as_text=True)
    expected = {"commerce": 1, "identity": 2, "wallet": 0}
    for name, document in BY_NAME.items():
        report = svc_sandbox.recorders[document].report()
        assert report["summary"]["requests"] == expected[name]
        section = section_of(html, name)
        assert section.lstrip().startswith(f"<p>{expected[name]} requests;")
        title = f"{report['contract']['title']} {report['contract']['version']}"
        assert f'<h2 id="{name}">{title}</h2>' in html
    assert "GET <code>/jwks</code>" in section_of(html, "identity")


def test_each_report_has_its_own_clear_button(svc_http: FlaskClient) -> None:
    html = svc_http.get("/_sandbox/ui/conformance").get_data(as_text=True)
    for name in BY_NAME:
        url = f"/_sandbox/conformance?contract={name}"
        button = re.search(rf'data-url="{re.escape(url)}" data-method="DELETE".*?</form>', html)
        assert button is not None, name
        assert f">Clear the {name} report</button>" in button.group(0)
