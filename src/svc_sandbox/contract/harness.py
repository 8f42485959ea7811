"""The schemathesis run shared by the test suite and ``svc-sandbox contract test``.

One place says which checks run, with which expected statuses and why, how many examples,
and which seed, so that the emulator's self-check and the contract test of another server
are the same test. schemathesis is imported lazily: it is needed only to run the checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from svc_sandbox.contract.document import COMMERCE

if TYPE_CHECKING:
    import schemathesis

    from svc_sandbox.contract.validation import Contract

#: The checks of issue 6, every one enabled on every operation where it applies.
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "ignored_auth",
)

#: The default positive_data_acceptance statuses of schemathesis (2xx, 3xx, 401, 403, 404,
#: 409, 429, 5xx) plus, per operation, the refusals that schema-valid data can earn from a
#: rule JSON Schema cannot state. Each reason is also listed in docs/contract.md.
POSITIVE_BASE = ["2xx", "3xx", "401", "403", "404", "409", "429"]


@dataclass(frozen=True)
class Allowance:
    operation_id: str
    statuses: tuple[str, ...]
    reason: str


#: Refused although JSON Schema calls it valid, on every operation with an integer in its body.
INTEGRAL_FLOATS = (
    "an integral float (5000.0) where an integer is due is refused (400), though JSON Schema "
    "counts it as an integer"
)

POSITIVE_ALLOWANCES = (
    Allowance(
        "createProduct",
        ("400",),
        "a pwyw price.defaultAmount below price.minimumAmount is refused (two fields "
        f"compared); {INTEGRAL_FLOATS}; a media URL that fits the pattern but that Python's "
        "urlsplit cannot read (a bracketed host that is not an IP address) is refused",
    ),
    Allowance(
        "createCheckout",
        ("400",),
        "which customer fields are required depends on the shape and the mode (email except on "
        "a paid payment link, phone with a gateway), a pwyw amount must reach the stored "
        "minimum, and custom amounts, metadata and payment links need a token; "
        f"{INTEGRAL_FLOATS}; a successUrl that fits the pattern but that RFC 3986 or urlsplit "
        "still refuses (a bracketed host that is not an IP address) is refused",
    ),
    Allowance(
        "createWithdrawal",
        ("400", "422"),
        "§4 refuses with 400 a sandbox organization, Developer Mode off, KYC not approved or an "
        "amount above the earnings (organization state), and with withdrawal_key_reuse = reject "
        f"a reused Idempotency-Key with another body answers 422; {INTEGRAL_FLOATS}",
    ),
    Allowance(
        "sendFromWallet",
        ("400", "402"),
        "a schema-valid recipient may be the sender (400 self_transfer) and a valid amount may "
        "be more than the sender's wallet holds (402 insufficient_funds): both depend on who "
        f"sends and on stored balances; {INTEGRAL_FLOATS}",
    ),
    *(
        Allowance(
            operation,
            ("400",),
            "a form that fits the schema still names a code, token or client this provider "
            "never issued (RFC 6749 answers invalid_grant, invalid_request or an error page)",
        )
        for operation in (
            "authorize",
            "authorizePost",
            "token",
            "introspect",
            "revoke",
            "userinfo",
            "userinfoPost",
        )
    ),
    Allowance(
        "updateProduct",
        ("400", "422"),
        "locked pricingModel/price.type changes answer 422, and a price field the product's "
        "pricing model does not take (price.amount on a pwyw or free product but a free "
        "product's 0, price.minimumAmount or price.defaultAmount on a fixed or free one) or a "
        "defaultAmount below the minimum answer 400: both depend on the stored product; "
        f"{INTEGRAL_FLOATS}; a media URL as on createProduct",
    ),
)


def config_dict(
    *,
    token: str | None,
    max_examples: int = 25,
    seed: int = 1,
    base_url: str | None = None,
    stateful_steps: int = 10,
    skip_operations: tuple[str, ...] = (),
    schemes: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """The schemathesis configuration (the dictionary form of its TOML file). ``token`` is
    the commerce bearer; ``schemes`` gives every security scheme by name instead (the
    wallet's two factors: ``{"accessToken": {"bearer": ...}, "svcKey": {"api_key": ...}}``)."""
    checks: dict[str, Any] = {"enabled": False}
    for name in CHECKS:
        checks[name] = {"enabled": True}
    per_operation: list[dict[str, Any]] = [
        {
            "include-operation-id": allowance.operation_id,
            "checks": {
                "positive_data_acceptance": {
                    "expected-statuses": POSITIVE_BASE + list(allowance.statuses)
                }
            },
        }
        for allowance in POSITIVE_ALLOWANCES
    ]
    config: dict[str, Any] = {
        "seed": seed,
        "generation": {
            "max-examples": max_examples,
            "deterministic": True,
            "mode": "all",
            "allow-x00": False,
        },
        "checks": checks,
        "phases": {"stateful": {"max-steps": stateful_steps}},
        "operations": per_operation,
    }
    if skip_operations:
        # Turned off through the config: a loaded schema's own include() would be OR-ed
        # with the config's per-operation entries and select everything again.
        per_operation.append({"include-operation-id": list(skip_operations), "enabled": False})
    if schemes:
        config["auth"] = {"openapi": schemes}
    elif token:
        config["auth"] = {"openapi": {"bearer": {"bearer": token}}}
    if base_url:
        config["base-url"] = base_url
    return config


def load_config(**kwargs: Any) -> schemathesis.Config:
    import schemathesis

    return schemathesis.Config.from_dict(config_dict(**kwargs))


@dataclass
class CheckTally:
    passed: int = 0
    failed: int = 0


@dataclass
class Finding:
    operation: str
    check: str
    title: str
    message: str
    reproduce: str

    def to_json(self) -> dict[str, str]:
        return {
            "operation": self.operation,
            "check": self.check,
            "title": self.title,
            "message": self.message,
            "reproduce": self.reproduce,
        }


@dataclass
class RunResult:
    """What ``svc-sandbox contract test`` reports: per check, per operation, every finding."""

    base_url: str
    operations: set[str]
    checks: dict[str, CheckTally]
    findings: list[Finding]
    errors: list[str]
    seconds: float
    #: Operations of the contract the run left out, each with the reason (printed).
    not_tested: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.findings and not self.errors and bool(self.operations)

    def summary(self) -> str:
        lines = [f"Contract test of {self.base_url}: {len(self.operations)} operations tested"]
        for name in CHECKS:
            tally = self.checks.get(name, CheckTally())
            lines.append(f"  {name:<30} {tally.passed:>6} passed {tally.failed:>4} failed")
        unique: dict[tuple[str, str, str], Finding] = {}
        for finding in self.findings:
            unique.setdefault((finding.operation, finding.check, finding.title), finding)
        for finding in unique.values():
            lines.append(f"FAIL {finding.operation} [{finding.check}] {finding.title}")
            lines += ["    " + line for line in finding.message.splitlines()[:6]]
            lines.append("    " + finding.reproduce.splitlines()[0][:500])
        lines += [f"NOT TESTED {label}: {why}" for label, why in self.not_tested.items()]
        lines += [f"ERROR {error}" for error in dict.fromkeys(self.errors)]
        verdict = "PASSED" if self.ok else "FAILED"
        lines.append(
            f"{verdict}: {len(unique)} distinct failures, {len(self.errors)} errors "
            f"in {self.seconds:.1f}s"
        )
        return "\n".join(lines)


OWN_ROOT_REASON = (
    "{where}; the run's --base-url would replace that root (schemathesis's base URL overrides "
    "a path-level server) and test a URL that does not exist, so it is left out: pass "
    "--own-server-url (the emulator: its origin) to test it at its own root"
)


def own_root_operations(contract: Contract) -> dict[str, tuple[str, str]]:
    """Operations with their own ``servers`` entry (the payment-link attempt under
    ``{pay_url}``): operation id -> (label, why the run leaves it out)."""
    found: dict[str, tuple[str, str]] = {}
    for operation in contract.operations:
        if operation.own_server:
            item = contract.document["paths"][operation.path]
            servers = operation.definition.get("servers") or item.get("servers") or [{}]
            where = str(servers[0].get("description") or servers[0].get("url", "?"))
            found[operation.operation_id] = (
                operation.label,
                OWN_ROOT_REASON.format(where=where.rstrip(".")),
            )
    return found


def run_contract_test(
    base_url: str,
    *,
    token: str | None,
    contract: str = COMMERCE,
    schemes: dict[str, dict[str, str]] | None = None,
    max_examples: int = 25,
    seed: int = 1,
    stateful: bool = True,
    skip_operations: tuple[str, ...] = (),
    own_server_url: str | None = None,
) -> RunResult:
    """Runs the checks over HTTP against the server at ``base_url`` (the root of ``contract``
    on any implementation: {base_url}, {auth_url} or {wallet_base_url}), with the contract
    shipped in this package. ``schemes`` gives credentials by security scheme (see
    ``config_dict``); ``token`` alone is the commerce bearer. Operations with their own
    ``servers`` entry (``/`` for the payment-link attempt) run in a second pass against
    ``own_server_url``, what that entry stands for on the server under test (the emulator:
    its origin); without it they are left out and listed in ``not_tested``."""
    from svc_sandbox.contract.validation import shipped_contract
    from svc_sandbox.core.clock import monotonic

    shipped = shipped_contract(contract)
    elsewhere = own_root_operations(shipped)
    started = monotonic()
    result = RunResult(base_url, set(), {}, [], [], 0.0)
    passes = [(base_url, tuple(dict.fromkeys([*skip_operations, *elsewhere])), stateful)]
    if own_server_url is None:
        result.not_tested = dict(elsewhere.values())
    elif set(elsewhere) - set(skip_operations):
        # The second pass: only the operations under their own root (no links to follow).
        rest = [o.operation_id for o in shipped.operations if o.operation_id not in elsewhere]
        passes.append((own_server_url, tuple(dict.fromkeys([*skip_operations, *rest])), False))
    for url, skipped, with_links in passes:
        config = config_dict(
            token=token,
            max_examples=max_examples,
            seed=seed,
            base_url=url.rstrip("/"),
            skip_operations=skipped,
            schemes=schemes,
        )
        config["phases"]["stateful"]["enabled"] = with_links
        config["workers"] = 1
        _run_pass(contract, config, result)
    result.seconds = monotonic() - started
    return result


def _run_pass(contract: str, config: dict[str, Any], result: RunResult) -> None:
    """One schemathesis run of ``contract`` with ``config``, tallied into ``result``."""
    import schemathesis
    from schemathesis.engine import Status, events, from_schema

    from svc_sandbox.contract.document import load_contract

    schema = schemathesis.openapi.from_dict(
        load_contract(contract), config=schemathesis.Config.from_dict(config)
    )
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            if event.status == Status.SKIP:
                continue
            result.operations.update(
                node.value.operation.label for node in event.recorder.cases.values()
            )
            for case_id, nodes in event.recorder.checks.items():
                label = event.recorder.cases[case_id].value.operation.label
                for node in nodes:
                    tally = result.checks.setdefault(node.name, CheckTally())
                    if node.failure_info is None:
                        tally.passed += 1
                        continue
                    tally.failed += 1
                    failure = node.failure_info.failure
                    result.findings.append(
                        Finding(
                            label,
                            node.name,
                            failure.title,
                            failure.message,
                            node.failure_info.code_sample,
                        )
                    )
        elif isinstance(event, events.NonFatalError):
            result.errors.append(f"{event.label}: {event.info.title}: {event.info.message}")
        elif isinstance(event, events.FatalError):
            result.errors.append(f"fatal: {event.exception!r}")
