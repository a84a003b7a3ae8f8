"""HQ's dashboard reads on Cosmos DB (core.ports.Overview), each bounded by the partner and the range of dates:

- a partner's store-days received over a range: the batch entries of container `trade-records` (one per
  trade record batch, in its store-day's partition; trade_records.batch_entry), one query across partitions
  served by the index on /partner_date (partner and date in one text, keys.partner_date), summed here as
  the pages arrive (the emulator has no aggregates or GROUP BY);
- a store-day's batches: the same entries, one query within the store-day's partition;
- the closes over a range: container `daily-closes`, within the partner's partition, a narrow projection;
- the partner's stores: container `partners`, within its partition;
- the last sweep: one small item in `partners`, moved forward only.

Batch entries written before they carried the marker's fields (partner_date, record_count, ...) are not
found by the range query (they have no partner_date) and, in a store-day's batches, are read from their
marker instead (skipped if it is gone). Request units: decision 0079."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from azure.cosmos import ContainerProxy

from backends.cosmos.close_moves import each_day_once
from backends.cosmos.conditional import update_item
from backends.cosmos.items import query, read_or_none, stream
from backends.cosmos.keys import compound_key, day_key, partner_date, partner_key
from backends.cosmos.markers import Markers
from backends.cosmos.masters import store_of
from core.clock import from_utc_text, from_utc_text_or_none, to_utc_text
from core.records import BatchMarker, DayStatus, ReceivedDay, StoreMaster
from core.stored_json import JsonObject

# The sweep's item: in `partners`, under a partition key no partner has (escaped partner ids hold no "|").
SWEEP_ID = "sweep"
SWEEP_KEY = compound_key("sweep", "overdue-closes")

# Served by the index on /partner_date, which only batch entries have (keys.partner_date).
RECEIVED_IN_RANGE = (
    "SELECT c.store_id, c.business_date, c.record_count, c.warnings FROM c "
    "WHERE c.partner_date >= @first AND c.partner_date <= @last"
)


def _marker_of(entry: JsonObject, partner_id: str) -> BatchMarker:
    return BatchMarker(
        partner_id,
        entry["batch_id"],
        "trade-records",
        entry["record_count"],
        entry["body_digest"],
        from_utc_text(entry["received_at"]),
        entry["store_id"],
        dt.date.fromisoformat(entry["business_date"]),
        entry["batch_seq"],
        warnings=entry.get("warnings") or {},
    )


class Overview:
    def __init__(
        self, trades: ContainerProxy, closes: ContainerProxy, partners: ContainerProxy, markers: Markers
    ) -> None:
        self._trades = trades
        self._closes = closes
        self._partners = partners
        self._markers = markers

    def received_days(self, partner_id: str, first: dt.date, last: dt.date) -> list[ReceivedDay]:
        batches: Counter[tuple[str, str]] = Counter()
        records: Counter[tuple[str, str]] = Counter()
        warnings: dict[tuple[str, str], Counter[str]] = {}
        for entry in stream(
            self._trades,
            RECEIVED_IN_RANGE,
            first=partner_date(partner_id, first.isoformat()),
            last=partner_date(partner_id, last.isoformat()),
        ):
            day = (entry["business_date"], entry["store_id"])
            batches[day] += 1
            records[day] += entry["record_count"]
            warnings.setdefault(day, Counter()).update(entry.get("warnings") or {})
        return [
            ReceivedDay(day[1], dt.date.fromisoformat(day[0]), batches[day], records[day], dict(warnings[day]))
            for day in sorted(batches)
        ]

    def day_statuses(self, partner_id: str, first: dt.date, last: dt.date) -> list[DayStatus]:
        # Across the partner's stores' partitions (decision 0093), by partner_id and business_date, indexed.
        items = query(
            self._closes,
            "SELECT c.pk, c.partner_id, c.store_id, c.business_date, c.status, c.received_at, c.due_at, "
            "c.checked_at, c.differences FROM c WHERE c.partner_id = @partner AND c.type = 'close' "
            "AND c.business_date >= @first AND c.business_date <= @last",
            partner=partner_id,
            first=first.isoformat(),
            last=last.isoformat(),
        )
        items = each_day_once(items)
        # Sorted here rather than by ORDER BY, which on two properties would need another composite index.
        items.sort(key=lambda item: (item["business_date"], item["store_id"]))
        return [
            DayStatus(
                item["store_id"],
                dt.date.fromisoformat(item["business_date"]),
                item["status"],
                from_utc_text(item["received_at"]),
                from_utc_text(item["due_at"]),
                from_utc_text_or_none(item.get("checked_at")),
                list(item.get("differences") or []),
            )
            for item in items
        ]

    def store_day_batches(self, partner_id: str, store_id: str, business_date: dt.date) -> list[BatchMarker]:
        pk = day_key(partner_id, store_id, business_date.isoformat())
        markers = []
        for entry in query(self._trades, "SELECT * FROM c WHERE c.pk = @pk AND c.type = 'batch'", pk, pk=pk):
            if "record_count" in entry:
                markers.append(_marker_of(entry, partner_id))
                continue
            stored = self._markers.find(partner_id, entry["batch_id"])  # an entry of before: its marker
            if stored is not None:
                markers.append(stored)
        return sorted(markers, key=lambda marker: (marker.batch_seq or 0, marker.received_at))

    def stores(self, partner_id: str) -> list[StoreMaster]:
        pk = partner_key(partner_id)
        items = query(self._partners, "SELECT * FROM c WHERE c.pk = @pk AND c.type = 'store'", pk, pk=pk)
        return sorted((store_of(item) for item in items), key=lambda store: store.store_id)

    def record_sweep(self, at: dt.datetime) -> None:
        moment = to_utc_text(at)  # fixed-width UTC text: sorts in time order

        def forward(current: JsonObject | None) -> JsonObject | None:
            if current is not None and current["at"] >= moment:
                return None
            return {"id": SWEEP_ID, "pk": SWEEP_KEY, "type": "sweep", "at": moment}

        update_item(self._partners, SWEEP_ID, SWEEP_KEY, forward)

    def last_sweep(self) -> dt.datetime | None:
        item = read_or_none(self._partners, SWEEP_ID, SWEEP_KEY)  # a point read: 1 RU
        return None if item is None else from_utc_text(item["at"])
