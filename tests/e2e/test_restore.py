"""The restore runbook's app half, run on the emulators (docs/operator-guide.md, Backups and restore;
decision 0090). Cosmos DB's point-in-time restore cannot run here; what it hands over can be: a second
account holding the same items, its containers with TTL disabled (`--disable-ttl true`), which the app is
then pointed at (POS_COSMOS_ACCOUNT_NAME and a provision, in Azure). The app must answer the same, its
data must be the same item for item, and reconciling again must give the same results.

The "restore" is a copy from one emulator to another: the restore itself, its timing and its billing are
Azure's and were not run.
"""

from __future__ import annotations

import dataclasses
import json
import uuid

from backends.cosmos.connection import connect, load_container_definitions
from devhost.azurite_emulator import start_azurite
from devhost.cosmos_emulator import start_cosmos_emulator
from tests.conftest import make_partner, start_host
from tests.e2e.test_business_day import DIRECTIONS, close_and_wait, open_store, push
from tests.trade_payloads import Line, totals_of, trade_record

SYSTEM_PROPERTIES = {"_rid", "_self", "_etag", "_attachments", "_ts"}
DAYS = ("2026-11-20", "2026-11-21")


def _account(emulator, database: str, *, definitions: list[dict], create: bool):
    return connect(
        emulator.endpoint,
        database,
        key=emulator.key,
        credential=None,
        verify_tls=False,
        definitions=definitions,
        create_containers=create,
    )


def _items(emulator, database: str) -> dict[str, list[dict]]:
    """Every item of every container, without the properties Cosmos DB sets itself, in a stable order."""
    client, _ = _account(emulator, database, definitions=load_container_definitions(), create=False)
    db = client.get_database_client(database)
    found = {}
    for definition in load_container_definitions():
        items = db.get_container_client(definition["id"]).read_all_items()
        cleaned = [{k: v for k, v in item.items() if k not in SYSTEM_PROPERTIES} for item in items]
        found[definition["id"]] = sorted(cleaned, key=lambda item: json.dumps(item, sort_keys=True))
    return found


def _restore_with_ttl_disabled(source, target, database: str) -> None:
    """What `az cosmosdb restore --disable-ttl true` hands over: the same items, containers without a TTL."""
    without_ttl = [{k: v for k, v in d.items() if k != "defaultTtl"} for d in load_container_definitions()]
    client, _ = _account(target, database, definitions=without_ttl, create=True)
    db = client.get_database_client(database)
    for container_id, items in _items(source, database).items():
        container = db.get_container_client(container_id)
        for item in items:
            container.upsert_item(item)


def _default_ttls(emulator, database: str) -> dict[str, object]:
    client, _ = _account(emulator, database, definitions=load_container_definitions(), create=False)
    db = client.get_database_client(database)
    return {d["id"]: db.get_container_client(d["id"]).read().get("defaultTtl") for d in load_container_definitions()}


def _azure_host(tmp, emulator, database: str, queue: str, *, create: bool):
    tmp.mkdir(parents=True, exist_ok=True)
    return start_host(
        tmp,
        POS_BACKEND="azure",
        COSMOS_ENDPOINT=emulator.endpoint,
        COSMOS_KEY=emulator.key,
        COSMOS_DATABASE=database,
        COSMOS_CREATE_CONTAINERS="true" if create else "false",  # as deployed: the template made them
        AzureWebJobsStorage=queue,
        RATE_LIMIT_PER_MINUTE="600",  # rate windows: items that carry a ttl of their own
    )


def _answers(partner) -> dict:
    return {day: partner.get(f"daily-close/S1/{day}").json() for day in DAYS} | {
        "mapping": partner.get("mappings/transaction-types").json()
    }


def test_the_app_on_a_restored_account_answers_and_reconciles_as_before(cosmos_emulator, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("restore")
    azurite = start_azurite(tmp)
    database = f"restore-{uuid.uuid4().hex[:8]}"
    live = _azure_host(tmp / "live", cosmos_emulator, database, azurite.connection_string, create=True)
    restored_emulator = start_cosmos_emulator(tmp / "restored" / "emulator.log")
    restored = None
    try:
        partner = make_partner(live, ("S1",))
        open_store(partner)
        matched = [trade_record("S1", DAYS[0], [Line("P-BURGER", 2, 550)], tax=88)]
        push(partner, "S1", matched, business_date=DAYS[0])
        assert close_and_wait(partner, "S1", totals_of(matched, {"01"}, DIRECTIONS), DAYS[0])["status"] == "MATCHED"
        sent = trade_record("S1", DAYS[1], [Line("P-COLA", 1, 199)], tax=16)
        missing = trade_record("S1", DAYS[1], [Line("P-FRIES", 1, 299)], tax=24)
        push(partner, "S1", [sent], business_date=DAYS[1])
        totals = totals_of([sent, missing], {"01"}, DIRECTIONS)
        assert close_and_wait(partner, "S1", totals, DAYS[1], batch_count=2)["status"] == "MISMATCHED"
        before = _answers(partner)
        listing = ("reconcile", "list", partner.partner_id, "--format", "json")
        listed_before = live.hq_in_process(*listing)
        assert listed_before.returncode == 0, listed_before.stderr
        live.stop()  # partners wait (503, retried) while the app moves to the restored account
        items_before = _items(cosmos_emulator, database)
        assert items_before["partners"] and items_before["trade-records"] and items_before["daily-closes"]

        _restore_with_ttl_disabled(cosmos_emulator, restored_emulator, database)
        assert set(_default_ttls(restored_emulator, database).values()) == {None}  # --disable-ttl
        assert _items(restored_emulator, database) == items_before  # nothing expired, nothing lost

        restored = _azure_host(tmp / "after", restored_emulator, database, azurite.connection_string, create=False)
        on_restored = dataclasses.replace(partner, host=restored)
        assert _answers(on_restored) == before
        listed_after = restored.hq_in_process(*listing)
        assert (listed_after.returncode, json.loads(listed_after.stdout)) == (0, json.loads(listed_before.stdout))

        for day in DAYS:  # reconciling again on the restored data gives the same results
            rerun = restored.hq_in_process("reconcile", "run", partner.partner_id, "S1", day)
            assert rerun.returncode == 0, rerun.stderr
        again = _answers(on_restored)
        for day in DAYS:
            drop = ("checked_at",)
            assert {k: v for k, v in again[day].items() if k not in drop} == {
                k: v for k, v in before[day].items() if k not in drop
            }
        # A new day is accepted and reconciled on the restored account as on the live one.
        later = trade_record("S1", "2026-11-22", [Line("P-BURGER", 1, 550)], tax=44)
        push(on_restored, "S1", [later], business_date="2026-11-22")
        result = close_and_wait(on_restored, "S1", totals_of([later], {"01"}, DIRECTIONS), "2026-11-22")
        assert result["status"] == "MATCHED"

        # The provision that adopts the account writes containers.json's TTLs back (infra/modules/cosmos.bicep:
        # each container's resource is its definition, tests/toolchain/test_infra.py). Not run here: the
        # emulator empties a container it is asked to replace, which Cosmos DB does not do.
    finally:
        live.stop()
        if restored is not None:
            restored.stop()
        restored_emulator.stop()
        azurite.stop()
