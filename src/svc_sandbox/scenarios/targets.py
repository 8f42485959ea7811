"""Where a scenario runs: a fresh in-process Sandbox, a running emulator, or another server.

Each target gives the transport, the variables it provides (credentials, roots) and the
sandbox clock; only emulators run ``control`` and ``expect_webhook`` steps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from urllib.parse import urlsplit

from pydantic import ValidationError

from svc_sandbox.core.clock import parse_instant, wall_now
from svc_sandbox.core.errors import SandboxError
from svc_sandbox.scenarios.actions import CONTROL_PREFIX
from svc_sandbox.scenarios.model import Scenario
from svc_sandbox.scenarios.transport import (
    HttpRequest,
    HttpResponse,
    HttpTransport,
    Transport,
    TransportError,
    WsgiTransport,
)

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


class Unsupported(Exception):
    """The target cannot give a scenario what it needs (its settings, a frozen clock): the
    scenario is skipped with this reason rather than failed for the wrong one."""


class Target(Protocol):
    #: Runs control-plane steps and webhook expectations (False for another server).
    emulator: bool
    description: str

    def open(self, scenario: Scenario, seed: int | None) -> Session: ...


@dataclass
class Session:
    """One scenario's connection to its target."""

    transport: Transport
    emulator: bool
    origin: str
    provided: dict[str, Any] = field(default_factory=dict)
    #: Steps of these roots are skipped (another server that was not told where they are).
    missing_roots: set[str] = field(default_factory=set)
    #: The target's clock moves only when told (deliveries happen inside the control call).
    frozen: bool = True
    closer: Any = None

    def control(
        self, method: str, path: str, body: Any = None, query: str = ""
    ) -> tuple[HttpRequest, HttpResponse]:
        """One control-plane call; mutations always carry a JSON body (``{}`` when empty)."""
        url = self.origin + path + (f"?{query}" if query else "")
        data = None
        if method != "GET":
            data = json.dumps({} if body is None else body).encode()
        request = HttpRequest(method, url, dict(JSON_HEADERS), data)
        return request, self.transport.send(request)

    def control_json(self, method: str, path: str, body: Any = None) -> Any:
        request, response = self.control(method, path, body)
        if response.status >= 400:
            raise TransportError(
                f"{method} {path} answered {response.status}: {response.body[:300]!r}"
            )
        return response.json()

    def now(self) -> datetime:
        if not self.emulator:
            return wall_now()
        clock = self.control_json("GET", CONTROL_PREFIX + "/clock")
        return parse_instant(clock["clock"]["now"])

    def scheduled(self) -> list[datetime]:
        clock = self.control_json("GET", CONTROL_PREFIX + "/clock")
        return sorted(parse_instant(e["due"]) for e in clock["scheduled"])

    def close(self) -> None:
        if self.closer is not None:
            self.closer()


def provided_by_emulator(info: dict[str, Any]) -> dict[str, Any]:
    """Variables from ``GET /_sandbox``: the seeded organizations' ids and tokens, the roots."""
    values: dict[str, Any] = dict(info["roots"])
    values["seed"] = info["seed"]
    for org in info["organizations"]:
        prefix = "" if org["environment"] == "sandbox" else "production_"
        if prefix + "org_id" in values:
            continue
        values[prefix + "org_id"] = org["id"]
        live = [t["token"] for t in org["tokens"] if t["usable"]]
        if live:
            values[prefix + "token"] = live[0]
    identity = info.get("identity")
    if identity:
        values.update(seeded_identity(identity))
    return values


def seeded_identity(identity: dict[str, Any]) -> dict[str, Any]:
    """The seeded apps (the confidential one's secret and first redirect URI, the public one's
    client id) and ``user_ids`` (handle -> id), from ``GET /_sandbox``'s ``identity``."""
    values: dict[str, Any] = {"user_ids": {u["handle"]: u["id"] for u in identity["users"]}}
    for app in identity["apps"]:
        if app["clientType"] == "confidential" and "client_id" not in values:
            values.update(
                client_id=app["clientId"],
                client_secret=app["clientSecret"],
                redirect_uri=app["redirectUris"][0],
            )
        elif app["clientType"] == "public" and "public_client_id" not in values:
            values["public_client_id"] = app["clientId"]
    return values


