"""The scenario schema ships in the package as a copy of contracts/scenario.schema.json."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

from svc_sandbox.scenarios.loader import schema

REPO_COPY = Path(__file__).resolve().parents[2] / "contracts" / "scenario.schema.json"


def test_the_package_copy_equals_the_repository_copy() -> None:
    assert schema() == json.loads(REPO_COPY.read_text("utf-8"))


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(schema())
