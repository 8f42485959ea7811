"""Same seed and same actions: byte-identical webhook bodies, signatures and delivery order."""

from __future__ import annotations

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.webhooks.conftest import advance, flush, trigger
from tests.webhooks.receiver import running_receiver


def run(seed: int) -> list[tuple[bytes, str]]:
    client = create_app(Sandbox(clock_mode="frozen", seed=seed, port=0)).test_client()
    with running_receiver(200) as receiver:
        receiver.behaviours += [500, 200, 503]
        # No secret given: the generated one comes from the seeded id source too.
        response = client.post("/_sandbox/webhooks/endpoints", json={"url": receiver.url})
        assert response.status_code == 201
        trigger(client, "order.created")
        trigger(client, "order.completed", data={"amount": 777})
        flush(client)
        advance(client, "30s")
        trigger(client, "checkout.session.expired")
        advance(client, "2h")
        return [(r.body, r.headers["X-Svc-Signature"]) for r in receiver.received]


def test_two_runs_with_the_same_seed_send_the_same_bytes_and_signatures() -> None:
    first, second = run(7), run(7)
    assert len(first) == 5  # three events, two of them retried once
    assert first == second


def test_another_seed_gives_other_ids_and_signatures() -> None:
    first, other = run(7), run(8)
    assert [body for body, _ in first] != [body for body, _ in other]
    assert [sig for _, sig in first] != [sig for _, sig in other]
