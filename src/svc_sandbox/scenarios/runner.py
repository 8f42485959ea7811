"""Runs scenarios step by step against a target and reports each step's outcome."""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

from svc_sandbox.contract.validation import (
    Contract,
    commerce_contract,
    identity_contract,
    wallet_contract,
)
from svc_sandbox.core.clock import isoformat, monotonic
from svc_sandbox.core.durations import parse_duration
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.ids import IdFactory
from svc_sandbox.scenarios.actions import ACTIONS, CONTROL_PREFIX
from svc_sandbox.scenarios.loader import event_type_problem
from svc_sandbox.scenarios.matchers import (
    EXPECTED,
    EXPECTED_BY_NAME,
    MISSING,
    Verbatim,
    argument_problems,
    check_path,
    expectations,
    match,
    plain,
    resolve,
)
from svc_sandbox.scenarios.model import DocPath, Scenario, ScenarioError, dotted
from svc_sandbox.scenarios.receiver import Delivery, WebhookReceiver, answers_problem
from svc_sandbox.scenarios.responses import pick, pick_problem
from svc_sandbox.scenarios.results import (
    ERROR,
    FAILED,
    PASSED,
    SKIPPED,
    ScenarioResult,
    StepResult,
)
from svc_sandbox.scenarios.targets import Session, Target, Unsupported
from svc_sandbox.scenarios.templating import (
    EXPECT,
    KEEP,
    PLAIN,
    PROVIDED,
    RECEIVER_VARIABLES,
    TooLarge,
    UnboundVariable,
    as_text,
    dependency_order,
    own_vars,
    references,
    render,
)
from svc_sandbox.scenarios.transport import (
    HttpRequest,
    HttpResponse,
    TransportError,
    base64_body,
    header_problem,
)
from svc_sandbox.webhooks.signing import SIGNATURE_HEADER, verify

#: Wall seconds a webhook may take to arrive from a running emulator after its due time.
REMOTE_WEBHOOK_WAIT = 3.0
#: ``expect.schema``: the contract of each root whose responses it describes.
SCHEMA_CONTRACTS: dict[str, Callable[[], Contract]] = {
    "base_url": commerce_contract,
    "auth_url": identity_contract,
    "wallet_base_url": wallet_contract,
}
EMULATOR_ONLY = "emulator-only step (control plane and webhooks) skipped against another server"


