"""The dashboard's Requests page: the journal filtered as GET /_sandbox/requests filters it,
each request with what it sent (query, headers a replay needs, body), shown as text."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from svc_sandbox.dashboard.views import ROWS

UI_REQUESTS = "/_sandbox/ui/requests"


def rows(html: str) -> list[str]:
    """Each listed request as "METHOD path status"."""
    found = re.findall(
        r'<td>([A-Z]+)</td><td class="free-text"><code>([^<]*)</code></td>'
        r'<td class="num">(\d+)</td>',
        html,
    )
    return [" ".join(row) for row in found]


def test_the_page_filters_as_the_control_plane_does_and_keeps_what_was_typed(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    assert svc_http.get("/api/products", headers=auth).status_code == 200
    assert svc_http.get("/api/nowhere").status_code == 404
    assert svc_http.post("/api/checkout", json={}, headers=auth).status_code == 400
    html = svc_http.get(f"{UI_REQUESTS}?method=&status=4xx&path=%2Fapi").get_data(as_text=True)
    assert rows(html) == ["POST /api/checkout 400", "GET /api/nowhere 404"]
    assert 'name="status" value="4xx"' in html
    assert 'name="path" value="/api"' in html
    html = svc_http.get(f"{UI_REQUESTS}?status=500").get_data(as_text=True)
    assert rows(html) == []
    assert "No request matches this filter." in html


def test_a_refused_filter_is_said_beside_the_form_and_lists_nothing(svc_http: FlaskClient) -> None:
    assert svc_http.get("/api/nowhere").status_code == 404
    response = svc_http.get(f"{UI_REQUESTS}?status=4z")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    message = "status must be a status code such as 404, or a class such as 4xx"
    assert (
        f'<p class="field-error" id="filter-error" role="alert" data-no-refresh>{message}</p>'
        in html
    )
    status_input = re.search(r'<input id="f-status"[^>]*>', html)
    assert status_input is not None
    assert 'aria-invalid="true" aria-describedby="filter-error"' in status_input.group(0)
    assert 'value="4z"' in status_input.group(0)
    assert rows(html) == []
    assert "Nothing shown: the filter was refused." in html


def test_a_parameter_sent_twice_is_said_beside_the_form_too(svc_http: FlaskClient) -> None:
    """It was the generic "Something went wrong" page, without the form or its footer's time."""
    response = svc_http.get(f"{UI_REQUESTS}?method=GET&method=POST")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    message = "method is repeated: send it once"
    assert f'id="filter-error" role="alert" data-no-refresh>{message}</p>' in html
    method_input = re.search(r'<input id="f-method"[^>]*>', html)
    assert method_input is not None and 'aria-invalid="true"' in method_input.group(0)
    assert re.search(r'<span data-live id="footer-now">2026-[^<]+</span>', html)


def test_a_refused_page_is_not_refreshed_and_a_listed_one_is(svc_http: FlaskClient) -> None:
    """dashboard.js polls a page's address; a refused filter's page met its own 400 there and
    said "svc-sandbox answered 400 for this page: what it shows may be out of date"."""
    assert "data-no-refresh" in svc_http.get(f"{UI_REQUESTS}?status=abc").get_data(as_text=True)
    assert "data-no-refresh" not in svc_http.get(UI_REQUESTS).get_data(as_text=True)


def test_a_journal_longer_than_the_page_says_how_many_of_how_many(
    svc_http: FlaskClient,
) -> None:
    for _ in range(ROWS + 3):
        assert svc_http.get("/api/nowhere").status_code == 404
    html = svc_http.get(UI_REQUESTS).get_data(as_text=True)
    assert f"Showing the newest {ROWS} of {ROWS + 3}: every one through GET /_sandbox" in html
    html = svc_http.get(f"{UI_REQUESTS}?status=404&limit=5").get_data(as_text=True)
    assert f"Showing the newest 5 of {ROWS + 3}" in html
    assert "Showing the newest" not in svc_http.get(f"{UI_REQUESTS}?status=500").get_data(
        as_text=True
    )


def test_what_a_request_sent_is_shown_as_text(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    """Query, Authorization, Idempotency-Key, Content-Type and the body, escaped: a hostile
    value is text, never markup."""
    sent = {**auth, "Idempotency-Key": "key-<b>1</b>"}
    svc_http.post("/api/checkout?x=<i>", json={"description": "<script>x</script>"}, headers=sent)
    html = svc_http.get(f"{UI_REQUESTS}?method=POST").get_data(as_text=True)
    summary = "Query, Authorization, Idempotency-Key, Content-Type, Body"
    assert re.search(rf'<summary id="show-req_\w+">{summary}</summary>', html)
    assert "<dt>Query</dt><dd><code>x=&lt;i&gt;</code></dd>" in html
    assert f"<dt>Authorization</dt><dd><code>{auth['Authorization']}</code></dd>" in html
    assert "<dt>Idempotency-Key</dt><dd><code>key-&lt;b&gt;1&lt;/b&gt;</code></dd>" in html
    body = "{&#34;description&#34;: &#34;&lt;script&gt;x&lt;/script&gt;&#34;}"
    assert f"<dt>Body</dt><dd><pre>{body}</pre></dd>" in html
    assert "<script>x" not in html and "<b>1" not in html and "<i>" not in html


def test_a_form_is_shown_field_by_field(svc_http: FlaskClient) -> None:
    svc_http.post("/pay/cs_nothing", data={"phone": "0911<u>", "gateway": "telebirr"})
    html = svc_http.get(f"{UI_REQUESTS}?path=/pay/").get_data(as_text=True)
    assert "<code>phone</code> = <code>0911&lt;u&gt;</code><br>" in html
    assert "<code>gateway</code> = <code>telebirr</code><br>" in html


def test_a_form_field_sent_twice_shows_each_value(svc_http: FlaskClient) -> None:
    svc_http.post("/auth/oauth2/authorize", data={"grant": ["openid", "<profile>"]})
    html = svc_http.get(f"{UI_REQUESTS}?path=/oauth2/").get_data(as_text=True)
    assert "<code>grant</code> = <code>openid</code><br>" in html
    assert "<code>grant</code> = <code>&lt;profile&gt;</code><br>" in html


def test_a_request_with_nothing_more_says_so(svc_http: FlaskClient) -> None:
    svc_http.get("/api/nowhere")
    assert "nothing more" in svc_http.get(UI_REQUESTS).get_data(as_text=True)
