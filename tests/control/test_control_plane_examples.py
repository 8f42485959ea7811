"""Every example of docs/control-plane.md runs against a served sandbox and answers as shown.

How the doc is read:

* Each heading starts a section; before a section runs, the sandbox is reset (frozen clock at
  2026-01-01T00:00:00Z, seed 1) and the setups it names run. A setup is named by an HTML
  comment ``<!-- example-setup: NAME -->``; one under a ``##`` heading applies to every
  section below it until the next ``##``.
* Every ``curl`` of a ```sh block is sent (``-X``, ``-H``, ``-d``/``--data``, ``> file``,
  ``@file``; a ``| ...`` pipe is left out) and must answer 2xx.
* A ```json block right after a ```sh block is the answer of its last ``curl``, as a pattern:
  ``"…"`` matches any value, a string with ``…`` matches around it (``"svc_test_…"``), a
  ``"…"`` key allows more keys, a ``"…"`` list item allows more items.
* ``<org id>``, ``<session id>``, ... are the ids the setups made (``PLACEHOLDERS``).
"""

from __future__ import annotations

import json
import re
import shlex
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from svc_sandbox.pytest_plugin import RunningServer

DOC = Path(__file__).parents[2] / "docs" / "control-plane.md"
DOC_ORIGIN = "http://127.0.0.1:8700"
ANY = "…"
SETUP = re.compile(r"<!--\s*example-setup:\s*([\w-]+)\s*-->")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.M | re.S)


# --- reading the doc ------------------------------------------------------------------------------


@dataclass
class Example:
    commands: list[str]
    expected: Any = None


@dataclass
class Section:
    title: str
    setups: list[str] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)


def sections(text: str) -> list[Section]:
    found: list[Section] = []
    chapter_setups: list[str] = []
    for block in re.split(r"^(?=#{1,3} )", text, flags=re.M):
        title = block.splitlines()[0] if block.strip() else ""
        own = SETUP.findall(block.split("```", 1)[0]) + SETUP.findall(block)
        own = list(dict.fromkeys(own))
        if title.startswith("## "):
            chapter_setups = own
        section = Section(title, list(dict.fromkeys(chapter_setups + own)))
        previous_end = 0
        previous: Example | None = None
        for fence in FENCE.finditer(block):
            language, body = fence.group(1), fence.group(2)
            between = block[previous_end : fence.start()]
            if language == "sh":
                previous = Example(commands(body))
                section.examples.append(previous)
            elif language == "json":
                assert previous is not None and not between.strip(), (
                    f"{title}: a json example must follow the sh example it answers"
                )
                previous.expected = json.loads(body)
                previous = None
            previous_end = fence.end()
        found.append(section)
    return found


def commands(script: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", script)
    return [line.strip() for line in joined.splitlines() if line.strip().startswith("curl")]


# --- running it -----------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Runner:
    def __init__(self, server: RunningServer) -> None:
        self.origin = server.url
        self.files: dict[str, bytes] = {}
        self.values: dict[str, str] = {}

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        answer = self.send(method, self.origin + path, headers, data)
        assert answer.status < 300, (method, path, answer.status, answer.body)
        return answer.json()

    def send(self, method: str, url: str, headers: dict[str, str], data: bytes | None) -> Answer:
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return Answer(response.status, response.read())
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.read())

    def fill(self, text: str) -> str:
        text = text.replace(DOC_ORIGIN, self.origin)
        for placeholder, value in self.values.items():
            text = text.replace(placeholder, value)
        leftover = re.findall(r"<[a-z][a-z ]*>", text)
        assert not leftover, f"no setup gave {leftover} in {text}"
        return text

    def curl(self, command: str) -> Answer:
        """Sends one curl command line; a trailing ``# 400`` states the status it answers
        (2xx otherwise)."""
        stated = re.search(r"#\s*(\d{3})\s*$", command)
        words = shlex.split(self.fill(command), comments=True)
        if "|" in words:
            words = words[: words.index("|")]
        output = None
        if ">" in words:
            output = words[words.index(">") + 1]
            words = words[: words.index(">")]
        method, headers, data, url = "GET", {}, None, ""
        rest = iter(words[1:])
        for word in rest:
            if word == "-X":
                method = next(rest)
            elif word == "-H":
                name, value = next(rest).split(":", 1)
                headers[name.strip()] = value.strip()
            elif word in ("-d", "--data"):
                raw = next(rest)
                data = self.files[raw[1:]] if raw.startswith("@") else raw.encode()
                method = "POST" if method == "GET" else method
            elif word.startswith("http"):
                url = word
            else:
                assert word == "-s", f"unknown curl option {word} in {command}"
        answer = self.send(method, url, headers, data)
        if stated:
            assert answer.status == int(stated.group(1)), (command, answer.status, answer.body)
        else:
            assert 200 <= answer.status < 300, (command, answer.status, answer.body)
        if output is not None:
            self.files[output] = answer.body
        return answer


