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
            "settings: Extra inputs are not permitted",
        ),
        (
            "name: x\nsettings: {withdrawal_tax_base: salary}\nsteps:\n  - request: {path: /a}\n",
            2,
            "settings.withdrawal_tax_base",
            "settings: Input should be 'fee' or 'amount'",
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
            "clock: Invalid isoformat string: 'yesterday'",
        ),
        (
            "name: x\nclock: 1900-01-01T00:00:00Z\nsteps:\n  - request: {path: /a}\n",
            2,
            "clock",
            "clock: ",
        ),
    ],
    ids=[
        "unknown-setting",
        "bad-setting-value",
        "unclosed-flow-mapping",
        "unclosed-list",
        "not-a-mapping",
        "no-name",
        "bad-method",
        "bad-status",
        "unknown-step-key",
        "unknown-variable",
        "unknown-action",
        "missing-action-argument",
        "variable-used-before-it-is-saved",
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
