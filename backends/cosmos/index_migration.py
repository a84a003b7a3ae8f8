"""`hq cosmos migrate-index`: the version entries of the layout before the record index (one logical
partition per trade record, `v|partner|trade_record_id`, id "version") copied into the record index
(record_index.py), with the payment_ids of the record each one names. One pass over the old entries; each
is created in the index, or replaces an index entry of an older version, so a second run changes nothing
(and completes an interrupted one). The old entries are left where they are: nothing reads them any more.
docs/decisions/0056-cosmos-record-index.md says when to run it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from azure.cosmos import ContainerProxy

from backends.cosmos.conditional import update_item
from backends.cosmos.items import read_or_none, stored_version, stream, without_system_properties
from backends.cosmos.keys import day_key, index_bucket, index_entry_id, index_key, record_id
from core.stored_json import JsonObject


@dataclass
class Migrated:
    seen: int = 0  # old entries read
    created: int = 0  # copied into the index
    updated: int = 0  # replaced an index entry of an older version
    kept: int = 0  # the index already held this version or a later one


def migrate_record_index(
    container: ContainerProxy, progress: Callable[[Migrated], None], every: int = 1000
) -> Migrated:
    done = Migrated()
    # The old entries are the only items with id "version" (records, tombstones and batch entries have
    # their own ids); a one-off cross-partition query.
    for old in stream(container, "SELECT * FROM c WHERE c.id = 'version'"):
        done.seen += 1
        outcome = _copy(container, old)
        setattr(done, outcome, getattr(done, outcome) + 1)
        if done.seen % every == 0:
            progress(done)
    progress(done)
    return done


def _copy(container: ContainerProxy, old: JsonObject) -> str:
    partner_id, trade_record_id = old["partner_id"], old["trade_record_id"]
    entry = {
        **{name: value for name, value in without_system_properties(old).items() if name != "type"},
        "id": index_entry_id(trade_record_id),
        "pk": index_key(partner_id, index_bucket(trade_record_id)),
        "dirty": old.get("dirty") or [],
        "payment_ids": _payment_ids(container, partner_id, old),
    }
    outcome = "kept"

    def newer(current: JsonObject | None) -> JsonObject | None:
        nonlocal outcome
        if current is None:
            outcome = "created"
            return entry
        if stored_version(current) < stored_version(old):
            outcome = "updated"
            return entry
        outcome = "kept"
        return None

    update_item(container, entry["id"], entry["pk"], newer, create_first=True)
    return outcome


def _payment_ids(container: ContainerProxy, partner_id: str, old: JsonObject) -> list[str]:
    """The payment_ids of the record the entry names, from the record as received."""
    record = read_or_none(
        container, record_id(old["trade_record_id"]), day_key(partner_id, old["store_id"], old["business_date"])
    )
    document = (record or {}).get("document") or {}
    return [payment["payment_id"] for payment in document.get("payments") or [] if "payment_id" in payment]
