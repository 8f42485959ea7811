"""PUT /_sandbox/state refuses a document whose records name records it does not hold (an
order's session, a scheduler entry's withdrawal): a 400 naming the dangling field and the id,
the state unchanged. Every export the emulator makes imports again, pruned or not."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from functools import cache
from typing import Any, get_args, get_origin

import pytest
from pydantic import BaseModel

from svc_sandbox.app import create_app
from svc_sandbox.core.errors import NotFound
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.state_format import record_lists, services_models
from svc_sandbox.state_references import REFERENCES, TARGETS, Reference
from tests.helpers import assert_unharmed
from tests.state_scenes import WAITING_SESSION, busy_sandbox

MISSING = "f" * 24

CHECKED = [r for r in REFERENCES if r.dangles is not True]
ALWAYS_DANGLING = [r for r in REFERENCES if r.dangles is True]


def name(ref: Reference) -> str:
    word = "" if ref.word is None else f" word {ref.word}"
    return f"{ref.records} {ref.field}{word}"


@cache
def busy_export() -> str:
    """The export of the busy scene, plus a due webhook attempt: what the queue holds for a
    pending delivery between its attempt falling due and the dispatcher sending it."""
    sandbox, _ = busy_sandbox()
    document = sandbox.export()
    deliveries = document["services"]["webhookDeliveries"]
    pending = next(d for d in deliveries["deliveries"] if d["status"] == "pending")
    # As the scheduler hands it over (DeliveryService.on_attempt_due): its entry becomes due.
    entries = document["scheduler"]["entries"]
    entry = next(e for e in entries if e["payload"].get("deliveryId") == pending["id"])
    entries.remove(entry)
    number = entry["payload"]["attempt"]
    due = {
        "due": document["clock"]["exact"],
        "seq": 1,
        "delivery_id": pending["id"],
        "number": number,
    }
    deliveries["due"].append(due)
    return json.dumps(document)


def walk(document: dict[str, Any], where: str) -> Any:
    for part in where.split("."):
        document = document[part]
    return document


def corrupt(document: dict[str, Any], ref: Reference) -> str:
    """Makes the first reference of the row name ``MISSING``; the path of that field."""
    where, _, kind = ref.records.partition("@")
    container = walk(document, where)
    if ref.field == "{key}":
        key = next(iter(container))
        words = key.split(" ")
        if ref.word is not None:
            words[ref.word] = MISSING
        new = " ".join(words) if ref.word is not None else MISSING
        container[new] = container.pop(key)
        return f"{where}[{new!r}]"
    if ref.field == "[]":
        container[0] = MISSING
        return f"{where}[0]"
    *parents, field = ref.field.split(".")
    each = field.endswith("[]")
    field = field.removesuffix("[]")
    for index, record in enumerate(container):
        if (kind and record["kind"] != kind) or ref.allows(record):
            continue
        holder = record
        for parent in parents:
            holder = holder[parent]
        if not holder.get(field):
            continue
        path = f"{where}[{index}].{'.'.join([*parents, field])}"
        if each:
            holder[field][0] = MISSING
            return f"{path}[0]"
        holder[field] = MISSING
        return path
    raise AssertionError(f"the busy scene holds no {name(ref)}")


@pytest.fixture
def busy() -> tuple[Sandbox, Any]:
    sandbox = Sandbox(clock_mode="frozen", seed=3, rate_limits=False)
    http = create_app(sandbox).test_client()
    assert http.put("/_sandbox/state", json=json.loads(busy_export())).status_code == 200
    return sandbox, http


@pytest.mark.parametrize("ref", CHECKED, ids=[name(r) for r in CHECKED])
def test_a_dangling_reference_is_a_400_naming_its_path_and_id_and_changes_nothing(
    busy: tuple[Sandbox, Any], ref: Reference
) -> None:
    _, http = busy
    before = http.get("/_sandbox/state").data
    document = json.loads(busy_export())
    path = corrupt(document, ref)
    response = http.put("/_sandbox/state", json=document)
    assert response.status_code == 400, response.json
    assert response.json["error"] == (
        f"state document: {path} is {MISSING!r}, which names no {ref.target} of the document "
        "(every reference must name a record of the import)"
    )
    assert_unharmed(http, before)


def test_the_busy_scene_imports_and_exports_the_same_document(busy: tuple[Sandbox, Any]) -> None:
    _, http = busy
    assert http.get("/_sandbox/state").json == json.loads(busy_export())


def test_a_notification_rule_may_wait_for_a_session_not_open_yet(
    busy: tuple[Sandbox, Any],
) -> None:
    sandbox, _ = busy
    assert WAITING_SESSION not in sandbox.checkout.sessions
    assert WAITING_SESSION in [r.session_id for r in sandbox.notice_faults.rules]


def dangling(document: dict[str, Any]) -> set[str]:
    """The rows of the table that hold an id naming nothing in ``document``."""
    services = document["services"]
    ids = {target: collect(services) for target, collect in TARGETS.items()}
    return {
        name(ref)
        for ref in REFERENCES
        if any(v is not None and v not in ids[ref.target] for v in values(document, ref))
    }


def values(document: dict[str, Any], ref: Reference) -> list[Any]:
    """Every id the row's field holds in ``document``."""
    where, _, kind = ref.records.partition("@")
    container = walk(document, where)
    if ref.field == "{key}":
        return [k.split(" ")[ref.word] if ref.word is not None else k for k in container]
    if ref.field == "[]":
        return list(container)
    *parents, field = ref.field.split(".")
    found: list[Any] = []
    for record in container:
        if kind and record["kind"] != kind:
            continue
        holder = record
        for parent in parents:
            holder = holder[parent]
        value = holder.get(field.removesuffix("[]"))
        found += value if field.endswith("[]") else [value]
    return found