class StepFailed(Exception):
    def __init__(
        self,
        message: str,
        request: HttpRequest | None = None,
        response: HttpResponse | None = None,
        expectation: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.request = request
        self.response = response
        self.expectation = expectation


class Skip(Exception):
    """This step cannot run against this target; the reason is reported."""


class StepError(Exception):
    """The step cannot run as its values came out (``$gte`` of a saved text, a header value
    with a line break): the scenario's mistake, reported as the step's error."""


class _Stop(Exception):
    """The scenario ends at a failed step."""


class Runner:
    def __init__(self, target: Target, seed: int | None = None, fail_fast: bool = False) -> None:
        self.target = target
        self.seed = seed
        self.fail_fast = fail_fast

    def run_all(
        self,
        scenarios: Iterable[Scenario],
        started: Callable[[Scenario], None] | None = None,
        finished: Callable[[ScenarioResult], None] | None = None,
    ) -> list[ScenarioResult]:
        results = []
        for scenario in scenarios:
            if started:
                started(scenario)
            result = self.run(scenario)
            results.append(result)
            if finished:
                finished(result)
            if self.fail_fast and result.status in (FAILED, ERROR):
                break
        return results

    def run(self, scenario: Scenario) -> ScenarioResult:
        result = ScenarioResult(scenario.name, str(scenario.file), scenario.tags)
        began = monotonic()
        try:
            session = self.target.open(scenario, self.seed)
        except Unsupported as exc:
            result.status, result.message = SKIPPED, str(exc)
            result.wall_seconds = monotonic() - began
            return result
        except (ScenarioError, TransportError) as exc:
            result.status, result.message = ERROR, str(exc)
            result.wall_seconds = monotonic() - began
            return result
        except Exception as exc:  # noqa: BLE001 - one scenario's error never ends the run
            result.status, result.message = ERROR, unexpected(exc)
            result.wall_seconds = monotonic() - began
            return result
        run = _Run(scenario, session, result, self.seed)
        try:
            run.execute()
        finally:
            run.close()
            result.wall_seconds = monotonic() - began
        return result


class _Run:
    """One scenario's run: its variables, its receiver, its step results."""

    def __init__(
        self, scenario: Scenario, session: Session, result: ScenarioResult, seed: int | None
    ) -> None:
        self.scenario = scenario
        self.session = session
        self.result = result
        self.vars: dict[str, Any] = dict(session.provided)
        #: Variables a skipped step would have saved, with the reason.
        self.unbound: dict[str, str] = {}
        #: ``${uuid}`` and ``${random_hex}``: from the scenario's seed, the same every run.
        self.ids = IdFactory(f"{scenario.seed_or(seed)}:scenario")
        self.receiver: WebhookReceiver | None = None
        self.webhook_secret: str | None = None
        self.quiet = 0
        #: The rounds of the ``repeat`` steps running now (outermost first): (round, of).
        self.rounds: list[tuple[int, int]] = []
        #: Why the steps from here on are skipped: a ``control`` step was (against another
        #: server), and what the later steps expect is what it would have done.
        self.cut_short: str | None = None

    # --- the run ------------------------------------------------------------------------------

    def execute(self) -> None:
        start: datetime | None = None
        try:
            if self.session.emulator:
                start = self.session.now()
                self._open_receiver()
            self._vars()
            self._steps(self.scenario.steps, ("steps",))
        except _Stop:
            self.result.status = self.result.failure.status if self.result.failure else FAILED
        except (TransportError, Skip, TooLarge) as exc:
            self.result.status, self.result.message = ERROR, str(exc)
        except Exception as exc:  # noqa: BLE001 - one scenario's error never ends the run
            self.result.status, self.result.message = ERROR, unexpected(exc)
        if (
            self.result.status == PASSED
            and self.result.steps
            and all(s.status == SKIPPED for s in self.result.steps)
        ):
            self.result.status = SKIPPED
        if start is not None and self.result.status != ERROR:
            try:
                end = self.session.now()
                self.result.sandbox_seconds = (end - start).total_seconds()
            except TransportError:
                pass

    def _vars(self) -> None:
        """The file's ``vars``; one needing what the target does not provide (a seeded
        identity variable against another server) skips the steps that use it."""
        self.vars.update(self.scenario.row)
        # The others may use the row's values and each other (the loader refused a circle).
        definitions = own_vars(self.scenario.document)
        for name in dependency_order(definitions):
            try:
                self.vars[name] = render(definitions[name], self.lookup, KEEP)
            except Skip as skip:
                self.unbound[name] = str(skip)

    def close(self) -> None:
        if self.receiver is not None:
            self.receiver.close()
        self.session.close()

    def _open_receiver(self) -> None:
        config = self.scenario.document.get("webhooks")
        wants = (
            config is not None
            or _uses_webhooks(self.scenario.steps)
            or self._uses_receiver_variables()
        )
        if not wants:
            return
        config = config or {}
        self.receiver = WebhookReceiver()
        self.receiver.answer(list(config.get("answers", [])))
        body: dict[str, Any] = {"url": self.receiver.url, "description": "scenario receiver"}
        if "eventTypes" in config:
            body["eventTypes"] = config["eventTypes"]
        if "org" in config:
            body["orgId"] = render(config["org"], self.lookup)
        endpoint = self.session.control_json("POST", CONTROL_PREFIX + "/webhooks/endpoints", body)
        self.webhook_secret = endpoint["secret"]
        self.vars.update(
            webhook_url=self.receiver.url,
            webhook_secret=endpoint["secret"],
            webhook_endpoint_id=endpoint["id"],
        )

    def _uses_receiver_variables(self) -> bool:
        """Whether the file names ``${webhook_url}`` or another receiver variable it does not
        define itself: without a receiver those steps were skipped, and a run of nothing
        but skipped steps passed."""
        own = set(own_vars(self.scenario.document)) | set(self.scenario.row)
        used = {name for name, _ in references(self.scenario.document)}
        return any(name in used and name not in own for name in RECEIVER_VARIABLES)

    def _steps(self, steps: list[dict[str, Any]], at: DocPath) -> None:
        for index, step in enumerate(steps):
            path = at + (index,)
            if "repeat" in step:
                self._repeat(step, path)
            else:
                self._step(step, path)

    def _repeat(self, step: dict[str, Any], path: DocPath) -> None:
        spec = step["repeat"]
        record = self._record(step, path, "repeat")
        self.quiet += 1
        try:
            for round_ in range(spec["times"]):
                if "as" in spec:
                    self.vars[spec["as"]] = round_
                self.rounds.append((round_ + 1, spec["times"]))
                try:
                    self._steps(spec["steps"], path + ("repeat", "steps"))
                finally:
                    self.rounds.pop()
        finally:
            self.quiet -= 1
        record.message = f"{spec['times']} rounds"
        self._keep(record)

    def _record(self, step: dict[str, Any], path: DocPath, kind: str) -> StepResult:
        # A step inside a repeat says which round it was in (its path is every round's).
        rounds = "".join(f" (round {n} of {of})" for n, of in self.rounds)
        return StepResult(
            index=dotted(path),
            kind=kind,
            name=str(step.get("name") or _default_name(step, kind)) + rounds,
            status=PASSED,
            line=self.scenario.lines.of(path),
        )

    def _keep(self, record: StepResult) -> None:
        if not self.quiet or record.status != PASSED:
            self.result.steps.append(record)

    def _step(self, step: dict[str, Any], path: DocPath) -> None:
        kind = next(k for k in ("request", "control", "expect_webhook", "set") if k in step)
        record = self._record(step, path, kind)
        if self.cut_short is not None:
            record.status, record.message = SKIPPED, self.cut_short
            self._keep(record)
            return
        try:
            if kind == "set":
                for name, value in step["set"].items():
                    self.vars[name] = render(value, self.lookup, KEEP)
            elif kind == "expect_webhook":
                spec = self._expectation(step["expect_webhook"])
                record.expectation = plain(spec)
                self._expect_webhook(spec)
            else:
                request, response, root = (
                    self._request(step["request"])
                    if kind == "request"
                    else self._control(step["control"])
                )
                record.request, record.response = request.to_json(), response.to_json()
                expect = self._expectation(step.get("expect", {}))
                record.expectation = plain(expect) or None
                self._expect(expect, request, response, root, control=kind == "control")
                self._save(step.get("save", {}), response)
        except Skip as skip:
            record.status, record.message = SKIPPED, str(skip)
            for name in _saves(step):
                self.unbound[name] = str(skip)
            if kind == "control":
                self.cut_short = (
                    f"follows the skipped control step {record.index}: what it would have "
                    "done is what this step expects"
                )
        except StepFailed as failed:
            record.status, record.message = FAILED, failed.message
            if failed.request is not None:
                record.request = failed.request.to_json()
            if failed.response is not None:
                record.response = failed.response.to_json()
            if failed.expectation is not None:
                record.expectation = failed.expectation
            self.result.steps.append(record)
            raise _Stop from None
        except (TransportError, StepError, TooLarge) as exc:
            record.status, record.message = ERROR, str(exc)
            self.result.steps.append(record)
            raise _Stop from None
        except ValidationFailed as exc:
            record.status, record.message = FAILED, exc.message
            self.result.steps.append(record)
            raise _Stop from None
        except UnboundVariable as exc:
            record.status, record.message = FAILED, f"${{{exc.name}}} has no value here"
            self.result.steps.append(record)
            raise _Stop from None
        except Exception as exc:  # noqa: BLE001 - a step's error ends its scenario, not the run
            record.status, record.message = ERROR, unexpected(exc)
            self.result.steps.append(record)
            raise _Stop from None
        self._keep(record)

    def _expectation(self, spec: dict[str, Any]) -> dict[str, Any]:
        """``spec`` rendered, what variables wrote into its expected values as data; a matcher
        whose argument came out wrong (``$gte`` of a saved text) is the step's error."""
        matched = EXPECTED + EXPECTED_BY_NAME
        rendered = {
            k: render(v, self.lookup, EXPECT if k in matched else PLAIN) for k, v in spec.items()
        }
        for value, at in expectations(rendered):
            for where, problem in argument_problems(value, at):
                raise StepError(f"{dotted(where)}: {problem}")
        return rendered

    # --- variables ----------------------------------------------------------------------------

    def lookup(self, name: str) -> Any:
        if name in self.unbound:
            raise Skip(f"needs ${{{name}}}: {self.unbound[name]}")
        if name in self.vars:
            return self.vars[name]
        if name == "now":
            return isoformat(self.session.now())
        if name == "now_unix":
            return int(self.session.now().timestamp())
        if name == "uuid":
            return str(uuid.UUID(hex=self.ids.object_id() + self.ids.object_id()[:8], version=4))
        if name == "random_hex":
            return self.ids.object_id()
        if name in PROVIDED:
            raise Skip(f"the target does not provide ${{{name}}}")
        raise UnboundVariable(name)

    # --- requests -----------------------------------------------------------------------------

    def _request(self, raw: dict[str, Any]) -> tuple[HttpRequest, HttpResponse, str]:
        spec = render(raw, self.lookup)
        root = spec.get("root", "base_url")
        if root in self.session.missing_roots:
            raise Skip(f"{root} is not known for this target (give --root {root}=URL)")
        path = as_text(spec["path"])
        url = path if root == "url" else str(plain(self.lookup(root))) + path
        if spec.get("query"):
            url += ("&" if "?" in url else "?") + _encoded(spec["query"])
        headers: dict[str, str] = {}
        auth = spec.get("auth", "token" if root == "base_url" else "none")
        if isinstance(auth, dict) and "basic" in auth:
            pair = f"{as_text(auth['basic']['username'])}:{as_text(auth['basic']['password'])}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif isinstance(auth, dict):
            headers["Authorization"] = f"Bearer {auth['bearer']}"
        elif auth != "none":
            headers["Authorization"] = f"Bearer {as_text(plain(self.lookup(auth)))}"
        body: bytes | None = None
        if "json" in spec:
            body = json.dumps(spec["json"]).encode()
            headers["Content-Type"] = "application/json"
        elif "form" in spec:
            body = _encoded(spec["form"]).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif "raw" in spec:
            body = as_text(spec["raw"]).encode()
        elif "raw_base64" in spec:
            try:
                body = base64_body(as_text(spec["raw_base64"]))
            except ValueError as exc:
                raise StepError(str(exc)) from None
        headers.update({str(k): as_text(v) for k, v in spec.get("headers", {}).items()})
        for name, value in headers.items():
            problem = header_problem(name, value)
            if problem:
                raise StepError(problem)
        request = HttpRequest(spec.get("method", "GET"), url, headers, body)
        return request, self.session.transport.send(request), root

    def _control(self, raw: dict[str, Any]) -> tuple[HttpRequest, HttpResponse, str]:
        if not self.session.emulator:
            raise Skip(EMULATOR_ONLY)
        spec = render(raw, self.lookup)
        name = spec.pop("action")
        if name == "receiver":
            return self._receiver_action(spec)
        action = ACTIONS[name]
        path, rest = action.route(spec)
        in_query = {arg: rest.pop(arg) for arg in list(rest) if action.in_query(arg)}
        query = _encoded(in_query) if in_query else ""
        request, response = self.session.control(action.method, path, rest, query)
        return request, response, "control"

    def _receiver_action(self, spec: dict[str, Any]) -> tuple[HttpRequest, HttpResponse, str]:
        if self.receiver is None:
            raise StepFailed("the scenario has no webhook receiver (add `webhooks:`)")
        answers = spec.get("answers", [])
        problem = answers_problem(answers)
        if problem:
            raise StepError(problem)
        self.receiver.answer(answers)
        request = HttpRequest("SET", self.receiver.url, {}, json.dumps(spec).encode())
        return request, HttpResponse(200, {}, b"{}"), "receiver"

    # --- expectations -------------------------------------------------------------------------

    def _expect(
        self,
        expect: dict[str, Any],
        request: HttpRequest,
        response: HttpResponse,
        root: str,
        control: bool = False,
    ) -> None:
        problems: list[str] = []
        if "status" in expect:
            wanted = expect["status"] if isinstance(expect["status"], list) else [expect["status"]]
            if response.status not in wanted:
                shown = wanted[0] if len(wanted) == 1 else wanted
                problems.append(f"status: expected {shown}, got {response.status}")
        elif control and response.status >= 300:
            problems.append(f"status: expected 2xx, got {response.status}")
        for name, want in expect.get("headers", {}).items():
            got = response.header(name)
            problems += match(want, MISSING if got is None else got, f"headers.{name}")
        body = response.json()
        if "json" in expect:
            problems += match(expect["json"], MISSING if body is None else body, "body")
        for path, want in expect.get("paths", {}).items():
            problems += match(want, self._pick(response, path), path)
        if "body_contains" in expect:
            text = response.body.decode("utf-8", "replace")
            if expect["body_contains"] not in text:
                problems.append(f"body does not contain {expect['body_contains']!r}")
        if expect.get("schema"):
            problems += self._schema(request, response, root)
        if problems:
            raise StepFailed("; ".join(problems), request, response, plain(expect))

    def _schema(self, request: HttpRequest, response: HttpResponse, root: str) -> list[str]:
        contracts = SCHEMA_CONTRACTS.get(root)
        if contracts is None:
            roots = ", ".join("{" + r + "}" for r in SCHEMA_CONTRACTS)
            return [f"schema: only responses of {roots} are in the contracts"]
        contract = contracts()
        base = urlsplit(str(plain(self.vars[root]))).path.rstrip("/")
        path = urlsplit(request.url).path[len(base) :] or "/"
        found = contract.find(request.method, path)
        if found is None:
            return [f"schema: no contract operation for {request.method} {path}"]
        violations = contract.validate_response(
            found[0],
            response.status,
            response.headers,
            response.header("Content-Type"),
            response.body,
        )
        return [f"schema: {v.location}: {v.message} ({v.schema_path})" for v in violations]

    @staticmethod
    def _pick(response: HttpResponse, path: str) -> Any:
        problem = pick_problem(path)
        if problem:
            raise StepError(problem)
        return pick(response, path)

    def _save(self, saves: dict[str, str], response: HttpResponse) -> None:
        for name, path in saves.items():
            value = self._pick(response, path)
            if value is MISSING:
                raise StepFailed(f"save {name}: {path} is not in the response", None, response)
            self.vars[name] = Verbatim(value)  # response data, never a matcher

    # --- webhooks -----------------------------------------------------------------------------

    def _expect_webhook(self, spec: dict[str, Any]) -> None:
        if not self.session.emulator:
            raise Skip(EMULATOR_ONLY)
        assert self.receiver is not None
        if "type" in spec and (problem := event_type_problem(spec["type"])):
            raise StepFailed(problem, expectation=plain(spec))  # a variable's value
        within = parse_duration(spec.get("within", 0), "within")
        count = int(spec.get("count", 1))
        deadline = self.session.now() + within
        if spec.get("none"):
            self._advance_to(deadline)
            self._wait_remote(lambda: False)
            found = self._matching(spec)
            if found:
                raise StepFailed(
                    f"expected no {spec.get('type', 'event')} within {within}, "
                    f"{len(found)} arrived: {found[0].body[:300]!r}",
                    expectation=plain(spec),
                )
            return
        while True:
            self._wait_remote(lambda: len(self._matching(spec)) >= count)
            found = self._matching(spec)
            if len(found) >= count:
                break
            now = self.session.now()
            due = [d for d in self.session.scheduled() if d <= deadline]
            if due and due[0] <= now:
                self.session.control_json("POST", CONTROL_PREFIX + "/clock/run-due")
                if len(self._matching(spec)) < count:
                    self.session.control_json("POST", CONTROL_PREFIX + "/webhooks/flush")
                if self.session.now() == now and len(self._matching(spec)) < count:
                    # Read again: what ran may have scheduled more before the deadline (a
                    # failed delivery's retry), which the list read before does not hold.
                    due = [d for d in self.session.scheduled() if now < d <= deadline]
                else:
                    continue
            if not due:
                if now < deadline:
                    self._advance_to(deadline)
                    continue
                arrived = [d.envelope() for d in self.receiver.received()]
                raise StepFailed(
                    f"{count} x {spec.get('type', 'event')} not delivered within {within} "
                    f"of sandbox time ({len(found)} matched; the receiver got "
                    f"{[a.get('type') if isinstance(a, dict) else a for a in arrived]})"
                    + _nearest_data(spec, arrived),
                    expectation=plain(spec),
                )
            self._advance_to(due[0])
        now = self.session.now()
        for delivery in found[:count]:
            self._check_signature(delivery, now, spec)
            delivery.claimed = True
        for name, path in spec.get("save", {}).items():
            problem = check_path(as_text(path))
            if problem:
                raise StepError(problem)
            value = resolve(found[0].envelope(), path)
            if value is MISSING:
                raise StepFailed(
                    f"save {name}: {path} is not in the event", expectation=plain(spec)
                )
            self.vars[name] = Verbatim(value)  # event data, never a matcher

    def _advance_to(self, instant: datetime) -> None:
        delta = instant - self.session.now()
        if delta > timedelta(0):
            seconds = delta.total_seconds()
            self.session.control_json(
                "POST", CONTROL_PREFIX + "/clock/advance", {"seconds": seconds}
            )

    def _wait_remote(self, done: Callable[[], bool]) -> None:
        """An emulator whose clock flows sends from its background senders: give it a moment."""
        if self.session.frozen:
            return
        give_up = monotonic() + REMOTE_WEBHOOK_WAIT
        while not done() and monotonic() < give_up:
            time.sleep(0.05)

    def _matching(self, spec: dict[str, Any]) -> list[Delivery]:
        assert self.receiver is not None
        found = []
        for delivery in self.receiver.received():
            envelope = delivery.envelope()
            if delivery.claimed or not isinstance(envelope, dict):
                continue
            if "type" in spec and envelope.get("type") != spec["type"]:
                continue
            if "data" in spec and match(spec["data"], envelope.get("data", MISSING), "data"):
                continue
            found.append(delivery)
        return found

    def _check_signature(self, delivery: Delivery, now: datetime, spec: dict[str, Any]) -> None:
        assert self.webhook_secret is not None
        header = next(
            (v for k, v in delivery.headers.items() if k.lower() == SIGNATURE_HEADER.lower()),
            None,
        )
        checked = verify(header, delivery.body, self.webhook_secret, now=now, tolerance=None)
        if not checked.valid:
            raise StepFailed(f"webhook signature: {checked.message}", expectation=plain(spec))
        if checked.timestamp is not None and checked.timestamp > now.timestamp() + 1:
            raise StepFailed(
                f"webhook signature time {checked.timestamp} is after the sandbox clock",
                expectation=plain(spec),
            )


def _encoded(fields: dict[str, Any]) -> str:
    """A query or form, URL-encoded: a list is a field repeated (``?status=a&status=b``),
    once per value, in order."""
    pairs = {
        name: [as_text(v) for v in value] if isinstance(value, list) else as_text(value)
        for name, value in fields.items()
    }
    return urlencode(pairs, doseq=True)


def unexpected(exc: Exception) -> str:
    """A step's or scenario's unforeseen error as its message (the run goes on)."""
    return f"{type(exc).__name__}: {exc}"


def _saves(step: dict[str, Any]) -> list[str]:
    names = list(step.get("save", {})) + list(step.get("set", {}))
    return names + list(step.get("expect_webhook", {}).get("save", {}))


def _nearest_data(spec: dict[str, Any], arrived: list[Any]) -> str:
    """Why the last event of the expected type that arrived did not match ``data`` (a list
    of types alone left the reader to guess what differed), or nothing."""
    if "data" not in spec:
        return ""
    same = [a for a in arrived if isinstance(a, dict) and a.get("type") == spec.get("type")]
    if not same:
        return ""
    problems = match(spec["data"], same[-1].get("data", MISSING), "data")
    if not problems:  # it matched: too few of them arrived
        return ""
    return f"; the last {spec.get('type', 'event')} differs: " + "; ".join(problems[:3])


def _uses_webhooks(steps: list[dict[str, Any]]) -> bool:
    for step in steps:
        if "expect_webhook" in step:
            return True
        if "repeat" in step and _uses_webhooks(step["repeat"]["steps"]):
            return True
    return False


def _default_name(step: dict[str, Any], kind: str) -> str:
    if kind == "request":
        request = step["request"]
        return f"{request.get('method', 'GET')} {request['path']}"
    if kind == "control":
        return f"control {step['control']['action']}"
    if kind == "expect_webhook":
        spec = step["expect_webhook"]
        prefix = "no " if spec.get("none") else ""
        return f"webhook {prefix}{spec.get('type', 'event')}"
    return kind