def matches(expected: Any, actual: Any, where: str = "$") -> Iterator[str]:
    """Where ``actual`` differs from the doc's pattern ``expected`` (nothing: it matches)."""
    if expected == ANY:
        return
    if isinstance(expected, str) and ANY in expected and isinstance(actual, str):
        head, tail = expected.split(ANY, 1)
        if not (actual.startswith(head) and actual.endswith(tail.split(ANY)[-1])):
            yield f"{where}: {actual!r} is not {expected!r}"
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            yield f"{where}: {actual!r} is not an object"
            return
        open_ended = expected.get(ANY) == ANY or expected.get("...") == "..."
        for key, value in expected.items():
            if key in (ANY, "..."):
                continue
            if key not in actual:
                yield f"{where}.{key}: missing"
            else:
                yield from matches(value, actual[key], f"{where}.{key}")
        extra = set(actual) - set(expected)
        if extra and not open_ended:
            yield f"{where}: keys not in the doc {sorted(extra)}"
        return
    if isinstance(expected, list):
        if not isinstance(actual, list):
            yield f"{where}: {actual!r} is not a list"
            return
        open_ended = bool(expected) and expected[-1] == ANY
        shown = expected[:-1] if open_ended else expected
        if len(actual) < len(shown) or (not open_ended and len(actual) != len(shown)):
            yield f"{where}: {len(actual)} items, the doc shows {len(shown)}"
            return
        for i, (want, got) in enumerate(zip(shown, actual, strict=False)):
            yield from matches(want, got, f"{where}[{i}]")
        return
    if expected != actual:
        yield f"{where}: {actual!r}, the doc shows {expected!r}"


# --- setups: what the examples need, made as a client would ---------------------------------------


def seeded(run: Runner) -> None:
    info = run.call("GET", "/_sandbox")
    for org in info["organizations"]:
        prefix = "<org id>" if org["environment"] == "sandbox" else "<production org id>"
        run.values[prefix] = org["id"]
        run.values["<token>" if org["environment"] == "sandbox" else "<live token>"] = org[
            "tokens"
        ][0]["token"]


def product(run: Runner, token: str, **fields: Any) -> dict[str, Any]:
    body = {"title": "Book", "pricingModel": "fixed", "price": {"amount": 5000}}
    body.update(status="published", **fields)
    created: dict[str, Any] = run.call("POST", "/api/products", body, token)["product"]
    return created


def checkout_sessions(run: Runner) -> None:
    """Two sandbox sessions whose prompt waits on the simulator, and a payment link."""
    token = run.values["<token>"]
    book = product(run, token)
    run.values["<product token>"] = book["checkoutToken"]
    buyer = {"email": "buyer@example.com", "phone": "0911223344"}
    for name in ("<session id>", "<another session id>"):
        body = {"productId": book["_id"], "gateway": "telebirr", "customer": buyer}
        run.values[name] = run.call("POST", "/api/checkout", body, token)["sessionId"]
    session = run.call("GET", f"/_sandbox/checkout/sessions/{run.values['<session id>']}")
    run.values["<attempt id>"] = session["attempts"][0]["id"]
    org = run.values["<org id>"]
    link = run.call("POST", f"/_sandbox/orgs/{org}/checkout-links", {"productIds": [book["_id"]]})
    run.values["<link id>"] = link["id"]
    size = {"label": "Size", "type": "select", "options": ["S", "M"]}
    run.values["<field id>"] = run.call("POST", f"/_sandbox/orgs/{org}/checkout-fields", size)["id"]


def webhooks(run: Runner) -> None:
    """An endpoint nobody listens at and an event it takes."""
    endpoint = run.call("POST", "/_sandbox/webhooks/endpoints", {"url": "http://127.0.0.1:9/hooks"})
    run.values["<endpoint id>"] = endpoint["id"]
    event = run.call("POST", "/_sandbox/events/trigger", {"type": "order.completed"})["event"]
    run.values["<event id>"] = event["id"]


def withdrawals(run: Runner) -> None:
    """Production earnings of 40,000.00 ETB and two withdrawals waiting for review."""
    token = run.values["<live token>"]
    big = product(run, token, price={"amount": 4_000_000})
    buyer = {"email": "buyer@example.com", "phone": "0911223344"}
    body = {"productId": big["_id"], "gateway": "telebirr", "customer": buyer}
    run.call("POST", "/api/checkout", body, token)
    run.call("POST", "/_sandbox/clock/advance", {"seconds": 10})
    for name in ("<withdrawal id>", "<another withdrawal id>"):
        payout = {"amount": 1_500_000, "gateway": "telebirr", "account": "0911223344"}
        run.values[name] = run.call("POST", "/api/withdrawals", payout, token)["_id"]


def identity(run: Runner) -> None:
    """The seeded user abebe and the seeded confidential app."""
    info = run.call("GET", "/_sandbox")["identity"]
    run.values["<user id>"] = info["users"][0]["id"]
    apps = info["apps"]
    run.values["<client id>"] = next(
        a["clientId"] for a in apps if a["clientType"] == "confidential"
    )


SETUPS: dict[str, Callable[[Runner], None]] = {
    "identity": identity,
    "checkout-sessions": checkout_sessions,
    "webhooks": webhooks,
    "withdrawals": withdrawals,
}

SECTIONS = [s for s in sections(DOC.read_text()) if s.examples]


def test_the_doc_has_examples_to_run() -> None:
    assert len(SECTIONS) > 20
    assert sum(e.expected is not None for s in SECTIONS for e in s.examples) > 10


@pytest.mark.parametrize("section", SECTIONS, ids=[s.title.lstrip("# ") for s in SECTIONS])
def test_every_example_answers_as_documented(svc_server: RunningServer, section: Section) -> None:
    run = Runner(svc_server)
    run.call("POST", "/_sandbox/reset")
    seeded(run)
    for name in section.setups:
        SETUPS[name](run)
    for example in section.examples:
        answer = None
        for command in example.commands:
            answer = run.curl(command)
        if example.expected is not None:
            assert answer is not None
            expected = json.loads(run.fill(json.dumps(example.expected, ensure_ascii=False)))
            assert list(matches(expected, answer.json())) == []
