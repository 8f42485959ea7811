"""Bad scenario files are refused before anything runs, with file, line and path."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_sandbox.scenarios.loader import load_file, load_paths
from svc_sandbox.scenarios.model import ScenarioError
from tests.scenarios.helpers import one, write

GOOD = """
    name: fine
    steps:
      - request: {path: /products}
        expect: {status: 200}
"""


@pytest.mark.parametrize(
    ("text", "line", "path", "message"),
    [
        ("name: x\nsteps:\n  - request: {path: /a\n", 4, "", "YAML syntax"),
        ("name: x\nsteps: [\n", 3, "", "YAML syntax"),
        ("- just\n- a list\n", 1, "", "a scenario is a mapping"),
        ("steps:\n  - request: {path: /a}\n", 1, "", "'name' is a required property"),
        (
            "name: x\nsteps:\n  - request:\n      path: /a\n      method: FETCH\n",
            5,
            "steps[0].request.method",
            "'FETCH' is not one of",
        ),
        (
            "name: x\nsteps:\n  - request: {path: /a}\n    expect:\n      status: 999\n",
            5,
            "steps[0].expect.status",
            "999",
        ),
        (
            "name: x\nsteps:\n  - request: {path: /a}\n  - request: {path: /b}\n    bogus: 1\n",
            5,
            "steps[1].bogus",
            "'bogus' was unexpected",
        ),
        (
            "name: x\nsteps:\n  - request: {path: /a}\n  - request: {path: '/b/${nope}'}\n",
            4,
            "steps[1].request.path",
            "unknown variable ${nope}",
        ),
        (
            "name: x\nvars: {a: 'x${b}', b: 'y${a}'}\nsteps:\n  - request: {path: /a}\n",
            2,
            "vars.a",
            "vars refer to each other in a circle: ${a} -> ${b} -> ${a}",
        ),
        (
            "name: x\nvars:\n  a: /p\n  me: {list: ['${me}']}\nsteps:\n  - request: {path: /a}\n",
            4,
            "vars.me",
            "vars refer to each other in a circle: ${me} -> ${me}",
        ),
        (
            "name: x\nsteps:\n  - expect_webhook:\n      type: checkout.sesion.expired\n"
            "      none: true\n",
            4,
            "steps[0].expect_webhook.type",
            "unknown event type 'checkout.sesion.expired' (one of order.created, "
            "order.completed, checkout.session.expired)",
        ),
        (
            "name: x\nwebhooks: {eventTypes: [order.created, order.complete]}\n"
            "steps:\n  - request: {path: /a}\n",
            2,
            "webhooks.eventTypes[1]",
            "unknown event type 'order.complete'",
        ),
        (
            "name: x\nsteps:\n  - expect_webhook: {type: order.paid, within: ten minutes}\n",
            3,
            "steps[0].expect_webhook.type",
            "unknown event type 'order.paid'",
        ),
        (
            "name: x\nsteps:\n  - expect_webhook: {type: order.created, within: -5}\n",
            3,
            "steps[0].expect_webhook.within",
            "within must not be negative",
        ),
        (
            "name: x\nsteps:\n  - expect_webhook: {type: order.created, within: ten minutes}\n",
            3,
            "steps[0].expect_webhook.within",
            "within must be a number of seconds or a string like '1h30m'",
        ),
        (
            "name: x\nsteps:\n  - request: {path: /a}\n    control: {action: clock}\n",
            3,
            "steps[0]",
            "a step is one of request, control, expect_webhook, repeat, set: this one has "
            "request and control",
        ),
        (
            "name: x\nsteps:\n  - request: {method: POST, path: /a, json: {}, form: {b: c}}\n",
            3,
            "steps[0].request",
            "a request has one body: json and form cannot both be given",
        ),
        (
            "name: x\nsteps:\n  - control: {action: travel_in_time}\n",
            3,
            "steps[0].control.action",
            "unknown control action 'travel_in_time'",
        ),
        (
            "name: x\nsteps:\n  - control:\n      action: approve_session\n",
            3,
            "steps[0].control",
            "needs 'session'",
        ),
        (
            "name: x\nsteps:\n  - request: {path: /a}\n    save: {later: id}\n"
            "  - request: {path: '${too_early}'}\n    save: {too_early: id}\n",
            5,
            "steps[1].request.path",
            "unknown variable ${too_early}",
        ),
        (
            "name: x\nsettings:\n  rate_limitz: false\nsteps:\n  - request: {path: /a}\n",
            3,
            "settings.rate_limitz",
            "settings: rate_limitz is not a known field",
        ),
        (
            "name: x\nsettings: {withdrawal_tax_base: salary}\nsteps:\n  - request: {path: /a}\n",
            2,
            "settings.withdrawal_tax_base",
            "settings: withdrawal_tax_base must be 'fee' or 'amount'",
        ),
        ("a: &a [*a]\n", 1, "a[0]", "YAML: an alias inside its own anchor"),
        (
            "name: x\nsteps: &s\n  - request: {path: /a}\n    then: *s\n",
            4,
            "steps[0].then",
            "YAML: an alias inside its own anchor",
        ),
        (
            "name: x\nclock: yesterday\nsteps:\n  - request: {path: /a}\n",
            2,
            "clock",
            "clock: must be an ISO 8601 date-time",
        ),
        (
            "name: x\nclock: 1900-01-01T00:00:00Z\nsteps:\n  - request: {path: /a}\n",
            2,
            "clock",
            "clock: ",
        ),
    ],
    ids=[
        "unclosed-flow-mapping",
        "unclosed-list",
        "not-a-mapping",
        "no-name",
        "bad-method",
        "bad-status",
        "unknown-step-key",
        "unknown-variable",
        "vars-in-a-circle",
        "a-var-using-itself",
        "misspelt-event-type-expected",
        "misspelt-event-type-subscribed",
        "unknown-event-type-checked-before-within",
        "negative-within",
        "within-without-a-number",
        "two-kinds-in-one-step",
        "two-bodies-in-one-request",
        "unknown-action",
        "missing-action-argument",
        "variable-used-before-it-is-saved",
        "unknown-setting",
        "bad-setting-value",
        "recursive-alias",
        "recursive-alias-in-a-step",
        "clock-not-an-instant",
        "clock-out-of-range",
    ],
)
def test_bad_files_name_file_line_and_path(
    tmp_path: Path, text: str, line: int, path: str, message: str
) -> None:
    file = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ScenarioError) as caught:
        load_file(file)
    error = caught.value
    assert error.file == str(file)
    assert error.line == line, error.describe()
    assert message in error.message
    assert error.describe().startswith(f"{file}:{line}: ")
    if path:
        assert error.describe().endswith(f" at {path}")


def test_variables_from_vars_matrix_saves_repeat_and_the_runner_are_known(
    tmp_path: Path,
) -> None:
    scenario = one(
        tmp_path,
        """
        name: ok
        vars: {amount: 5000, label: "x-${amount}"}
        matrix: {gateway: [telebirr]}
        steps:
          - request: {method: POST, path: /checkout, json: {amount: "${amount}", g: "${gateway}"}}
            save: {session: sessionId}
          - repeat:
              times: 2
              as: round
              steps:
                - request: {path: "/checkout/${session}?r=${round}&t=${token}&n=${now}"}
          - set: {copy: "${label}"}
          - request: {path: "/${copy}/${base_url}/${uuid}"}
        """,
    )
    assert scenario.row == {"gateway": "telebirr"}
    assert scenario.name == "ok [gateway=telebirr]"


def test_a_matrix_makes_one_scenario_per_combination(tmp_path: Path) -> None:
    write(
        tmp_path,
        "m.yaml",
        """
        name: grid
        matrix:
          code: [a, b, c]
          case: [{name: small, n: 1}, {n: 2}]
        steps:
          - request: {path: "/${code}/${case.n}"}
        """,
    )
    names = [s.name for s in load_paths([tmp_path])]
    assert names == [
        "grid [code=a,case=small]",
        "grid [code=a,case=#2]",
        "grid [code=b,case=small]",
        "grid [code=b,case=#2]",
        "grid [code=c,case=small]",
        "grid [code=c,case=#2]",
    ]


def test_folders_are_searched_recursively_and_a_missing_path_is_an_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    write(tmp_path / "a" / "b", "deep.yml", GOOD)
    write(tmp_path, "top.yaml", GOOD)
    write(tmp_path, "notes.txt", "not a scenario")
    assert len(load_paths([tmp_path])) == 2
    with pytest.raises(ScenarioError, match="no such file or folder"):
        load_paths([tmp_path / "missing"])


def test_a_file_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    file = write(tmp_path, "deep.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ScenarioError, match="YAML nested too deeply"):
        load_file(file)


@pytest.mark.parametrize("clock", ["2026-03-01T08:00:00Z", "'2026-03-01T08:00:00Z'"])
def test_the_clock_may_be_written_unquoted(tmp_path: Path, clock: str) -> None:
    scenario = one(tmp_path, f"name: x\nclock: {clock}\nsteps:\n  - request: {{path: /a}}\n")
    assert scenario.document["clock"] == "2026-03-01T08:00:00Z"


def test_an_unquoted_timestamp_in_an_expectation_stays_text(tmp_path: Path) -> None:
    text = "name: x\nsteps:\n  - control: {action: clock}\n"
    text += "    expect: {json: {clock: {now: 2026-01-01T00:00:00.000Z}}}\n"
    step = one(tmp_path, text).document["steps"][0]
    assert step["expect"]["json"]["clock"]["now"] == "2026-01-01T00:00:00.000Z"


def _laughs(depth: int) -> str:
    """A "billion laughs": each list holds nine aliases of the one before (9^depth leaves)."""
    lines = ["name: laughs", "vars:", "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, depth):
        lines.append(f"  l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    return "\n".join([*lines, "steps:", "  - set: {x: 1}"]) + "\n"


STEP = "name: x\nsteps:\n  - request: {path: /products}\n"


@pytest.mark.parametrize(
    ("text", "line", "path", "message"),
    [
        (_laughs(7), 8, "vars.l5[0][3][3][7][3][7]", "YAML: aliases repeat more than 100000 nodes"),
        (
            STEP + "    expect: {status: 404}\n    expect: {status: 201}\n",
            5,
            "steps[0]",
            "duplicate key 'expect'",
        ),
        (
            STEP + "    expect:\n      json: {total: 5}\n      json: {total: 1}\n",
            6,
            "steps[0].expect",
            "duplicate key 'json'",
        ),
        ("name: x\nname: y\nsteps:\n  - set: {x: 1}\n", 2, "", "duplicate key 'name'"),
        (
            "name: x\nmatrix:\n  a: &v [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  b: *v\n  c: *v\n"
            "  d: *v\nsteps:\n  - request: {path: '/${a}${b}${c}${d}'}\n",
            2,
            "matrix",
            "matrix: 10 x 10 x 10 x 10 = 10000 combinations, at most 1000",
        ),
        (
            STEP + "    expect: {json: {total: {$gte: abc}}}\n",
            4,
            "steps[0].expect.json.total.$gte",
            "$gte needs a number, got 'abc'",
        ),
        (
            STEP + "    expect: {json: {total: {$in: 5}}}\n",
            4,
            "steps[0].expect.json.total.$in",
            "$in needs a list of values, got 5",
        ),
        (
            STEP + "    expect: {json: {items: {$len: {$gte: x}}}}\n",
            4,
            "steps[0].expect.json.items.$len.$gte",
            "$gte needs a number, got 'x'",
        ),
        (
            STEP + "    expect: {json: {items: {$len: many}}}\n",
            4,
            "steps[0].expect.json.items.$len",
            "$len needs a length or a matcher, got 'many'",
        ),
        (
            STEP + "    expect: {paths: {'items[0].title': {$regex: '['}}}\n",
            4,
            "steps[0].expect.paths.items[0].title.$regex",
            "$regex '[' is not a regular expression: unterminated character set",
        ),
        (
            STEP + "    expect: {headers: {Content-Type: {$type: text}}}\n",
            4,
            "steps[0].expect.headers.Content-Type.$type",
            "$type needs one of string, integer",
        ),
        (
            STEP + "    expect: {json: {total: {$between: [1, 2]}}}\n",
            4,
            "steps[0].expect.json.total.$between",
            "unknown matcher $between (known: $any",
        ),
        (
            "name: x\nsteps:\n  - control: {action: trigger_event, type: ping}\n"
            "  - expect_webhook: {type: ping, data: {n: {$lt: soon}}}\n",
            4,
            "steps[1].expect_webhook.data.n.$lt",
            "$lt needs a number, got 'soon'",
        ),
        (
            STEP + "    save: {x: 'items[abc'}\n",
            4,
            "steps[0].save.x",
            "cannot read path 'items[abc'",
        ),
        (
            STEP + "    expect: {paths: {'items]]': 1}}\n",
            4,
            "steps[0].expect.paths.items]]",
            "cannot read path 'items]]'",
        ),
        (
            "name: x\nsteps:\n  - control: {action: trigger_event, type: ping}\n"
            "  - expect_webhook: {type: ping, save: {e: 'data[x'}}\n",
            4,
            "steps[1].expect_webhook.save.e",
            "cannot read path 'data[x'",
        ),
        (
            "name: x\nsteps:\n  - request:\n      path: /products\n"
            '      headers: {X-A: "a\\r\\nX-Injected: 1"}\n',
            5,
            "steps[0].request.headers.X-A",
            "header X-A: the value holds a line break",
        ),
        (
            "name: x\nsteps:\n  - request:\n      path: /products\n      headers: {'X A': b}\n",
            5,
            "steps[0].request.headers.X A",
            "'X A' is not a header name",
        ),
        (
            "name: x\nsteps:\n  - request:\n      path: /products\n"
            '      auth: {bearer: "t\\nX-Injected: 1"}\n',
            5,
            "steps[0].request.auth.bearer",
            "header Authorization: the value holds a line break",
        ),
        (
            "name: x\nwebhooks: {}\nsteps:\n  - control: {action: receiver, answers: [abc]}\n",
            4,
            "steps[0].control.answers",
            "answers holds 'abc', not an HTTP status (100-599)",
        ),
        (
            "name: x\nsteps:\n  - request: {path: /products, auth: nosuchcredential}\n",
            3,
            "steps[0].request.auth",
            "unknown variable ${nosuchcredential} (auth names a credential variable)",
        ),
    ],
    ids=[
        "billion-laughs",
        "duplicate-step-key",
        "duplicate-expect-key",
        "duplicate-top-level-key",
        "matrix-too-big",
        "gte-of-text",
        "in-of-a-number",
        "len-matcher-of-text",
        "len-of-text",
        "regex-that-does-not-compile",
        "unknown-type",
        "unknown-matcher",
        "webhook-data-matcher",
        "save-path",
        "expect-paths-path",
        "webhook-save-path",
        "header-value-line-break",
        "header-name",
        "bearer-line-break",
        "receiver-answers",
        "unknown-auth-credential",
    ],
)
def test_mistakes_a_step_would_crash_on_are_refused_at_load(
    tmp_path: Path, text: str, line: int, path: str, message: str
) -> None:
    test_bad_files_name_file_line_and_path(tmp_path, text, line, path, message)


def test_what_variables_fill_in_is_left_for_the_run(tmp_path: Path) -> None:
    scenario = one(
        tmp_path,
        """
        name: checked when the step runs
        vars: {low: 1, prefix: "^p_", kinds: [string], header: "x-${low}", path: items}
        steps:
          - request: {path: /products, headers: {X-Trace: "${header}"}}
            expect:
              json: {total: {$gte: "${low}"}, items: {$len: "${low}"}}
              paths: {"$.items[*]._id": {$contains: {$regex: "${prefix}"}}}
            save: {location: "headers.Location?code", first: "items[0]", named: "${path}"}
          - request: {path: /products, auth: location}
        """,
    )
    assert scenario.name == "checked when the step runs"


def test_every_matrix_row_has_a_label_of_its_own(tmp_path: Path) -> None:
    """``100`` and ``"100"`` (or two rows named alike) made two scenarios and two pytest ids
    of one name, one passing and one failing."""
    write(
        tmp_path,
        "d.yaml",
        """
        name: dup
        matrix: {amount: [100, "100", true, "true", "x", {name: a}, {name: a}]}
        steps:
          - request: {path: /products}
        """,
    )
    names = [s.name for s in load_paths([tmp_path])]
    assert names == [
        "dup [amount=100]",
        'dup [amount="100"]',
        "dup [amount=True]",
        'dup [amount="true"]',
        "dup [amount=x]",
        "dup [amount=a,row=6]",
        "dup [amount=a,row=7]",
    ]
    assert len(set(names)) == len(names)


def test_a_value_that_reads_like_a_numbered_label_is_numbered_too(tmp_path: Path) -> None:
    """Row 3's value ``x,row=1`` made the label row 1 got for its repeated ``x``."""
    write(
        tmp_path,
        "d.yaml",
        """
        name: dup
        matrix: {a: ["x", "x", "x,row=1"]}
        steps:
          - request: {path: /products}
        """,
    )
    names = [s.name for s in load_paths([tmp_path])]
    assert names == ["dup [a=x,row=1,row=1]", "dup [a=x,row=2]", "dup [a=x,row=1,row=3]"]


