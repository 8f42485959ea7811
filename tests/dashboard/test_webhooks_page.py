"""The dashboard's webhooks page: how far delivery is behind, as GET /_sandbox says it."""

from __future__ import annotations

from flask.testing import FlaskClient


def backlog_line(svc_http: FlaskClient) -> str:
    html = svc_http.get("/_sandbox/ui/webhooks").get_data(as_text=True)
    return html.split('<div data-live id="backlog"><p>', 1)[1].split("</p>", 1)[0]


def test_the_backlog_line_counts_pending_deliveries_and_due_attempts(
    svc_http: FlaskClient,
) -> None:
    assert backlog_line(svc_http) == "0 pending; 0 attempts due (0 being sent)."
    org = svc_http.get("/_sandbox").get_json()["organizations"][0]["id"]
    refused = {"orgId": org, "url": "http://127.0.0.1:1/hooks"}  # nothing listens on port 1
    assert svc_http.post("/_sandbox/webhooks/endpoints", json=refused).status_code == 201
    trigger = {"type": "order.completed", "orgId": org}
    assert svc_http.post("/_sandbox/events/trigger", json=trigger).status_code == 201
    # On a frozen clock the first attempt falls due in a call that sends (advance, run-due,
    # flush), and is sent before the call returns: between calls nothing is left due.
    assert backlog_line(svc_http) == "1 pending; 0 attempts due (0 being sent)."
    assert svc_http.post("/_sandbox/clock/advance", json={"duration": "5s"}).status_code == 200
    assert svc_http.get("/_sandbox").get_json()["webhooks"]["backlog"] == {
        "pendingDeliveries": 1,
        "attemptsDue": 0,
        "attemptsSending": 0,
        "oldestDueAt": None,
        "lagSeconds": 0.0,
    }
    assert backlog_line(svc_http) == "1 pending; 0 attempts due (0 being sent)."
