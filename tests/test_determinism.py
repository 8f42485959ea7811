"""The determinism guarantee across processes: same seed + same requests => the same ids,
tokens, JWTs, events, webhook bytes and state export, whatever the interpreter's string-hash
seed (``PYTHONHASHSEED`` reorders sets, the usual way a dict or set order leaks into output).
A different seed gives different ids. The flow is tests/determinism_flow.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_flow(seed: int, hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-m", "tests.determinism_flow", str(seed)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def runs() -> dict[str, str]:
    return {
        "seed 7, hash seed 0": run_flow(7, "0"),
        "seed 7, hash seed 4242": run_flow(7, "4242"),
        "seed 8, hash seed 0": run_flow(8, "0"),
    }


def test_the_flow_touches_every_family(runs: dict[str, str]) -> None:
    flow: dict[str, Any] = json.loads(runs["seed 7, hash seed 0"])
    statuses = {path.split("/")[1]: status for _, path, status, _ in flow["answers"]}
    assert set(statuses) >= {"api", "pay", "wallet", "auth", "_sandbox"}
    userinfo = next(json.loads(a[3]) for a in flow["answers"] if a[1].endswith("/userinfo"))
    assert {"email", "name", "picture"} <= set(userinfo)  # claims of more than one scope
    assert all(status < 300 for _, _, status, _ in flow["answers"])
    assert len(flow["webhooks"]) >= 5  # deliveries and retries
    assert flow["state"]["services"]["wallets"]["transfers"]


def test_same_seed_same_bytes_in_another_process(runs: dict[str, str]) -> None:
    assert runs["seed 7, hash seed 0"] == runs["seed 7, hash seed 4242"]


def test_another_seed_other_ids(runs: dict[str, str]) -> None:
    first = json.loads(runs["seed 7, hash seed 0"])
    other = json.loads(runs["seed 8, hash seed 0"])

    def first_product_id(flow: dict[str, Any]) -> str:
        return str(json.loads(flow["answers"][0][3])["product"]["_id"])

    assert first_product_id(first) != first_product_id(other)
    assert first["state"] != other["state"]
    assert [a[2] for a in first["answers"]] == [a[2] for a in other["answers"]]


def test_the_seeded_credentials_do_not_depend_on_the_webhook_url() -> None:
    """Adding ``--webhook-url`` adds endpoints; it changed the production token, the identity
    apps and the users of the same seed (their ids were drawn after the first endpoint's)."""
    from svc_sandbox.sandbox import Sandbox

    def seeded(**settings: Any) -> dict[str, Any]:
        info = Sandbox(seed=7, clock_mode="frozen", **settings).info()
        organizations = [
            {k: v for k, v in org.items() if k != "webhookEndpoints"}
            for org in info["organizations"]
        ]
        return {"organizations": organizations, "identity": info["identity"]}

    plain = seeded()
    with_endpoints = Sandbox(seed=7, clock_mode="frozen", webhook_url="http://127.0.0.1:9/h")
    assert seeded(webhook_url="http://127.0.0.1:9/h") == plain
    endpoints = with_endpoints.webhook_endpoints.endpoints.values()
    assert len(endpoints) == 2 and len({e.secret for e in endpoints}) == 1