class InProcessTarget:
    """A fresh frozen-clock Sandbox per scenario, with the scenario's seed (else the run's)."""

    emulator = True
    description = "in-process"

    def __init__(self, seed: int = 1, strict: bool = True) -> None:
        self.seed = seed
        self.strict = strict

    def open(self, scenario: Scenario, seed: int | None) -> Session:
        from svc_sandbox.app import create_app
        from svc_sandbox.sandbox import Sandbox

        document = scenario.document
        overrides: dict[str, Any] = dict(document.get("settings", {}))
        overrides.update(
            clock_mode="frozen",
            seed=scenario.seed_or(seed if seed is not None else self.seed),
            strict=self.strict,
        )
        if "clock" in document:
            overrides["clock_start"] = document["clock"]
        try:
            sandbox = Sandbox(**overrides)
        except (ValidationError, ValueError) as exc:
            raise scenario.lines.error(("settings",), f"settings: {exc}") from None
        except SandboxError as exc:  # what only the start finds, such as a triggers file
            raise scenario.lines.error(("settings",), f"settings: {exc.message}") from None
        transport = WsgiTransport(create_app(sandbox))
        session = Session(transport, True, sandbox.settings.origin, closer=sandbox.stop)
        session.provided = provided_by_emulator(sandbox.info())
        return session


class EmulatorTarget:
    """A running emulator (``--base-url``): reset before each scenario, driven over HTTP."""

    emulator = True

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        parts = urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.timeout = timeout
        self.description = f"emulator at {self.origin}"

    def open(self, scenario: Scenario, seed: int | None) -> Session:
        # A transport per scenario: its cookies are that scenario's browser.
        session = Session(HttpTransport(self.timeout), True, self.origin)
        unmet = self.unmet(scenario, session.control_json("GET", CONTROL_PREFIX))
        if unmet:
            raise Unsupported("; ".join(unmet))
        info = session.control_json("POST", CONTROL_PREFIX + "/reset")
        if "clock" in scenario.document and info["clock"]["mode"] == "frozen":
            session.control_json(
                "POST", CONTROL_PREFIX + "/clock/set", {"now": scenario.document["clock"]}
            )
        session.provided = provided_by_emulator(info)
        session.frozen = info["clock"]["mode"] == "frozen"
        return session

    def unmet(self, scenario: Scenario, info: dict[str, Any]) -> list[str]:
        """What the scenario needs that the emulator (its ``GET /_sandbox``) does not give:
        settings it runs with otherwise, a frozen clock for a scenario that sets ``clock``."""
        from svc_sandbox.settings import Settings

        here = f"the emulator at {self.origin}"
        wanted: dict[str, Any] = scenario.document.get("settings", {})
        # Both sides as the Settings model shows them (0.05 and "0.05" are one fee rate).
        shown = Settings.model_validate(wanted).shown()
        normal = {name: shown[name] for name in wanted}
        running: dict[str, Any] = dict(info.get("settings", {}))
        for name, root in info.get("roots", {}).items():
            if running.get(name) is None and name in running and normal.get(name) is not None:
                # A root left to follow the origin (null) is the one GET /_sandbox serves: a
                # recording names it by that value (recorded with exec's port).
                running[name] = root
        unmet = []
        for name, value in normal.items():
            if name not in running:
                unmet.append(f"needs settings {name}={_shown(value)}; {here} does not report it")
            elif running[name] != value:
                unmet.append(
                    f"needs settings {name}={_shown(value)}; {here} runs with "
                    f"{_shown(running[name])}"
                )
        mode = info["clock"]["mode"]
        if "clock" in scenario.document and mode != "frozen":
            unmet.append(
                f"needs a frozen clock (clock: {scenario.document['clock']}); {here} runs a "
                f"{mode} clock (start it with serve --clock frozen)"
            )
        return unmet


def _shown(value: Any) -> str:
    """A setting's value as a scenario file writes it (false, "1m,5m")."""
    return json.dumps(value)


class RealTarget:
    """Any server that speaks the contract: only ``request`` steps run."""

    emulator = False

    def __init__(
        self,
        base_url: str,
        token: str | None,
        roots: dict[str, str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.roots = {"base_url": base_url.rstrip("/"), **(roots or {})}
        self.token = token
        self.timeout = timeout
        self.description = f"server at {base_url}"

    def open(self, scenario: Scenario, seed: int | None) -> Session:
        # A scenario stating settings or a clock describes the emulator it needs (the rate
        # limit files state rate_limits: true because they count from a fresh budget);
        # another server cannot be set up, so such a scenario is skipped, with the reason.
        needs = [name for name in ("settings", "clock") if name in scenario.document]
        if needs:
            raise Unsupported(
                f"sets {' and '.join(needs)}: only an emulator can be set up; another server "
                "runs as it is"
            )
        parts = urlsplit(self.roots["base_url"])
        origin = f"{parts.scheme}://{parts.netloc}"
        session = Session(HttpTransport(self.timeout), False, origin)
        session.provided = dict(self.roots)
        if self.token:
            session.provided["token"] = self.token
        from svc_sandbox.settings import ROOT_DEFAULTS

        session.missing_roots = {r for r in ROOT_DEFAULTS if r not in self.roots}
        return session
