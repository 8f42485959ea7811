"""The schemathesis run shared by the test suite and ``svc-sandbox contract test``.

One place says which checks run, with which expected statuses and why, how many examples,
and which seed, so that the emulator's self-check and the contract test of another server
are the same test. schemathesis is imported lazily: it is needed only to run the checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import schemathesis

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


POSITIVE_ALLOWANCES = (
    Allowance(
        "createProduct",
        ("400",),
        "a pwyw price.defaultAmount below price.minimumAmount is refused (two fields compared)",
    ),
    Allowance(
        "updateProduct",
        ("400", "422"),
        "locked pricingModel/price.type changes answer 422, and price.amount on a pwyw or free "
        "product or a defaultAmount below the minimum answer 400: both depend on the stored "
        "product",
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
) -> dict[str, Any]:
    """The schemathesis configuration (the dictionary form of its TOML file)."""
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
    if token:
        config["auth"] = {"openapi": {"bearer": {"bearer": token}}}
    if base_url:
        config["base-url"] = base_url
    return config


def load_config(**kwargs: Any) -> schemathesis.Config:
    import schemathesis

    return schemathesis.Config.from_dict(config_dict(**kwargs))
