"""The contract documents shipped inside the package (a copy of the repository's contracts/)."""

from __future__ import annotations

import copy
import functools
from importlib import resources
from typing import Any

import yaml

COMMERCE = "commerce.openapi.yaml"
IDENTITY = "identity.openapi.yaml"


def contract_text(name: str = COMMERCE) -> str:
    """The document as shipped (YAML text)."""
    return resources.files("svc_sandbox").joinpath("contracts", name).read_text("utf-8")


@functools.cache
def _loaded(name: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(contract_text(name))
    return document


def load_contract(name: str = COMMERCE) -> dict[str, Any]:
    """A private copy of the parsed document (callers may change it)."""
    return copy.deepcopy(_loaded(name))


def shared_contract(name: str = COMMERCE) -> dict[str, Any]:
    """The parsed document shared by every validator: read it, never change it."""
    return _loaded(name)


def served_contract(base_url: str, name: str = COMMERCE) -> dict[str, Any]:
    """The document as an emulator serves it: its one server is the emulator's {base_url}."""
    document = load_contract(name)
    document["servers"] = [{"url": base_url, "description": "{base_url} of this emulator"}]
    return document
