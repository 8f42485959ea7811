"""``svc-sandbox run`` and ``svc-sandbox record`` as a user types them."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
from _build_hooks import copy_library
from flask.testing import FlaskClient

from svc_sandbox.cli import main
from svc_sandbox.core.journal import JOURNAL_ENTRIES
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.scenarios.command import library_folder
from svc_sandbox.scenarios.recorder import NOT_RECORDED_HEADER
from tests.scenarios.helpers import write

PASSING = """
    name: lists products
    tags: [smoke]
    steps:
      - request: {path: /products}
        expect: {status: 200, json: {total: 0}}
      - control: {action: advance, duration: 1h}
"""
FAILING = """
    name: expects the wrong status
    tags: [broken]
    steps:
      - request: {path: /products}
        expect: {status: 201}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write(tmp_path, "passing.yaml", PASSING)
    write(tmp_path, "failing.yaml", FAILING)
    return tmp_path


def test_run_reports_every_scenario_and_exits_1_on_a_failure(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "Running 2 scenario(s) against in-process" in out
    assert "lists products" in out and "expects the wrong status" in out
    assert "status: expected 201, got 200" in out  # the failure panel
    assert "1 passed, 1 failed" in out


MATRIX = """
    name: rows
    matrix: {total: [0, 1]}
    steps:
      - request: {path: /products}
        expect: {json: {total: "${total}"}}
"""


def test_the_console_keeps_matrix_labels_and_brackets_in_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # a terminal as wide as a CI log
    monkeypatch.chdir(tmp_path)  # the file column shows paths from here
    (tmp_path / "checkout" / "expiry").mkdir(parents=True)
    write(tmp_path / "checkout" / "expiry", "a_rather_long_scenario_file_name.yaml", PASSING)
    write(tmp_path, "matrix.yaml", MATRIX)
    write(tmp_path, "brackets.yaml", PASSING.replace("lists products", '"[red]kept[/red] [x]"'))
    assert main(["run", "."]) == 1
    out = capsys.readouterr().out
    assert "[red]kept[/red] [x]" in out  # the summary table, markup shown as written
    assert "rows [total=0]" in out and "rows [total=1]" in out
    assert "rows [total=1]: failed" in out  # the failure panel's title
    # The file column is not cut to a stub.
    assert "checkout/expiry/a_rather_long_scenario_file_name.yaml" in out


def test_piped_the_summary_table_is_as_wide_as_its_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI log is no terminal: rich gave the table 80 columns, dropped "sandbox time" and
    broke the file names; each row is now one line with every column."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.chdir(tmp_path)
    deep = tmp_path / "checkout" / "expiry" / "at_exactly_thirty_minutes"
    deep.mkdir(parents=True)
    long_name = "a_scenario_file_whose_name_alone_takes_sixty_characters.yaml"
    write(deep, long_name, PASSING.replace("lists products", "lists products " + "x" * 40))
    assert main(["run", "."]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any("sandbox time" in line for line in lines)
    [row] = [line for line in lines if long_name in line]
    assert "lists products " + "x" * 40 in row
    assert f"checkout/expiry/at_exactly_thirty_minutes/{long_name}" in row
    assert row.rstrip().endswith("1h00m00s │")  # the sandbox time, last


def test_tag_and_name_filters(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(folder), "--tag", "smoke"]) == 0
    assert "Running 1 scenario(s)" in capsys.readouterr().out
    assert main(["run", str(folder), "-k", "WRONG"]) == 1
    assert "expects the wrong status" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("filters", "said"),
    [
        (["--tag", "nosuchtag"], "--tag nosuchtag matches none of the 2 scenario(s)"),
        (["-k", "nothing like it"], "-k nothing like it matches none of the 2 scenario(s)"),
        (
            ["--tag", "smoke", "-k", "wrong"],
            "--tag smoke with -k wrong match none of the 2 scenario(s)",
        ),
    ],
    ids=["tag", "keyword", "tag-and-keyword"],
)
def test_a_filter_that_matches_nothing_exits_5_naming_it(
    folder: Path, capsys: pytest.CaptureFixture[str], filters: list[str], said: str
) -> None:
    assert main(["run", str(folder), *filters]) == 5
    captured = capsys.readouterr()
    assert captured.err.strip() == f"svc-sandbox: nothing to run: {said} under {folder}"
    assert "Running" not in captured.out


