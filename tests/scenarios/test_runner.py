"""The runner: failure reports, skipped steps against another server, unreachable servers, and
the same scenarios against a running emulator over HTTP."""

from __future__ import annotations

import base64
import socket
import textwrap
from pathlib import Path

import pytest

from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.scenarios.loader import load_file, load_paths
from svc_sandbox.scenarios.results import ERROR, FAILED, PASSED, SKIPPED
from svc_sandbox.scenarios.runner import EMULATOR_ONLY, Runner
from svc_sandbox.scenarios.targets import EmulatorTarget, InProcessTarget, RealTarget
from tests.scenarios.helpers import one, write

LIBRARY = Path(__file__).resolve().parents[2] / "scenarios"

PRODUCT_AND_EXPIRY = """
    name: product then expiry
    tags: [t]
    steps:
      - request:
          method: POST
          path: /products
          json: {title: Pen, pricingModel: fixed, price: {amount: 500}, status: published}
        expect: {status: 201}
        save: {product: product._id}
      - request: {method: POST, path: /checkout, json: {productId: "${product}"}}
        expect: {status: 200}
        save: {session: sessionId}
      - control: {action: advance, duration: 30m}
      - expect_webhook: {type: checkout.session.expired, data: {sessionId: "${session}"}}
      - request: {path: "/checkout/${session}", auth: none}
        expect: {status: 200, json: {status: expired}}
"""


