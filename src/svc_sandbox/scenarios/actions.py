"""The ``control`` step: each action is one control-plane route (docs/control-plane.md).

An action's ``{name}`` arguments fill the path; those its route reads from the query go there
(every argument of a GET); the rest go in the JSON body. The same table turns a recorded
control-plane request back into an action (recorder.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

CONTROL_PREFIX = "/_sandbox"


@dataclass(frozen=True)
class Action:
    method: str
    #: Path under the control plane, with ``{argument}`` parts.
    path: str
    doc: str
    #: Arguments sent in the query, not the body (a GET sends every argument there).
    query: tuple[str, ...] = ()

    @property
    def path_arguments(self) -> list[str]:
        return re.findall(r"\{([a-z_]+)\}", self.path)

    def route(self, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The path with its arguments filled and what is left for the body or query."""
        rest = dict(arguments)
        path = self.path
        for name in self.path_arguments:
            path = path.replace("{" + name + "}", quote(str(rest.pop(name)), safe=""))
        return CONTROL_PREFIX + path, rest

    def in_query(self, argument: str) -> bool:
        return self.method == "GET" or argument in self.query

    def pattern(self) -> re.Pattern[str]:
        escaped = re.escape(CONTROL_PREFIX + self.path)
        for name in self.path_arguments:
            escaped = escaped.replace(re.escape("{" + name + "}"), f"(?P<{name}>[^/]+)")
        return re.compile(escaped)


