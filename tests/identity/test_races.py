"""Thread races against a real server on 127.0.0.1 (issue 11 item 5): parallel redemption of
one code and parallel refreshes of one token each have exactly one winner."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import requests

from svc_sandbox.pytest_plugin import RunningServer
from tests.identity.helpers import VERIFIER, Client, challenge, query_of, wallet_app

PARALLEL = 8


@pytest.fixture
def server(svc_server: RunningServer) -> RunningServer:
    svc_server.sandbox.settings.rate_limits = False
    return svc_server


def all_at_once(send: Any) -> list[requests.Response]:
    barrier = threading.Barrier(PARALLEL)
    results: list[requests.Response] = []
    lock = threading.Lock()

    def run() -> None:
        barrier.wait()
        response = send()
        with lock:
            results.append(response)

    threads = [threading.Thread(target=run) for _ in range(PARALLEL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == PARALLEL
    return results


def code_of(server: RunningServer, client: Client) -> str:
    user = server.sandbox.users.by_handle("abebe")
    assert user is not None
    answer = requests.post(
        server.url + "/_sandbox/identity/authorize",
        json={
            "userId": user.id,
            "url": (
                f"{server.url}/auth/oauth2/authorize?response_type=code"
                f"&client_id={client.client_id}&redirect_uri={client.redirect_uri}"
                "&scope=openid%20offline_access&state=s"
                f"&code_challenge={challenge(VERIFIER)}"
                "&code_challenge_method=S256"
            ),
        },
        timeout=5,
    ).json()
    assert answer["iss"] == server.sandbox.settings.issuer
    return str(query_of(answer["redirectUrl"])["code"])


def token_post(server: RunningServer, client: Client, form: dict[str, str]) -> requests.Response:
    return requests.post(
        server.url + "/auth/oauth2/token",
        data=form,
        auth=(client.client_id, str(client.secret)),
        timeout=30,
    )


def test_parallel_code_redemption_has_one_winner(server: RunningServer) -> None:
    client = wallet_app(server.sandbox)
    code = code_of(server, client)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": client.redirect_uri,
        "code_verifier": VERIFIER,
    }
    results = all_at_once(lambda: token_post(server, client, form))
    statuses = sorted(r.status_code for r in results)
    assert statuses == [200] + [400] * (PARALLEL - 1)
    assert {r.json()["error"] for r in results if r.status_code == 400} == {"invalid_grant"}
    # The losers' second use revoked what the winner got (spec: a reused code revokes).
    (winner,) = [r.json() for r in results if r.status_code == 200]
    info = requests.get(
        server.url + "/auth/oauth2/userinfo",
        headers={"Authorization": f"Bearer {winner['access_token']}"},
        timeout=5,
    )
    assert info.status_code == 401


def test_parallel_refresh_has_one_winner(server: RunningServer) -> None:
    client = wallet_app(server.sandbox)
    code = code_of(server, client)
    first = token_post(
        server,
        client,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": client.redirect_uri,
            "code_verifier": VERIFIER,
        },
    ).json()
    form = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]}
    results = all_at_once(lambda: token_post(server, client, form))
    assert sorted(r.status_code for r in results) == [200] + [400] * (PARALLEL - 1)
    assert {r.json()["error"] for r in results if r.status_code == 400} == {"invalid_grant"}
