"""What the identity and wallet scenarios need from the runner: the seeded apps and users as
variables, HTTP Basic client authentication, query parameters read out of a redirect URL, a
saved access token as the bearer, and a browser's cookies kept over HTTP as in process."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.scenarios.results import FAILED, PASSED, SKIPPED
from svc_sandbox.scenarios.runner import Runner
from svc_sandbox.scenarios.targets import (
    InProcessTarget,
    RealTarget,
    provided_by_emulator,
)
from svc_sandbox.scenarios.transport import masked
from tests.scenarios.helpers import one

LIBRARY = Path(__file__).resolve().parents[2] / "scenarios"

#: base64url(sha256(VERIFIER)), as a scenario file writes it.
VERIFIER = "scenario-verifier-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFG"
CHALLENGE = "a8QrxXYA4zvoe8heBry_f8Qq5QMejNjYTP91dhhwkq8"

CODE_FLOW = f"""
    name: code flow
    steps:
      - control:
          action: authorize
          userId: "${{user_ids.abebe}}"
          params:
            response_type: code
            client_id: "${{client_id}}"
            redirect_uri: "${{redirect_uri}}"
            scope: openid
            state: s-1
            code_challenge: {CHALLENGE}
            code_challenge_method: S256
        save: {{code: "redirectUrl?code", state: "redirectUrl?state"}}
      - request:
          root: auth_url
          method: POST
          path: /oauth2/token
          auth: {{basic: {{username: "${{client_id}}", password: "${{client_secret}}"}}}}
          form:
            grant_type: authorization_code
            code: "${{code}}"
            redirect_uri: "${{redirect_uri}}"
            code_verifier: {VERIFIER}
        expect: {{status: 200}}
        save: {{access: access_token}}
      - request: {{root: auth_url, path: /oauth2/userinfo, auth: access}}
        expect: {{status: 200, json: {{sub: "${{user_ids.abebe}}"}}}}
      - set: {{seen_state: "${{state}}"}}
"""


def test_the_seeded_identity_is_provided_as_variables(svc_sandbox: Sandbox) -> None:
    info = svc_sandbox.info()
    provided = provided_by_emulator(info)
    apps = {a["clientType"]: a for a in info["identity"]["apps"]}
    assert provided["client_id"] == apps["confidential"]["clientId"]
    assert provided["client_secret"] == apps["confidential"]["clientSecret"]
    assert provided["redirect_uri"] == apps["confidential"]["redirectUris"][0]
    assert provided["public_client_id"] == apps["public"]["clientId"]
    assert provided["user_ids"] == {u["handle"]: u["id"] for u in info["identity"]["users"]}
    assert provided["auth_url"] == svc_sandbox.settings.issuer


def test_basic_auth_a_redirect_query_and_a_saved_bearer(
    tmp_path: Path, svc_sandbox: Sandbox
) -> None:
    result = Runner(InProcessTarget()).run(one(tmp_path, CODE_FLOW))
    assert result.status == PASSED, result.failure
    app = next(a for a in svc_sandbox.info()["identity"]["apps"] if a["clientType"] != "public")
    pair = f"{app['clientId']}:{app['clientSecret']}".encode()
    token_request = result.steps[1].request
    assert token_request is not None
    # The token endpoint took the client's Basic credentials (it answered a token); the
    # report shows credentials masked.
    assert result.steps[1].response["status"] == 200  # type: ignore[index]
    assert token_request["headers"]["Authorization"] == "Basic " + masked(
        base64.b64encode(pair).decode()
    )
    assert token_request["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    access = result.steps[1].response["body"]["access_token"]  # type: ignore[index]
    userinfo = result.steps[2].request
    assert userinfo is not None
    assert userinfo["headers"]["Authorization"] == f"Bearer {masked(access)}"
    assert result.steps[2].response["status"] == 200  # type: ignore[index]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("redirectUrl?error", "access_denied"),
        ("redirectUrl?state", "s-2"),
        ("redirectUrl?code", "$absent"),
        ("error?x", "$absent"),  # not a URL with that parameter
        ("nothing?x", "$absent"),  # nothing at the path
    ],
)
def test_a_query_parameter_of_a_url_in_the_response(
    tmp_path: Path, path: str, expected: str
) -> None:
    scenario = one(
        tmp_path,
        f"""
        name: query of a URL
        steps:
          - control:
              action: authorize
              userId: "${{user_ids.tigist}}"
              decision: deny
              params:
                response_type: code
                client_id: "${{client_id}}"
                redirect_uri: "${{redirect_uri}}"
                scope: openid
                state: s-2
                code_challenge: {CHALLENGE}
                code_challenge_method: S256
            expect: {{paths: {{"{path}": "{expected}"}}}}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == PASSED, result.failure


def test_saving_a_missing_query_parameter_fails_the_step(tmp_path: Path) -> None:
    scenario = one(
        tmp_path,
        f"""
        name: no code on a decline
        steps:
          - control:
              action: authorize
              userId: "${{user_ids.tigist}}"
              decision: deny
              params:
                response_type: code
                client_id: "${{client_id}}"
                redirect_uri: "${{redirect_uri}}"
                scope: openid
                code_challenge: {CHALLENGE}
                code_challenge_method: S256
            save: {{code: "redirectUrl?code"}}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == FAILED
    assert result.failure is not None
    assert result.failure.message == "save code: redirectUrl?code is not in the response"


def test_another_server_skips_steps_needing_the_seeded_identity(
    tmp_path: Path, svc_server: RunningServer
) -> None:
    target = RealTarget(svc_server.url + "/api", None, {"auth_url": svc_server.url + "/auth"})
    result = Runner(target).run(one(tmp_path, CODE_FLOW))
    assert result.status == SKIPPED
    assert all(s.status == SKIPPED for s in result.steps)
    assert result.steps[0].message.startswith("emulator-only step")
    # The sign-in the control step would have scripted is what the rest needs.
    assert result.steps[1].message.startswith("follows the skipped control step steps[0]")


def test_schema_checks_identity_and_wallet_responses_against_their_contracts(
    tmp_path: Path,
) -> None:
    scenario = one(
        tmp_path,
        """
        name: contracts by root
        steps:
          - request: {root: auth_url, path: /jwks}
            expect: {status: 200, schema: true}
          - request: {root: wallet_base_url, path: ""}
            expect: {status: 401, schema: true, json: {error: invalid_token}}
          - request: {root: auth_url, path: /no-such-route}
            expect: {schema: true}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert [s.status for s in result.steps] == [PASSED, PASSED, FAILED]
    assert result.failure is not None
    assert result.failure.message == "schema: no contract operation for GET /no-such-route"


def test_schema_names_the_roots_it_knows(tmp_path: Path) -> None:
    scenario = one(
        tmp_path,
        """
        name: no contract for pages
        steps:
          - request: {root: pay_url, path: /nothing}
            expect: {schema: true}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert result.failure is not None
    assert result.failure.message == (
        "schema: only responses of {base_url}, {auth_url}, {wallet_base_url} are in the contracts"
    )