ACTIONS: dict[str, Action] = {
    # clock and state
    "advance": Action("POST", "/clock/advance", "move the clock (duration: '30m' or seconds)"),
    "set_clock": Action("POST", "/clock/set", "set the clock (now: ISO 8601)"),
    "run_due": Action("POST", "/clock/run-due", "run what is due now"),
    "clock": Action("GET", "/clock", "the clock and the scheduled work"),
    "reset": Action("POST", "/reset", "back to the seeded state"),
    "info": Action("GET", "", "version, seed, clock, roots, seeded credentials"),
    "state": Action("GET", "/state", "export the whole state"),
    "import_state": Action(
        "PUT", "/state", "import an export: its fields (format, clock, ids, ...) as the arguments"
    ),
    # organizations and tokens
    "create_org": Action("POST", "/orgs", "an organization (name, environment, kyc, ...)"),
    "update_org": Action("PATCH", "/orgs/{org}", "change an organization's settings"),
    "create_token": Action("POST", "/orgs/{org}/tokens", "a new API token"),
    "revoke_token": Action("DELETE", "/tokens/{token}", "revoke an API token"),
    # checkout and the provider
    "session": Action("GET", "/checkout/sessions/{session}", "a session with its attempts"),
    "approve_session": Action("POST", "/checkout/sessions/{session}/approve", "buyer approves"),
    "fail_session": Action("POST", "/checkout/sessions/{session}/fail", "attempt fails (code)"),
    "approve_attempt": Action("POST", "/payments/attempts/{attempt}/approve", "approve one"),
    "fail_attempt": Action("POST", "/payments/attempts/{attempt}/fail", "fail one (code)"),
    "provider": Action("PATCH", "/payments/provider", "production push outcome and delay"),
    "faults": Action("POST", "/faults", "set refuseCheckouts: N, initiateFailures: [reason]"),
    "clear_faults": Action("DELETE", "/faults", "clear the provider faults"),
    "timeline": Action(
        "GET", "/checkout/sessions/{session}/timeline", "a session's provider timeline"
    ),
    "triggers": Action("GET", "/triggers", "the trigger registry"),
    "add_trigger": Action("POST", "/triggers", "a custom trigger phone (outcome, delay, fault)"),
    "remove_trigger": Action(
        "DELETE", "/triggers/{phone}", "remove a custom trigger (environment)", ("environment",)
    ),
    "clear_triggers": Action("DELETE", "/triggers", "remove every custom trigger"),
    "notification_fault": Action(
        "POST", "/faults/notifications", "late, lost, duplicate or out_of_order notices"
    ),
    "clear_notification_faults": Action(
        "DELETE", "/faults/notifications", "clear the notification faults"
    ),
    "latency_fault": Action("POST", "/faults/latency", "matching requests wait delaySeconds"),
    "clear_latency_faults": Action("DELETE", "/faults/latency", "clear the latency faults"),
    "create_checkout_link": Action("POST", "/orgs/{org}/checkout-links", "a checkout link"),
    "update_checkout_link": Action("PATCH", "/checkout-links/{link}", "change a checkout link"),
    "create_checkout_field": Action("POST", "/orgs/{org}/checkout-fields", "a checkout field"),
    "update_checkout_field": Action("PATCH", "/checkout-fields/{field}", "change a checkout field"),
    "delete_checkout_field": Action(
        "DELETE", "/checkout-fields/{field}", "remove a checkout field"
    ),
    "events": Action("GET", "/events", "the event log (type, sessionId, orgId)"),
    # webhooks
    "create_webhook_endpoint": Action("POST", "/webhooks/endpoints", "a webhook endpoint"),
    "update_webhook_endpoint": Action(
        "PATCH", "/webhooks/endpoints/{endpoint}", "change a webhook endpoint"
    ),
    "delete_webhook_endpoint": Action(
        "DELETE", "/webhooks/endpoints/{endpoint}", "remove a webhook endpoint"
    ),
    "trigger_event": Action("POST", "/events/trigger", "emit a test event (type, data)"),
    "deliveries": Action("GET", "/webhooks/deliveries", "webhook deliveries (filters)"),
    "attempts": Action("GET", "/webhooks/attempts", "the webhook attempt journal (filters)"),
    "redeliver": Action("POST", "/webhooks/events/{event}/redeliver", "send an event again"),
    "flush": Action("POST", "/webhooks/flush", "send every due webhook attempt now"),
    "receiver_fault": Action("POST", "/webhooks/faults/receiver", "next N attempts fail"),
    # withdrawals
    "withdrawals": Action("GET", "/withdrawals", "every organization's withdrawals"),
    "withdrawal": Action("GET", "/withdrawals/{withdrawal}", "one withdrawal"),
    "approve_withdrawal": Action("POST", "/withdrawals/{withdrawal}/approve", "review: approve"),
    "reject_withdrawal": Action("POST", "/withdrawals/{withdrawal}/reject", "review: reject"),
    "owner_wallet": Action("PUT", "/orgs/{org}/owner-wallet", "canCover: false makes 402"),
    # identity provider: users, apps, the scripted authorize step, signing keys
    "users": Action("GET", "/users", "every identity user"),
    "user": Action("GET", "/users/{user}", "one user with its consents"),
    "create_user": Action("POST", "/users", "a user (handle, kyc, password, claims)"),
    "update_user": Action("PATCH", "/users/{user}", "change a user's claims, KYC or password"),
    "set_consent": Action("PUT", "/users/{user}/consents/{client}", "preset consent (scopes)"),
    "disconnect_app": Action(
        "POST", "/users/{user}/apps/{client}/disconnect", "forget consent, stop refresh"
    ),
    "user_session": Action("POST", "/users/{user}/session", "a signed-in browser cookie"),
    "authorize": Action(
        "POST", "/identity/authorize", "the authorize step as a user (userId, params, decision)"
    ),
    "apps": Action("GET", "/apps", "every OAuth app"),
    "app": Action("GET", "/apps/{client}", "one OAuth app"),
    "create_app": Action("POST", "/apps", "register an OAuth app (clientSecret shown once)"),
    "update_app": Action("PATCH", "/apps/{client}", "change an app (scopes, redirectUris)"),
    "delete_app": Action("DELETE", "/apps/{client}", "delete an app, stop its refresh"),
    "rotate_secret": Action("POST", "/apps/{client}/rotate-secret", "a new clientSecret"),
    "disable_app": Action("POST", "/apps/{client}/disable", "block authorize and token"),
    "enable_app": Action("POST", "/apps/{client}/enable", "undo disable_app"),
    "approve_wallet_send": Action(
        "POST", "/apps/{client}/approve-wallet-send", "approve wallet:send (approved)"
    ),
    "signing_keys": Action("GET", "/identity/keys", "the signing keys"),
    "rotate_keys": Action("POST", "/identity/keys/rotate", "a new signing key"),
    # wallets
    "wallets": Action("GET", "/wallets", "every user's wallet"),
    "wallet": Action("GET", "/wallets/{user}", "one wallet (user id or handle)"),
    "fund_wallet": Action("POST", "/wallets/{user}/fund", "add money (amountMinor)"),
    "set_balance": Action("PUT", "/wallets/{user}/balance", "set availableMinor exactly"),
    "wallet_transfers": Action("GET", "/wallets/{user}/transfers", "a user's transfers"),
    "wallet_ledger": Action("GET", "/wallets/{user}/ledger", "a user's ledger entries"),
    # what clients did
    "requests": Action("GET", "/requests", "the request journal"),
    "conformance": Action("GET", "/conformance", "the contract conformance report"),
}


def action_for(method: str, path: str) -> tuple[str, dict[str, str]] | None:
    """The action a control-plane request is, with its path arguments (for the recorder)."""
    for name, action in ACTIONS.items():
        if action.method != method.upper():
            continue
        matched = action.pattern().fullmatch(path)
        if matched:
            return name, matched.groupdict()
    return None