RETENTIONS = [
    {"events_kept": 1, "deliveries_kept": 1, "webhook_attempts_kept": 3},
    {"events_kept": 1, "deliveries_kept": 4},
    {"events_kept": 2, "deliveries_kept": 50, "webhook_attempts_kept": 100},
]


@pytest.mark.parametrize("retention", RETENTIONS, ids=["tiny", "few deliveries", "few events"])
@pytest.mark.parametrize("hours", [0, 1, 72])
def test_every_export_imports_again_after_retention_pruned_it(
    retention: dict[str, int], hours: int
) -> None:
    """Small retention, an endpoint deleted, then time: sessions expire, deliveries retry,
    settle and are pruned, events are dropped; the export still imports, and says the same."""
    sandbox, _ = busy_sandbox(**retention)
    sandbox.advance(timedelta(hours=hours))
    document = sandbox.export()
    fresh = Sandbox(clock_mode="frozen", seed=3, **retention)
    http = create_app(fresh).test_client()
    response = http.put("/_sandbox/state", json=document)
    assert response.status_code == 200, response.json
    assert http.get("/_sandbox/state").json == document


def test_each_reference_allowed_to_dangle_is_one_the_emulator_leaves_dangling() -> None:
    sandbox, _ = busy_sandbox(events_kept=1, deliveries_kept=4)
    sandbox.advance(timedelta(hours=1))
    assert dangling(sandbox.export()) == {name(r) for r in REFERENCES if r.dangles}


def test_with_the_check_skipped_a_dangling_reference_imports(busy: tuple[Sandbox, Any]) -> None:
    sandbox, http = busy
    sandbox.settings.state_references = "skip"
    document = json.loads(busy_export())
    document["services"]["orders"]["orders"][0]["checkout_session_id"] = MISSING
    assert http.put("/_sandbox/state", json=document).status_code == 200
    assert http.get("/_sandbox/state").json == document


def test_every_scheduler_kind_has_its_reference(busy: tuple[Sandbox, Any]) -> None:
    sandbox, _ = busy
    rows = {r.records.partition("@")[2] for r in REFERENCES if r.records.startswith("scheduler")}
    assert rows == set(sandbox.scheduler.payload_types())


#: Record fields named like ids that are no reference: an app's own key, the integrator's ids.
OWN_KEYS = {("services.oauthApps.apps", "client_id")}
EXTERNAL = {"external_id", "customer_external_id"}