def test_a_matrix_may_reach_the_limit_and_aliases_may_repeat_a_little(tmp_path: Path) -> None:
    text = "name: x\nmatrix:\n  a: &v " + str(list(range(10))) + "\n  b: *v\n  c: *v\n"
    text += "steps:\n  - request: {path: '/${a}${b}${c}'}\n"
    assert len(load_file(write(tmp_path, "m.yaml", text))) == 1000
    assert load_file(write(tmp_path, "l.yaml", _laughs(5)))[0].document["vars"]["l4"][8][8][8]


SURROGATE = '"\\ud800"'


@pytest.mark.parametrize(
    ("text", "line", "path"),
    [
        (f"name: {SURROGATE}\nsteps:\n  - request: {{path: /a}}\n", 1, "name"),
        (
            f"name: x\nsteps:\n  - request:\n      path: {SURROGATE}\n",
            4,
            "steps[0].request.path",
        ),
        (
            f"name: x\nsteps:\n  - request:\n      path: /a\n      query: {{q: {SURROGATE}}}\n",
            5,
            "steps[0].request.query.q",
        ),
        (
            f"name: x\nsteps:\n  - name: {SURROGATE}\n    request: {{path: /a}}\n",
            3,
            "steps[0].name",
        ),
        (
            f"name: x\nvars: {{v: {SURROGATE}}}\nsteps:\n  - request: {{path: /a}}\n",
            2,
            "vars.v",
        ),
        (
            f"name: x\nmatrix: {{m: [{SURROGATE}]}}\nsteps:\n  - request: {{path: /a}}\n",
            2,
            "matrix.m[0]",
        ),
    ],
    ids=["name", "path", "query", "step-name", "vars", "matrix"],
)
def test_a_lone_surrogate_outside_json_data_is_refused_at_load(
    tmp_path: Path, text: str, line: int, path: str
) -> None:
    """It would crash the console, the reports or pytest's test names once the scenario ran."""
    test_bad_files_name_file_line_and_path(tmp_path, text, line, path, "lone surrogate (U+D800)")


def test_a_lone_surrogate_in_json_data_loads(tmp_path: Path) -> None:
    """JSON sends it as the escape ``\\ud800`` (how a scenario checks the API refuses one)."""
    text = (
        "name: x\nsteps:\n  - request:\n      method: POST\n      path: /a\n"
        f"      json: {{title: {SURROGATE}}}\n    expect: {{json: {{title: {SURROGATE}}}}}\n"
    )
    (scenario,) = load_file(write(tmp_path, "ok.yaml", text))
    assert scenario.steps[0]["request"]["json"] == {"title": "\ud800"}


def test_raw_base64_that_is_not_base64_is_refused_at_load(tmp_path: Path) -> None:
    text = "name: x\nsteps:\n  - request:\n      path: /a\n      raw_base64: 'not base64!'\n"
    test_bad_files_name_file_line_and_path(
        tmp_path, text, 5, "steps[0].request.raw_base64", "raw_base64 is not base64"
    )