def test_a_folder_without_scenarios_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tmp_path)]) == 5
    assert f"nothing to run: no scenario files under {tmp_path}" in capsys.readouterr().err


def test_json_and_junit_reports(folder: Path) -> None:
    report, junit = folder / "out.json", folder / "out.xml"
    main(["run", str(folder), "--json", str(report), "--junit", str(junit)])
    data = json.loads(report.read_text())
    assert data["summary"] == {"passed": 1, "failed": 1, "skipped": 0, "error": 0}
    by_name = {s["name"]: s for s in data["scenarios"]}
    assert by_name["lists products"]["sandboxSeconds"] == 3600
    failed = by_name["expects the wrong status"]["steps"][0]
    assert failed["status"] == "failed" and failed["line"] == 4
    suite = ElementTree.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    failure = suite.find("testcase/failure")
    assert failure is not None and failure.get("message") == "status: expected 201, got 200"
    assert failure.text is not None and "failing.yaml:4" in failure.text


def test_reports_go_into_missing_folders(folder: Path) -> None:
    report, junit = folder / "out" / "ci" / "run.json", folder / "out" / "ci" / "run.xml"
    main(["run", str(folder), "--json", str(report), "--junit", str(junit)])
    assert json.loads(report.read_text())["summary"]["passed"] == 1
    assert ElementTree.parse(junit).getroot().get("tests") == "2"