def test_every_id_field_of_the_records_is_in_the_table_or_no_reference() -> None:
    """A new ``..._id`` field in a record makes this fail until the table says what it is."""
    document = json.loads(busy_export())
    table = {(r.records, r.field.removesuffix("[]")) for r in REFERENCES}
    for service, section in document["services"].items():
        for part, records in section.items():
            if not (isinstance(records, list) and records and isinstance(records[0], dict)):
                continue
            where = f"services.{service}.{part}"
            for field in {f for record in records for f in record}:
                if field.endswith(("_id", "_ids")) or field in ("checkout_link", "redelivery_of"):
                    assert (where, field) in table | OWN_KEYS or field in EXTERNAL, (where, field)


def test_an_in_process_receiver_of_no_organization_is_refused(busy: tuple[Sandbox, Any]) -> None:
    """So no export holds an endpoint whose organization it does not hold."""
    sandbox, http = busy
    before = http.get("/_sandbox/state").data
    with pytest.raises(NotFound):
        sandbox.add_webhook_receiver(MISSING, lambda body, headers: 200)
    assert http.get("/_sandbox/state").data == before


SAME_ORG = [r for r in REFERENCES if r.same_org]
Fixes = Callable[[dict[str, Any], str], dict[str, Any]]
#: The kinds one organization of the busy scene has no record of (the sandbox organization
#: has every product, link, endpoint and delivery; the production one every withdrawal):
#: where their records are, their ids' prefix, and what a copy for the other organization
#: changes besides its id and organization (what must stay unique, or within it).
COPIES: dict[str, tuple[str, str, str, Fixes]] = {
    "product": ("products", "products", "", lambda d, org: {"checkout_token": "p_copy00000000000"}),
    "checkout link": ("checkoutConfig", "links", "cl_", lambda d, org: {"product_ids": []}),
    "withdrawal": ("payouts", "withdrawals", "", lambda d, org: {"idempotency_key": None}),
    "webhook endpoint": (
        "webhookEndpoints",
        "endpoints",
        "we_",
        lambda d, org: {"url": "http://127.0.0.1:9/copy"},
    ),
    "webhook delivery": (
        "webhookDeliveries",
        "deliveries",
        "whd_",
        lambda d, org: {
            "event_id": owned_by(d, "event", org),
            "endpoint_id": MISSING,  # a deleted endpoint's: allowed to dangle
            "redelivery_of": None,
            "status": "succeeded",
        },
    ),
}


def owned_by(document: dict[str, Any], target: str, org: str) -> str:
    """The id of a record of ``target`` that ``org`` owns: one of the scene's, or a copy of
    another organization's record made ``org``'s."""
    services = document["services"]
    found = [i for i, owner in TARGETS[target](services).items() if owner == org]
    if found:
        return found[0]
    section, records, prefix, fixes = COPIES[target]
    copy = {**services[section][records][0], "id": prefix + "c0" * 12, "org_id": org}
    if "seq" in copy:
        services[section]["seq"] += 1
        copy["seq"] = services[section]["seq"]
    copy.update(fixes(document, org))
    services[section][records].append(copy)
    return str(copy["id"])


def point_across(document: dict[str, Any], ref: Reference) -> tuple[str, str, str, str]:
    """Points the row's first set reference at another organization's record of its kind:
    (path, id, that organization, the record's organization)."""
    where, _, _ = ref.records.partition("@")
    field = ref.field.removesuffix("[]")
    orgs = [o["id"] for o in document["services"]["orgs"]["orgs"]]
    for index, record in enumerate(walk(document, where)):
        if not record.get(field):
            continue
        other = next(o for o in orgs if o != record["org_id"])
        target = owned_by(document, ref.target, other)
        path = f"{where}[{index}].{field}"
        if ref.field.endswith("[]"):
            record[field][0], path = target, f"{path}[0]"
        else:
            record[field] = target
        return path, target, other, record["org_id"]
    raise AssertionError(f"the busy scene holds no {name(ref)}")