def test_a_failed_expectation_reports_step_request_response_and_expectation(
    tmp_path: Path,
) -> None:
    scenario = one(
        tmp_path,
        """
        name: wrong
        steps:
          - request: {path: /products}
            expect: {status: 200}
          - request: {path: /products, query: {limit: 500}}
            expect: {status: 200, json: {total: 0}}
          - request: {path: /never}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == FAILED
    step = result.failure
    assert step is not None
    assert (step.index, step.line) == ("steps[1]", 5)
    assert step.message.startswith("status: expected 200, got 400")
    assert step.request is not None and step.request["url"].endswith("/api/products?limit=500")
    assert step.response is not None and step.response["status"] == 400
    assert step.response["body"] == {"error": step.response["body"]["error"]}
    assert step.expectation == {"status": 200, "json": {"total": 0}}
    assert len(result.steps) == 2  # the scenario stops at the failed step


def test_webhook_signature_and_timing_are_checked(tmp_path: Path) -> None:
    scenario = one(tmp_path, PRODUCT_AND_EXPIRY)
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == PASSED, result.failure
    assert result.sandbox_seconds == 1800


def test_a_webhook_that_does_not_arrive_in_time_fails(tmp_path: Path) -> None:
    scenario = one(
        tmp_path,
        """
        name: too soon
        steps:
          - request: {method: POST, path: /checkout, json: {amount: 500, description: Tea}}
          - expect_webhook: {type: checkout.session.expired, within: 29m}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == FAILED
    assert result.failure is not None
    assert "not delivered within 0:29:00" in result.failure.message


def test_a_webhook_expected_twice_stops_the_clock_at_the_second_delivery(
    tmp_path: Path,
) -> None:
    """docs/scenarios.md: the runner "stops at the delivery: later steps see the clock at
    that moment, not at the end of the span". The receiver answers 500 once: the retry
    (1 minute later, spec §6) is the second delivery; it went on to the end of the span."""
    scenario = one(
        tmp_path,
        """
        name: retried
        webhooks: {eventTypes: [order.completed], answers: [500]}
        steps:
          - request:
              method: POST
              path: /checkout
              json:
                amount: 500
                description: Tea
                gateway: telebirr
                customer: {phone: "251900000001", email: buyer@example.com}
            expect: {status: 200}
          - expect_webhook: {type: order.completed, within: 10m, count: 2}
          - control: {action: clock}
            expect: {json: {clock: {now: "2026-01-01T00:01:00.000Z"}}}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == PASSED, result.failure
    assert result.sandbox_seconds == 60


def test_a_setting_only_the_start_can_check_stops_the_scenario_before_its_steps(
    tmp_path: Path,
) -> None:
    # The loader checks the settings' names and values; a triggers file is read at the start.
    scenario = one(
        tmp_path,
        """
        name: missing triggers file
        settings: {triggers_file: /nonexistent/triggers.yaml}
        steps:
          - request: {path: /products}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == ERROR
    assert result.steps == []
    assert result.message == (
        f"{scenario.file}:2: settings: triggers file /nonexistent/triggers.yaml cannot be read: "
        "No such file or directory at settings"
    )


def test_another_server_skips_emulator_only_steps_with_the_reason(
    tmp_path: Path, svc_server: RunningServer
) -> None:
    scenario = one(tmp_path, PRODUCT_AND_EXPIRY)
    token = svc_server.sandbox.info()["organizations"][0]["tokens"][0]["token"]
    target = RealTarget(svc_server.url + "/api", token)
    result = Runner(target).run(scenario)
    kinds = [(s.kind, s.status) for s in result.steps]
    assert kinds == [
        ("request", PASSED),
        ("request", PASSED),
        ("control", SKIPPED),
        ("expect_webhook", SKIPPED),
        # What it expects is what the skipped clock move would have done: it failed when run.
        ("request", SKIPPED),
    ]
    assert result.steps[2].message == EMULATOR_ONLY
    cut = (
        f"follows the skipped control step {result.steps[2].index}: what it would have done "
        "is what this step expects"
    )
    assert [s.message for s in result.steps[3:]] == [cut, cut]
    assert result.status == PASSED  # what ran passed; the table counts the skipped steps


@pytest.mark.parametrize(
    ("needs", "said"),
    [
        ("settings: {rate_limits: true}\n", "sets settings"),
        ("clock: 2026-01-01T00:00:00Z\n", "sets clock"),
        (
            "settings: {rate_limits: false}\nclock: 2026-01-01T00:00:00Z\n",
            "sets settings and clock",
        ),
    ],
)
def test_another_server_skips_a_scenario_that_sets_up_its_emulator(
    tmp_path: Path, svc_server: RunningServer, needs: str, said: str
) -> None:
    """Settings or a clock describe the emulator a scenario needs (the rate-limit files count
    from a fresh budget); another server cannot be set up."""
    scenario = one(tmp_path, f"name: x\n{needs}steps:\n  - request: {{path: /products}}\n")
    result = Runner(RealTarget(svc_server.url + "/api", None)).run(scenario)
    assert (result.status, result.steps) == (SKIPPED, [])
    assert result.message == f"{said}: only an emulator can be set up; another server runs as it is"


def test_steps_needing_a_value_from_a_skipped_step_are_skipped(
    tmp_path: Path, svc_server: RunningServer
) -> None:
    scenario = one(
        tmp_path,
        """
        name: skip chain
        steps:
          - request: {root: pay_url, path: /cs_x}
            save: {page: title}
          - request: {path: "/products/${page}"}
          - control: {action: create_token, org: "${org_id}"}
          - request: {path: /products}
        """,
    )
    result = Runner(RealTarget(svc_server.url + "/api", None)).run(scenario)
    assert result.status == SKIPPED
    assert [s.message for s in result.steps] == [
        "pay_url is not known for this target (give --root pay_url=URL)",
        "needs ${page}: pay_url is not known for this target (give --root pay_url=URL)",
        EMULATOR_ONLY,
        f"follows the skipped control step {result.steps[2].index}: what it would have done "
        "is what this step expects",
    ]


def test_an_unreachable_server_fails_with_a_message(tmp_path: Path) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    scenario = one(tmp_path, "name: x\nsteps:\n  - request: {path: /products}\n")
    result = Runner(RealTarget(f"http://127.0.0.1:{port}/api", "t")).run(scenario)
    assert result.status == ERROR
    assert result.failure is not None
    assert result.failure.message.startswith(f"cannot reach http://127.0.0.1:{port}/api/products")


def test_a_server_that_never_answers_fails_with_a_timeout(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts the connection, never answers
    port = listener.getsockname()[1]
    try:
        scenario = one(tmp_path, "name: x\nsteps:\n  - request: {path: /products}\n")
        target = RealTarget(f"http://127.0.0.1:{port}/api", "t", timeout=0.5)
        result = Runner(target).run(scenario)
    finally:
        listener.close()
    assert result.status == ERROR
    assert result.failure is not None
    assert result.failure.message == (
        f"timed out after 0.5 s waiting for GET http://127.0.0.1:{port}/api/products"
    )


def test_an_unreachable_emulator_fails_before_any_step(tmp_path: Path) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    scenario = one(tmp_path, "name: x\nsteps:\n  - request: {path: /products}\n")
    result = Runner(EmulatorTarget(f"http://127.0.0.1:{port}")).run(scenario)
    assert result.status == ERROR
    assert "cannot reach" in result.message and result.steps == []


@pytest.mark.parametrize(
    "file",
    [
        "checkout/expiry_after_timeout_webhook_retries.yaml",
        "webhooks/retry_schedule.yaml",
        "payouts/review_above_threshold.yaml",
        "pages/trigger_phones_payment_link.yaml",
        "identity/code_flow_pkce.yaml",
        # The consent page needs the browser's CSRF and session cookies: kept over HTTP too.
        "identity/consent_decline.yaml",
        "identity/refresh_rotation_reuse.yaml",
        "wallet/send_idempotency.yaml",
        "wallet/daily_cap.yaml",
        "wallet/two_factors.yaml",
    ],
)
def test_library_scenarios_pass_against_a_running_emulator(
    file: str, svc_server: RunningServer
) -> None:
    runner = Runner(EmulatorTarget(svc_server.url + "/api"))
    for scenario in load_file(LIBRARY / file):
        result = runner.run(scenario)
        assert result.status == PASSED, (scenario.name, result.failure, result.message)


def test_generated_values_come_from_the_seed_and_now_from_the_sandbox_clock(
    tmp_path: Path,
) -> None:
    scenario = one(
        tmp_path,
        """
        name: generated
        clock: "2026-03-01T08:00:00Z"
        steps:
          - control: {action: advance, duration: 90s}
          - set: {label: "${uuid}|${random_hex}|${now}"}
          - control: {action: create_org, name: "${label}"}
            expect:
              json:
                name: {$regex: "^[0-9a-f-]{36}\\\\|[0-9a-f]{24}\\\\|2026-03-01T08:01:30.000Z$"}
        """,
    )
    names = []
    for _ in range(2):
        result = Runner(InProcessTarget()).run(scenario)
        assert result.status == PASSED, result.failure
        response = result.steps[-1].response
        assert response is not None
        names.append(response["body"]["name"])
    assert names[0] == names[1]


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (
            """
              - request: {method: POST, path: /products, json: {title: abc, pricingModel: free}}
                save: {title: product.title}
              - request: {path: /products}
                expect: {json: {total: {$gte: "${title}"}}}
            """,
            "json.total.$gte: $gte needs a number, got 'abc'",
        ),
        (
            """
              - set: {pattern: "["}
              - request: {path: /products}
                expect: {json: {items: {$contains: {title: {$regex: "${pattern}"}}}}}
            """,
            "json.items.$contains.title.$regex: $regex '[' is not a regular expression",
        ),
        (
            """
              - set: {value: "a\\r\\nX-Injected: 1"}
              - request: {path: /products, headers: {X-A: "${value}"}}
            """,
            "header X-A: the value holds a line break or NUL",
        ),
        (
            """
              - set: {statuses: [abc]}
              - control: {action: receiver, answers: "${statuses}"}
            """,
            "answers holds 'abc', not an HTTP status (100-599)",
        ),
        (
            """
              - set: {x: ab}
              - repeat:
                  times: 100
                  steps:
                    - set: {x: "${x}${x}"}
            """,
            "the value would hold more than 1000000 characters and items",
        ),
        (
            """
              - set: {x: [1]}
              - repeat:
                  times: 100
                  steps:
                    - set: {x: ["${x}", "${x}"]}
            """,
            "the value would hold more than 1000000 characters and items",
        ),
        (
            """
              - request: {method: POST, path: /products, json: !!set {a}}
            """,
            "TypeError: Object of type set is not JSON serializable",
        ),
    ],
    ids=[
        "gte-of-saved-text",
        "regex-from-a-variable",
        "header-line-break-from-a-variable",
        "receiver-answers-from-a-variable",
        "text-doubled-in-a-loop",
        "list-doubled-in-a-loop",
        "any-other-error",
    ],
)
def test_a_step_that_cannot_run_errs_and_the_run_goes_on(
    tmp_path: Path, steps: str, message: str
) -> None:
    write(tmp_path, "a.yaml", "name: before\nsteps:\n  - request: {path: /products}\n")
    write(tmp_path, "b.yaml", "name: broken\nwebhooks: {}\nsteps:\n" + textwrap.dedent(steps))
    write(tmp_path, "c.yaml", "name: after\nsteps:\n  - request: {path: /products}\n")
    results = Runner(InProcessTarget()).run_all(load_paths([tmp_path]))
    assert [(r.name, r.status) for r in results] == [
        ("before", PASSED),
        ("broken", ERROR),
        ("after", PASSED),
    ]
    failure = results[1].failure
    assert failure is not None and failure.status == ERROR
    assert message in failure.message


def test_a_raw_body_from_a_number_is_its_text(tmp_path: Path) -> None:
    scenario = one(
        tmp_path,
        """
        name: raw number
        vars: {n: 5, doc: {a: [true]}}
        steps:
          - request: {method: POST, path: /products, raw: "${n}", headers: {X-Kind: number}}
          - request: {method: POST, path: /products, raw: "${doc}", headers: {X-Kind: json}}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == PASSED, result.failure
    sent = [s.request["body"] for s in result.steps if s.request is not None]
    assert sent == [5, {"a": [True]}]  # the report shows a JSON body as its JSON


@pytest.mark.parametrize("title", ["$any", "$absent", "$iso8601", "$hex24"])
def test_a_saved_value_is_data_never_a_matcher(tmp_path: Path, title: str) -> None:
    create = (
        "  - request: {method: POST, path: /products, json: {title: '"
        + title
        + "', pricingModel: free, status: published}}\n    save: {title: product.title, "
        "product: product, id: product._id}\n"
    )
    same = one(
        tmp_path,
        "name: equal\nsteps:\n" + create + "  - request: {path: '/products/${id}'}\n"
        "    expect: {json: {product: {title: '${title}'}}, paths: {product: '${product}'}}\n"
        "  - set: {copy: '${title}', wrapped: {title: '${title}'}}\n"
        "  - request: {path: '/products/${id}'}\n"
        "    expect: {json: {product: {title: '${copy}'}}, paths: {product: '${wrapped}'}}\n",
    )
    assert Runner(InProcessTarget()).run(same).status == PASSED
    other = one(
        tmp_path,
        "name: not equal\nsteps:\n" + create + "  - request: {path: /products}\n"
        "    expect: {json: {total: '${title}'}}\n",
    )
    result = Runner(InProcessTarget()).run(other)
    assert result.status == FAILED
    assert result.failure is not None
    assert result.failure.message == f"body.total: expected {title!r}, got 1"
    assert result.failure.expectation == {"json": {"total": title}}


def test_the_files_own_values_stay_matchers_through_variables(tmp_path: Path) -> None:
    scenario = one(
        tmp_path,
        """
        name: authored matchers
        vars: {anything: $any, some: {$gte: 1}}
        matrix: {expected: [{title: $any}]}
        steps:
          - request: {method: POST, path: /products, json: {title: Pen, pricingModel: free}}
          - request: {path: /products}
            expect: {json: {total: "${some}", items: [{title: "${anything}"}]}}
          - request: {path: /products}
            expect: {json: {items: ["${expected}"]}}
        """,
    )
    assert Runner(InProcessTarget()).run(scenario).status == PASSED


def test_vars_use_each_other_in_any_order_and_the_matrix_row(tmp_path: Path) -> None:
    """docs/scenarios.md: variables come from ``vars`` and the matrix row; a var written
    before the one it uses, or built from the row, has its value."""
    text = """
        name: vars built from others
        matrix: {amount: [5000, 700]}
        vars:
          body: {amount: "${amount}", description: "${what}"}
          what: "${noun} for ${amount}"
          noun: Donation
          amount: 1                       # the row's value wins
        steps:
          - request: {method: POST, path: /checkout, json: "${body}"}
            expect: {status: 200}
            save: {session: sessionId}
          - request: {path: "/checkout/${session}"}
            expect: {json: {amount: "${amount}"}}
    """
    results = [Runner(InProcessTarget()).run(s) for s in load_file(write(tmp_path, "v.yaml", text))]
    assert [r.status for r in results] == [PASSED, PASSED], [r.failure for r in results]
    assert [r.steps[0].request["body"] for r in results] == [  # type: ignore[index]
        {"amount": 5000, "description": "Donation for 5000"},
        {"amount": 700, "description": "Donation for 700"},
    ]


def test_vars_needing_a_seeded_identity_value_skip_their_steps_against_another_server(
    tmp_path: Path, svc_server: RunningServer
) -> None:
    scenario = one(
        tmp_path,
        """
        name: identity vars
        vars:
          client: "${public_client_id}"
          plain: products
        steps:
          - request: {path: "/${plain}"}
            expect: {status: 200}
          - request: {path: /products, query: {client: "${client}"}}
        """,
    )
    token = svc_server.sandbox.info()["organizations"][0]["tokens"][0]["token"]
    result = Runner(RealTarget(svc_server.url + "/api", token)).run(scenario)
    assert result.status == PASSED, (result.message, result.failure)
    assert [(s.status, s.message) for s in result.steps] == [
        (PASSED, ""),
        (SKIPPED, "needs ${client}: the target does not provide ${public_client_id}"),
    ]


def test_a_query_list_repeats_the_parameter_and_raw_base64_sends_its_bytes(
    tmp_path: Path,
) -> None:
    """What a recording writes for a request a mapping cannot hold (docs/scenarios.md)."""
    utf16 = base64.b64encode('{"title": "T", "pricingModel": "free"}'.encode("utf-16"))
    scenario = one(
        tmp_path,
        f"""
        name: as sent
        steps:
          - request: {{path: /products, query: {{status: [draft, published], limit: 5}}}}
            expect: {{status: 400, json: {{error: "status is repeated: send it once"}}}}
          - request:
              method: POST
              path: /products
              raw_base64: {utf16.decode()}
              headers: {{Content-Type: application/json}}
            expect: {{status: 201, json: {{product: {{title: T}}}}}}
          - request:
              method: POST
              path: /products
              raw_base64: "${{bad}}"
              headers: {{Content-Type: application/json}}
        vars: {{bad: "not base64!"}}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    first, second, third = result.steps
    assert first.request is not None
    assert first.request["url"].endswith("/products?status=draft&status=published&limit=5")
    assert second.status == PASSED, second.message
    assert result.status == ERROR
    assert third.message.startswith("raw_base64 is not base64")


def test_a_clock_written_as_a_date_starts_at_its_midnight_utc(tmp_path: Path) -> None:
    scenario = one(
        tmp_path,
        """
        name: a date
        clock: 2026-03-01
        steps:
          - control: {action: clock}
            expect: {json: {clock: {now: "2026-03-01T00:00:00.000Z"}}}
        """,
    )
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == PASSED, result.failure


RECEIVER_VARIABLE_USE = """
    name: a receiver by its variables alone
    steps:
      - request:
          method: POST
          path: /checkout
          json:
            amount: 500
            description: Hook
            metadata:
              url: "${webhook_url}"
              secret: "${webhook_secret}"
              id: "${webhook_endpoint_id}"
        expect: {status: 200}
"""


def test_a_file_using_the_receiver_variables_gets_a_receiver_without_webhooks(
    tmp_path: Path,
) -> None:
    """docs/scenarios.md: the runner's variables include the scenario's receiver. Without a
    ``webhooks:`` section every step naming one was skipped, and the run passed as skipped."""
    result = Runner(InProcessTarget()).run(one(tmp_path, RECEIVER_VARIABLE_USE))
    assert result.status == PASSED, (result.message, result.failure)
    assert [step.status for step in result.steps] == [PASSED]
    sent = result.steps[0].request["body"]["metadata"]  # type: ignore[index]
    assert sent["url"].startswith("http://127.0.0.1:")
    assert sent["id"].startswith("we_") and sent["secret"]


TYPE_THROUGH_A_VARIABLE = """
    name: type through a variable
    matrix: {event: [order.created, order.complete]}
    webhooks: {}
    steps:
      - expect_webhook: {type: "${event}", none: true, within: 1m}
"""


def test_an_event_type_a_variable_fills_in_is_checked_when_it_runs(tmp_path: Path) -> None:
    """The load check skips a value holding ${...}: a misspelt type from a matrix row passed
    ``none: true`` of an event that can never be sent."""
    file = write(tmp_path, "t.yaml", TYPE_THROUGH_A_VARIABLE)
    results = [Runner(InProcessTarget()).run(s) for s in load_file(file)]
    assert [r.status for r in results] == [PASSED, FAILED]
    failure = results[1].failure
    assert failure is not None and "unknown event type 'order.complete'" in failure.message


def test_settings_naming_the_roots_an_emulator_serves_are_met_by_it(
    tmp_path: Path, svc_server: RunningServer
) -> None:
    """A recording made on exec's port names its auth_url and resource_url; replayed against
    that same emulator it was skipped ("runs with null": GET /_sandbox's settings show a root
    left to follow the origin as null) and the run exited 0."""
    roots = svc_server.sandbox.info()["roots"]
    text = f"""
        name: recorded elsewhere
        settings: {{auth_url: "{roots["auth_url"]}", resource_url: "{roots["resource_url"]}"}}
        steps:
          - request: {{path: /products}}
            expect: {{status: 200}}
    """
    result = Runner(EmulatorTarget(svc_server.url)).run(one(tmp_path, text))
    assert result.status == PASSED, (result.message, result.failure)
    other = text.replace(roots["auth_url"], "http://127.0.0.1:1/auth")
    skipped = Runner(EmulatorTarget(svc_server.url)).run(one(tmp_path, other))
    assert skipped.status == SKIPPED
    assert 'needs settings auth_url="http://127.0.0.1:1/auth"' in skipped.message


def test_a_root_setting_of_null_is_met_by_an_emulator_that_follows_its_origin(
    tmp_path: Path, svc_server: RunningServer
) -> None:
    text = """
        name: default roots
        settings: {auth_url: null}
        steps:
          - request: {path: /products}
            expect: {status: 200}
    """
    result = Runner(EmulatorTarget(svc_server.url)).run(one(tmp_path, text))
    assert result.status == PASSED, (result.message, result.failure)


TOO_FEW_MATCHING = """
    name: two paid orders expected, one made
    webhooks: {}
    steps:
      - request:
          method: POST
          path: /checkout
          json:
            amount: 500
            description: Tea
            gateway: telebirr
            customer: {phone: "251900000001", email: tea@example.com}
        expect: {status: 200}
      - expect_webhook: {type: order.completed, count: 2, within: 1m, data: {amount: 500}}
"""


def test_too_few_matching_webhooks_are_not_said_to_differ(tmp_path: Path) -> None:
    result = Runner(InProcessTarget()).run(one(tmp_path, TOO_FEW_MATCHING))
    assert result.status == FAILED and result.failure is not None
    assert "2 x order.completed not delivered" in result.failure.message
    assert "differs" not in result.failure.message