def test_a_report_that_cannot_be_written_is_said_and_fails_the_run(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = folder / "blocker"
    blocker.write_text("a file where a folder would have to be")
    report = blocker / "ci" / "run.json"
    assert main(["run", str(folder / "passing.yaml"), "--json", str(report)]) == 2
    captured = capsys.readouterr()
    assert "1 passed" in captured.out
    assert (
        f"svc-sandbox: cannot write {report}: {blocker} is a file, where a folder would have to be"
        in captured.err
    )


def test_fail_fast_stops_after_the_first_failure(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(folder, "a_failing_first.yaml", FAILING.replace("expects the", "first"))
    assert main(["run", str(folder), "--fail-fast"]) == 1
    assert "1 failed" in capsys.readouterr().out


def test_a_bad_file_runs_nothing_and_exits_2(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(folder, "zz_bad.yaml", "name: x\nsteps:\n  - control: {action: nap}\n")
    assert main(["run", str(folder)]) == 2
    captured = capsys.readouterr()
    assert "Running" not in captured.out
    assert f"{folder / 'zz_bad.yaml'}:3: unknown control action 'nap'" in captured.err


def test_a_file_with_bad_settings_runs_nothing_and_exits_2(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "name: x\nsettings: {rate_limitz: false}\nsteps:\n  - request: {path: /a}\n"
    bad = write(folder, "zz_settings.yaml", text)
    assert main(["run", str(folder)]) == 2
    captured = capsys.readouterr()
    assert "Running" not in captured.out
    assert captured.err.strip() == (
        f"svc-sandbox: {bad}:2: settings: rate_limitz is not a known field at settings.rate_limitz"
    )


def test_target_real_needs_a_base_url(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(folder), "--target", "real"]) == 2
    assert "--target real needs --base-url" in capsys.readouterr().err


def test_target_real_needs_a_token(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without one every step sending ${token} was skipped and the run passed (exit 0): a CI
    job whose secret is missing went green."""
    monkeypatch.delenv("SVC_TOKEN", raising=False)
    argv = ["run", str(folder), "--target", "real", "--base-url", "http://127.0.0.1:1/api"]
    assert main(argv) == 2
    assert "--target real needs a token: --token or env SVC_TOKEN" in capsys.readouterr().err


def test_a_root_without_target_real_is_a_usage_error(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(folder), "--root", "pay_url=http://127.0.0.1:2/pay"]) == 2
    assert "--root is for --target real" in capsys.readouterr().err


def test_run_against_a_running_emulator_and_another_server(
    folder: Path, svc_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    passing = str(folder / "passing.yaml")
    assert main(["run", passing, "--base-url", svc_server.url]) == 0
    assert f"against emulator at {svc_server.url}" in capsys.readouterr().out
    token = svc_server.sandbox.info()["organizations"][0]["tokens"][0]["token"]
    args = ["run", passing, "--target", "real", "--base-url", svc_server.url + "/api"]
    assert main([*args, "--token", token]) == 0
    assert "1 passed" in capsys.readouterr().out


def test_reports_never_show_the_token_given(
    folder: Path, svc_server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--target real is pointed at real servers with real tokens: the console and the CI
    artifacts show a credential masked, its kind and its last characters only."""
    token = svc_server.sandbox.info()["organizations"][0]["tokens"][0]["token"]
    reports = ["--json", str(tmp_path / "out.json"), "--junit", str(tmp_path / "out.xml")]
    args = ["run", str(folder), "--target", "real", "--base-url", svc_server.url + "/api"]
    assert main([*args, "--token", token, *reports]) == 1
    written = [capsys.readouterr().out] + [
        (tmp_path / n).read_text() for n in ("out.json", "out.xml")
    ]
    for text in written:
        assert token not in text
    shown = f"Bearer {token[:9]}...{token[-4:]}"
    assert all(shown in text for text in written[1:])  # the failing step's request
    steps = json.loads(written[1])["scenarios"][1]["steps"]
    assert steps[0]["request"]["headers"]["Authorization"] == shown


def test_record_writes_a_scenario_that_replays_green(
    svc_server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import urllib.request

    token = svc_server.sandbox.info()["organizations"][0]["tokens"][0]["token"]
    base = svc_server.url

    def call(method: str, path: str, body: object = None, auth: bool = True) -> None:
        headers = {"Content-Type": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {token}"
        data = json.dumps(body if body is not None else {}).encode()
        request = urllib.request.Request(base + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(request, timeout=10) as answer:
            answer.read()

    call("POST", "/_sandbox/reset", auth=False)
    call("POST", "/api/checkout", {"amount": 900, "description": "Soup"})
    call("POST", "/_sandbox/clock/advance", {"duration": "31m"}, auth=False)
    out = tmp_path / "recorded" / "checkout" / "soup.yaml"  # folders made as needed
    assert main(["record", "--url", base, "--out", str(out), "--name", "soup"]) == 0
    assert json.loads(capsys.readouterr().out) == {"out": str(out), "steps": 2}
    text = out.read_text()
    assert "name: soup" in text and "action: advance" in text
    assert main(["run", str(out)]) == 0


def test_a_recording_that_cannot_hold_the_whole_session_says_so(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    """Past the journal's 1,000 entries the start of a session was dropped without a word
    (the replay then failed at its first step, a product it never made)."""
    assert svc_http.post("/api/products", json={"title": "x"}).status_code == 403  # no token
    for _ in range(JOURNAL_ENTRIES + 5):
        svc_sandbox.journal.record("req_x", "GET", "/api/products", 200)
    answer = svc_http.get("/_sandbox/scenario")
    assert answer.status_code == 200
    assert answer.headers[NOT_RECORDED_HEADER] == "6"  # pushed out of the journal
    # 990 not read, 7 pushed out (the recording above is journaled too)
    assert svc_http.get("/_sandbox/scenario?limit=10").headers[NOT_RECORDED_HEADER] == "997"
    assert svc_http.post("/_sandbox/reset", json={}).status_code == 200
    svc_sandbox.journal.record("req_y", "GET", "/api/products", 200)
    assert NOT_RECORDED_HEADER not in svc_http.get("/_sandbox/scenario").headers
    svc_http.post("/_sandbox/reset", json={})
    for _ in range(3):
        svc_sandbox.journal.record("req_z", "GET", "/api/products", 200)
    # A limit that leaves the reset out: it and the request after it are not recorded.
    assert svc_http.get("/_sandbox/scenario?limit=2").headers[NOT_RECORDED_HEADER] == "2"


def test_record_warns_when_the_recording_cannot_hold_the_session(
    svc_server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(JOURNAL_ENTRIES + 1):
        svc_server.sandbox.journal.record("req_x", "GET", "/api/products", 200)
    out = tmp_path / "cut.yaml"
    assert main(["record", "--url", svc_server.url, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 earlier request(s) of this session are not in the recording" in err


def test_the_record_route_refuses_bad_parameters(svc_http: FlaskClient) -> None:
    assert svc_http.get("/_sandbox/scenario?limit=0").status_code == 400
    answer = svc_http.get("/_sandbox/scenario?name=")
    assert answer.status_code == 400
    assert answer.json == {"error": "name must be 1 to 200 characters", "code": "validation_failed"}


def test_a_bad_file_never_touches_a_running_emulator(
    folder: Path, svc_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    write(folder, "zz_bad.yaml", "name: x\nsteps:\n  - request: {path: '/${ghost}'}\n")
    assert main(["run", str(folder), "--base-url", svc_server.url]) == 2
    assert "zz_bad.yaml:3: unknown variable ${ghost}" in capsys.readouterr().err
    assert svc_server.sandbox.journal.recent(10) == []


def test_record_says_when_it_cannot_write_the_file(
    svc_server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError):  # a 403 (no token): still one journal entry
        urllib.request.urlopen(svc_server.url + "/api/products", timeout=10)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder would have to be")
    out = blocker / "flows" / "x.yaml"
    assert main(["record", "--url", svc_server.url, "--out", str(out)]) == 2
    assert f"svc-sandbox: cannot write {out}: " in capsys.readouterr().err


NEEDS_RATE_LIMITS_OFF = """
    name: needs rate limits off
    settings: {rate_limits: false}
    steps:
      - request: {path: /products}
"""
NEEDS_SHORT_RETRIES = """
    name: needs short retries
    settings: {webhook_retries: "1m,5m", withdrawal_fee_rate: 0.07}
    steps:
      - request: {path: /products}
"""
NEEDS_WHAT_IT_GETS = """
    name: needs what the emulator runs with
    settings: {rate_limits: true, withdrawal_fee_rate: 0.07}
    steps:
      - request: {path: /products}
        expect: {status: 200}
"""
NEEDS_A_FROZEN_CLOCK = """
    name: needs a frozen clock
    clock: "2026-03-01T00:00:00Z"
    steps:
      - control: {action: clock}
        expect: {json: {clock: {now: "2026-03-01T00:00:00.000Z"}}}
"""


def test_a_running_emulator_skips_scenarios_whose_settings_it_does_not_run_with(
    tmp_path: Path, svc_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "a.yaml", NEEDS_RATE_LIMITS_OFF)
    write(tmp_path, "b.yaml", NEEDS_SHORT_RETRIES)
    write(tmp_path, "c.yaml", NEEDS_WHAT_IT_GETS)
    write(tmp_path, "d.yaml", NEEDS_A_FROZEN_CLOCK)  # svc_server's clock is frozen: it runs
    junit = tmp_path / "out.xml"
    url = svc_server.url
    assert main(["run", str(tmp_path), "--base-url", url, "--junit", str(junit)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        f"needs rate limits off: skipped: needs settings rate_limits=false; the emulator at "
        f"{url} runs with true" in out
    )
    assert (
        f'skipped: needs settings webhook_retries="1m,5m"; the emulator at {url} runs with '
        f'"1m,5m,30m,2h,12h"' in out
    )
    assert "withdrawal_fee_rate" not in out  # 0.07 is what it runs with ("0.07")
    assert "2 passed, 2 skipped" in out
    skipped = ElementTree.parse(junit).getroot().findall("testcase/skipped")
    assert [s.get("message", "").split(";")[0] for s in skipped] == [
        "needs settings rate_limits=false",
        'needs settings webhook_retries="1m,5m"',
    ]


def test_an_emulator_with_a_flowing_clock_skips_scenarios_that_set_the_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from svc_sandbox.app import create_app
    from svc_sandbox.sandbox import Sandbox
    from svc_sandbox.server import ServerThread

    sandbox = Sandbox(port=0, clock_mode="real")
    server = ServerThread(create_app(sandbox), sandbox.settings).start()
    try:
        write(tmp_path, "clock.yaml", NEEDS_A_FROZEN_CLOCK)
        write(tmp_path, "plain.yaml", PASSING.replace("total: 0", "total: {$gte: 0}"))
        assert main(["run", str(tmp_path), "--base-url", server.origin]) == 0
    finally:
        server.close()
        sandbox.stop()
    out = " ".join(capsys.readouterr().out.split())
    assert (
        f"needs a frozen clock: skipped: needs a frozen clock (clock: 2026-03-01T00:00:00Z); "
        f"the emulator at {server.origin} runs a real clock (start it with serve --clock frozen)"
        in out
    )
    assert "1 passed, 1 skipped" in out


def test_record_of_an_empty_journal_writes_nothing_and_exits_2(
    svc_server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svc_server.sandbox.reset()
    out = tmp_path / "empty.yaml"
    assert main(["record", "--url", svc_server.url, "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"svc-sandbox: nothing to record: the request journal of {svc_server.url} is empty "
        "(no file written)\n"
    )
    assert not out.exists()


def test_conformance_and_record_find_the_emulator_that_exec_started(
    svc_server: RunningServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside ``svc-sandbox exec`` (a free port) they read SVC_SANDBOX_URL, which it sets."""
    monkeypatch.setenv("SVC_SANDBOX_URL", svc_server.url)
    svc_server.sandbox.reset()
    assert main(["conformance", "--format", "json"]) == 0
    assert (
        json.loads(capsys.readouterr().out)["contract"]["title"] == "Payments service commerce API"
    )
    assert main(["record", "--out", str(tmp_path / "flow.yaml")]) == 2
    assert f"the request journal of {svc_server.url} is empty" in capsys.readouterr().err
    monkeypatch.setenv("SVC_SANDBOX_URL", "notaurl")
    with pytest.raises(SystemExit):
        main(["conformance"])
    assert "argument --url: 'notaurl' must be an absolute" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--base-url", "notaurl"], "argument --base-url: 'notaurl' must be an absolute"),
        (["record", "--url", "notaurl", "--out", "x.yaml"], "argument --url: 'notaurl' must be"),
        (["contract", "test", "--base-url", "notaurl"], "argument --base-url: 'notaurl' must"),
        (["conformance", "--url", "notaurl"], "argument --url: 'notaurl' must be an absolute"),
        (["run", "--timeout", "-1"], "argument --timeout: '-1' must be a number of seconds"),
        (["run", "--timeout", "nan"], "argument --timeout: 'nan' is not a number of seconds"),
        # ASCII digits only (core/numbers.py): float() read these as 10 and 1.
        (["run", "--timeout", "1e1"], "argument --timeout: '1e1' is not a number of seconds"),
        (["run", "--timeout", "\u0661"], "argument --timeout: '\u0661' is not a number of"),
        (["run", "--timeout", "soon"], "argument --timeout: 'soon' is not a number of seconds"),
        (["run", "--seed", "\u0661"], "argument --seed: '\u0661' is not a whole number in ASCII"),
        (["run", "--seed", "1_0"], "argument --seed: '1_0' is not a whole number in ASCII"),
        (
            ["contract", "test", "--base-url", "http://127.0.0.1:1", "--max-examples", "0"],
            "argument --max-examples: '0' must be at least 1",
        ),
        (["record", "--out", "x.yaml", "--limit", "0"], "argument --limit: '0' must be at least 1"),
    ],
)
def test_a_bad_url_or_number_is_a_usage_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_a_bad_root_url_of_a_real_target_exits_2(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", str(folder), "--target", "real", "--base-url", "http://127.0.0.1:1"]
    assert main([*argv, "--root", "pay_url=notaurl"]) == 2
    assert "--root pay_url=notaurl: the URL must be an absolute" in capsys.readouterr().err


def test_a_scenario_that_errs_still_gets_its_reports_and_the_next_one_runs(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        folder,
        "erring.yaml",
        """
        name: a saved text as a number
        steps:
          - request: {method: POST, path: /products, json: {title: abc, pricingModel: free}}
            save: {title: product.title}
          - request: {path: /products}
            expect: {json: {total: {$gte: "${title}"}}}
        """,
    )
    report, junit = folder / "out.json", folder / "out.xml"
    assert main(["run", str(folder), "--json", str(report), "--junit", str(junit)]) == 1
    assert "Traceback" not in capsys.readouterr().err
    data = json.loads(report.read_text())
    assert data["summary"] == {"passed": 1, "failed": 1, "skipped": 0, "error": 1}
    erring = next(s for s in data["scenarios"] if s["status"] == "error")
    assert erring["steps"][-1]["message"] == "json.total.$gte: $gte needs a number, got 'abc'"
    suite = ElementTree.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("errors")) == ("3", "1")


def test_junit_holds_names_with_control_characters(tmp_path: Path) -> None:
    write(
        tmp_path,
        "odd.yaml",
        """
        name: "odd \\x01\\x1b[31m <name> & more"
        steps:
          - name: "step \\x0b"
            request: {path: /products}
            expect: {json: {total: "never \\x02"}}
        """,
    )
    junit = tmp_path / "out.xml"
    assert main(["run", str(tmp_path), "--junit", str(junit)]) == 1
    case = ElementTree.parse(junit).getroot().find("testcase")
    assert case is not None and case.get("name") == "odd \\x01\\x1b[31m <name> & more"
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    assert "step \\x0b" in failure.text and "never \\x02" in failure.text


def test_an_unknown_root_name_is_a_usage_error_naming_the_roots(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", str(folder), "--target", "real", "--base-url", "http://127.0.0.1:1"]
    assert main([*argv, "--root", "nope=http://127.0.0.1:2"]) == 2
    err = capsys.readouterr().err
    assert "--root nope=http://127.0.0.1:2: expected NAME=URL with NAME one of base_url, " in err
    assert "{" not in err


SEEDED = """
    name: seed {seed}
    {line}
    steps:
      - control: {{action: info}}
        expect: {{json: {{seed: {expected}}}}}
"""


@pytest.mark.parametrize(
    ("argv", "line", "expected"),
    [
        ([], "seed: 9", 9),
        (["--seed", "3"], "seed: 9", 9),  # the file's seed wins: a recording replays its ids
        (["--seed", "3"], "", 3),
        ([], "", 1),
        (["--seed", "3"], "seed: 0", 0),  # 0 is a seed, not "none given"
    ],
)
def test_a_scenarios_own_seed_wins_over_the_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], line: str, expected: int
) -> None:
    """docs/scenarios.md: ``seed`` is the in-process sandbox's seed, "default: --seed, else
    1". ``run --seed`` overrode it, so a recorded file replayed with another seed failed."""
    write(tmp_path, "s.yaml", SEEDED.format(seed=expected, line=line, expected=expected))
    assert main(["run", *argv, str(tmp_path)]) == 0, capsys.readouterr().out


LIBRARY = Path(__file__).resolve().parents[2] / "scenarios"


def test_the_library_runs_from_its_flag_beside_other_files(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkout's library is scenarios/; a wheel ships it as package data (next test)."""
    assert Path(library_folder()) == LIBRARY
    assert main(["run", "--library", str(folder / "passing.yaml"), "-k", "product"]) == 0
    out = capsys.readouterr().out
    assert "lists products" in out
    ran = int(out.split("Running ", 1)[1].split(" ")[0])
    assert ran > 1  # the file given and the library's product scenarios


def test_the_wheel_gets_the_whole_library(tmp_path: Path) -> None:
    """An installed wheel carried only the runner: the library had to be copied by hand."""
    target = tmp_path / "svc_sandbox" / "scenarios" / "library"
    written = copy_library(LIBRARY, target)
    shipped = sorted(p.relative_to(LIBRARY) for p in LIBRARY.rglob("*.yaml"))
    assert sorted(p.relative_to(target) for p in written) == shipped and shipped
    for path in written:
        assert path.read_bytes() == (LIBRARY / path.relative_to(target)).read_bytes()


FAILS_IN_ROUND_THREE = """
    name: fails in round 3
    steps:
      - repeat:
          times: 4
          as: r
          steps:
            - request:
                method: POST
                path: /products
                json: {title: "P${r}", pricingModel: free, status: published}
              expect: {status: 201}
            - request: {path: /products}
              expect: {json: {total: {$lt: 3}}}
"""
WRONG_WEBHOOK_DATA = """
    name: wrong webhook data
    webhooks: {}
    steps:
      - request: {method: POST, path: /checkout, json: {amount: 5000, description: D}}
        save: {s: sessionId}
      - expect_webhook:
          type: checkout.session.expired
          within: 31m
          data: {sessionId: "${s}", failure: {code: payment_failed}}
"""


def test_a_failure_piped_into_a_log_is_whole_and_says_the_round_and_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a CI log the failure panel took 80 columns and cut the request's URL and body
    with "…"; a failure in a repeat did not say its round; a webhook whose data differed
    listed only the types that arrived."""
    monkeypatch.delenv("COLUMNS", raising=False)
    write(tmp_path, "round.yaml", FAILS_IN_ROUND_THREE)
    write(tmp_path, "data.yaml", WRONG_WEBHOOK_DATA)
    report = tmp_path / "report.json"
    assert main(["run", str(tmp_path), "--json", str(report)]) == 1
    out = capsys.readouterr().out
    assert "…" not in out
    assert "step steps[0].repeat.steps[1]: GET /products (round 3 of 4)" in out
    assert any(len(line) >= 150 for line in out.splitlines() if line.startswith("│"))
    failures = [
        step["message"]
        for scenario in json.loads(report.read_text())["scenarios"]
        for step in scenario["steps"]
        if step["status"] == "failed"
    ]
    assert any(
        "the last checkout.session.expired differs: data.failure.code: expected "
        "'payment_failed', got 'session_expired'" in message
        for message in failures
    ), failures