@pytest.mark.parametrize("ref", SAME_ORG, ids=[name(r) for r in SAME_ORG])
def test_a_reference_to_another_organizations_record_is_a_400_and_changes_nothing(
    busy: tuple[Sandbox, Any], ref: Reference
) -> None:
    """An order of one organization naming another's session, a delivery another's event:
    the emulator never makes one, so an import holding one is refused whole."""
    _, http = busy
    before = http.get("/_sandbox/state").data
    document = json.loads(busy_export())
    path, target, owner, holder = point_across(document, ref)
    response = http.put("/_sandbox/state", json=document)
    assert response.status_code == 400, response.json
    assert response.json["error"] == (
        f"state document: {path} is {target!r}, a {ref.target} of organization {owner}, but "
        f"the record belongs to organization {holder} (a record names only records of its "
        "own organization)"
    )
    assert_unharmed(http, before)


#: References from one organization's record to an organization-owned kind that are not
#: checked for the same organization, and why.
NOT_SAME_ORG = {
    # The control plane takes a notification rule's organization and session as given (a
    # rule may wait for a session not open yet): an export may hold one of each.
    "services.notificationFaults.rules session_id",
}


def test_every_reference_between_organization_records_is_checked_within_one() -> None:
    """A new reference from an organization's record to an organization-owned kind must get
    ``same_org`` (or a reason in ``NOT_SAME_ORG``)."""
    document = json.loads(busy_export())
    services = document["services"]
    owned = {
        t for t, owners in ((t, c(services)) for t, c in TARGETS.items()) if any(owners.values())
    }

    def from_owned_records(ref: Reference) -> bool:
        container = walk(document, ref.records.partition("@")[0])
        return isinstance(container, list) and any("org_id" in r for r in container)

    expected = {
        name(r)
        for r in REFERENCES
        if r.target in owned and r.field != "org_id" and from_owned_records(r)
    }
    assert {name(r) for r in SAME_ORG} == expected - NOT_SAME_ORG


RECORD_LISTS = record_lists()


@pytest.mark.parametrize(
    ("section", "records", "key"), RECORD_LISTS, ids=[f"{s}.{r}" for s, r, _ in RECORD_LISTS]
)
def test_a_record_repeated_in_any_list_is_a_400_naming_its_key_and_changes_nothing(
    busy: tuple[Sandbox, Any], section: str, records: str, key: tuple[str, ...]
) -> None:
    """Every list of records of the format, read off its models: a repeated record would be
    one record after the import (a withdrawal lost) or two (a funding entry counted twice)."""
    _, http = busy
    before = http.get("/_sandbox/state").data
    document = json.loads(busy_export())
    listed = document["services"][section][records]
    assert listed, f"the busy scene holds no services.{section}.{records}"
    listed.append(json.loads(json.dumps(listed[0])))
    response = http.put("/_sandbox/state", json=document)
    assert response.status_code == 400, response.json
    where = f"services.{section}.{records}[{len(listed) - 1}]"
    named = f"{where}.{key[0]} repeats" if len(key) == 1 else f"{where} repeats {key[0]} "
    assert named in response.json["error"], response.json
    assert_unharmed(http, before)


def test_every_list_of_records_of_the_format_has_a_key() -> None:
    """The lists are read off the format's models: each has a key (``id`` or a row in
    state_format._KEYS), so a new list of records is checked for repeats without a new line."""
    listed = {(section, name) for section, name, _ in RECORD_LISTS}
    for section, model in services_models().items():
        for name, info in model.model_fields.items():
            item = get_args(info.annotation)[0] if get_origin(info.annotation) is list else None
            if isinstance(item, type) and issubclass(item, BaseModel):
                assert (section, name) in listed
    assert ("wallets", "entries", ("id",)) in RECORD_LISTS


def test_a_refusal_names_an_over_long_id_without_repeating_it_whole(
    busy: tuple[Sandbox, Any],
) -> None:
    """A 300,000-character id answered a 300,167-character error: the message cuts it."""
    _, http = busy
    before = http.get("/_sandbox/state").data
    document = json.loads(busy_export())
    long_id = "A" * 300_000
    document["services"]["orders"]["orders"][0]["checkout_session_id"] = long_id
    response = http.put("/_sandbox/state", json=document)
    assert response.status_code == 400
    error = response.json["error"]
    assert error.startswith(
        "state document: services.orders.orders[0].checkout_session_id is 'AAAA"
    ), error
    assert f"{'A' * 70}…" in error
    assert len(error) < 300
    assert_unharmed(http, before)
