"""`hq retention backfill` on Cosmos DB (decision 0094): the items of store-days written before retention was
turned on carry no `ttl` and would stay for ever; each gets the ttl it would have had (expiry.py: Cosmos DB
counts it from the item's last write, and this patch is one, so it is the same seconds-until-expiry a write
now would set). Resumable: only items without a ttl are read, so a second run continues where one stopped.

- a store-day's partition in `trade-records` (records, batch entries): found by its batch entries, which
  carry the business_date; the batch entries are patched last, so a run cut short finds the day again;
- record index entries (they carry their business_date); heads and layout items stay;
- the markers of trade record batches in `batches` (other markers stay, as decision 0086 says)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosResourceNotFoundError

from backends.cosmos.expiry import DayExpiry
from backends.cosmos.items import forget, stream

DAYS_WITHOUT_TTL = "SELECT c.pk, c.business_date FROM c WHERE c.type = 'batch' AND NOT IS_DEFINED(c.ttl)"
DAY_ITEMS_WITHOUT_TTL = "SELECT c.id, c.type FROM c WHERE c.pk = @pk AND NOT IS_DEFINED(c.ttl)"
ENTRIES_WITHOUT_TTL = (
    "SELECT c.id, c.pk, c.business_date FROM c WHERE STARTSWITH(c.pk, 'i|') AND IS_DEFINED(c.trade_record_id) "
    "AND NOT IS_DEFINED(c.ttl)"
)
MARKERS_WITHOUT_TTL = (
    "SELECT c.id, c.pk, c.business_date FROM c WHERE c.kind = 'trade-records' AND IS_DEFINED(c.business_date) "
    "AND NOT IS_DEFINED(c.ttl)"
)


@dataclass
class Backfilled:
    store_days: int = 0
    items: int = 0  # records, batch entries and tombstones of those days
    entries: int = 0
    markers: int = 0


def backfill_ttl(
    trades: ContainerProxy, batches: ContainerProxy, expiry: DayExpiry, progress: Callable[[Backfilled], None]
) -> Backfilled:
    done = Backfilled()
    seen: set[str] = set()  # a day's other batch entries, still listed by the query's later pages
    for day in stream(trades, DAYS_WITHOUT_TTL):
        if day["pk"] in seen:
            continue
        seen.add(day["pk"])
        ttl = _ttl(expiry, day["business_date"])
        items = list(stream(trades, DAY_ITEMS_WITHOUT_TTL, day["pk"], pk=day["pk"]))
        items.sort(key=lambda item: item.get("type") == "batch")  # batch entries last
        for item in items:
            _patch(trades, item["id"], day["pk"], ttl)
        done.store_days += 1
        done.items += len(items)
        progress(done)
    for entry in stream(trades, ENTRIES_WITHOUT_TTL):
        _patch(trades, entry["id"], entry["pk"], _ttl(expiry, entry["business_date"]))
        done.entries += 1
        if done.entries % 1000 == 0:
            progress(done)
    for marker in stream(batches, MARKERS_WITHOUT_TTL):
        if marker["business_date"]:
            _patch(batches, marker["id"], marker["pk"], _ttl(expiry, marker["business_date"]))
            done.markers += 1
    progress(done)
    return done


def _ttl(expiry: DayExpiry, business_date: str) -> int:
    ttl = expiry.ttl_of_day(business_date)
    assert ttl is not None  # the command runs only with retention on
    return ttl


def _patch(container: ContainerProxy, item_id: str, pk: str, ttl: int) -> None:
    try:
        container.patch_item(item_id, partition_key=pk, patch_operations=[{"op": "set", "path": "/ttl", "value": ttl}])
    except CosmosResourceNotFoundError as error:
        forget(error)
        pass  # expired or moved meanwhile
