"""The contract documents shipped inside the package (a copy of the repository's contracts/).

Next to each YAML document the package ships a pre-parsed JSON copy (``*.openapi.json``) that
records the SHA-256 of the YAML it was made from: loading JSON takes a millisecond where the
pure-Python YAML parser takes a tenth of a second at every start. A copy that does not match
the YAML any more is never used (the YAML is parsed, with libyaml's C loader when present),
and a test keeps the shipped copy fresh. Regenerate it with
``python -m svc_sandbox.contract.document``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

COMMERCE = "commerce.openapi.yaml"
IDENTITY = "identity.openapi.yaml"
WALLET = "wallet.openapi.yaml"


def _file(name: str) -> Traversable:
    return resources.files("svc_sandbox").joinpath("contracts", name)


def contract_text(name: str = COMMERCE) -> str:
    """The document as shipped (YAML text)."""
    return _file(name).read_text("utf-8")


def json_copy_name(name: str) -> str:
    return name.removesuffix(".yaml") + ".json"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_yaml(text: str) -> dict[str, Any]:
    import yaml  # only when the JSON copy is missing or stale

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    document: dict[str, Any] = yaml.load(text, Loader=loader)
    return document


def json_copy(name: str = COMMERCE) -> str:
    """The text of the pre-parsed copy of ``name`` as it should be shipped."""
    text = contract_text(name)
    return json.dumps({"sourceSha256": digest(text), "document": parse_yaml(text)}) + "\n"


@functools.cache
def _loaded(name: str) -> dict[str, Any]:
    text = contract_text(name)
    cached = _file(json_copy_name(name))
    if cached.is_file():
        shipped = json.loads(cached.read_text("utf-8"))
        if shipped.get("sourceSha256") == digest(text):
            document: dict[str, Any] = shipped["document"]
            return document
    return parse_yaml(text)


def load_contract(name: str = COMMERCE) -> dict[str, Any]:
    """A private copy of the parsed document (callers may change it)."""
    return copy.deepcopy(_loaded(name))


def shared_contract(name: str = COMMERCE) -> dict[str, Any]:
    """The parsed document shared by every validator: read it, never change it."""
    return _loaded(name)


#: The spec's placeholder (§1) for the root each contract is served under.
ROOT_PLACEHOLDERS = {COMMERCE: "{base_url}", IDENTITY: "{auth_url}", WALLET: "{wallet_base_url}"}


def served_contract(base_url: str, name: str = COMMERCE) -> dict[str, Any]:
    """The document as an emulator serves it: its one server is the emulator's root."""
    document = load_contract(name)
    description = f"{ROOT_PLACEHOLDERS[name]} of this emulator"
    document["servers"] = [{"url": base_url, "description": description}]
    return document


#: Every shipped contract by the name users give it (``?contract=``, ``--contract``).
BY_NAME = {"commerce": COMMERCE, "identity": IDENTITY, "wallet": WALLET}
#: Every contract shipped with a pre-parsed JSON copy.
CONTRACTS = tuple(BY_NAME.values())

if __name__ == "__main__":  # regenerate the shipped JSON copies (see the module docstring)
    from pathlib import Path

    for contract in CONTRACTS:
        target = Path(__file__).resolve().parents[1] / "contracts" / json_copy_name(contract)
        target.write_text(json_copy(contract), encoding="utf-8")
        print(f"wrote {target}")
