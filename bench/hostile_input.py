"""Hostile bodies: the cost of a body that repeats its problem n times, at n and 4n (hostile
audit, round 26). A linear cost gives a ratio of about 4, a quadratic one 16. Each cost is the
median of a few calls through the WSGI app (Flask test client), with no token:

* a form field repeated n times to ``POST /auth/oauth2/token`` (the contract check reads it),
* ``POST /api/checkout`` whose metadata holds n values of the wrong type,
* ``POST /api/products`` whose media holds n items of the wrong type.

Usage:
    .venv/bin/python bench/hostile_input.py [--n 10000]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from flask.testing import FlaskClient

from state import best  # bench/state.py: median seconds of a call
from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox

FORM = "application/x-www-form-urlencoded"


def cases(client: FlaskClient) -> dict[str, Callable[[int], Callable[[], object]]]:
    def form(n: int) -> Callable[[], object]:
        body = b"&".join(b"phone=1" for _ in range(n))
        return lambda: client.post("/auth/oauth2/token", data=body, content_type=FORM)

    def metadata(n: int) -> Callable[[], object]:
        body = json.dumps({"productId": "p_x", "metadata": {f"k{i}": [] for i in range(n)}})
        return lambda: client.post("/api/checkout", data=body, content_type="application/json")

    def media(n: int) -> Callable[[], object]:
        body = json.dumps({"media": [1] * n})
        return lambda: client.post("/api/products", data=body, content_type="application/json")

    return {"form field repeated": form, "metadata values": metadata, "media items": media}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000)
    n = parser.parse_args().n
    client = create_app(Sandbox(clock_mode="frozen", seed=1, rate_limits=False)).test_client()
    print(f"{'body':<22} {'n':>8} {'cost n':>10} {'cost 4n':>10} {'ratio':>7}")
    for name, make in cases(client).items():
        make(10)()  # warm: validators compiled
        small, large = best(make(n), 3), best(make(4 * n), 3)
        print(
            f"{name:<22} {n:>8} {small * 1000:>8.1f}ms {large * 1000:>8.1f}ms {large / small:>7.2f}"
        )


if __name__ == "__main__":
    main()
