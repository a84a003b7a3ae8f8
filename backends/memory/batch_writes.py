"""Batch markers and batch writes of the memory storage: each write and its marker in one step under
the lock, so a batch is stored once or not at all, as in a SQLite transaction."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt

from backends.memory.state import MemoryState, cleared, stored_version_of
from core.records import (
    BatchMarker,
    ClosedDay,
    Mapping,
    ModifierGroupMaster,
    ProductMaster,
    SavedTradeRecords,
    StoreMaster,
    TradeRecordRow,
    record_changes,
)
from core.stored_json import JsonObject
from core.versions import Version, master_replaces, trade_record_replaces


class MemoryBatchWrites(MemoryState):
    # -- batch markers ----------------------------------------------------------------------------

    def find_batch(self, partner_id: str, batch_id: str) -> BatchMarker | None:
        with self._lock:
            return self._batches.get((partner_id, batch_id))

    def batch_seqs(self, partner_id: str, store_id: str, business_date: dt.date) -> list[int]:
        with self._lock:
            return sorted(
                marker.batch_seq
                for marker in self._day_batches(partner_id, store_id, business_date)
                if marker.kind == "trade-records" and marker.batch_seq is not None
            )

    def batches_with_seq(
        self, partner_id: str, store_id: str, business_date: dt.date, batch_seq: int, limit: int
    ) -> list[str]:
        with self._lock:
            found = [
                marker.batch_id
                for marker in self._day_batches(partner_id, store_id, business_date)
                if marker.batch_seq == batch_seq
            ]
            return found[:limit]

    def _day_batches(self, partner_id: str, store_id: str, business_date: dt.date) -> list[BatchMarker]:
        return [
            marker
            for (partner, _), marker in self._batches.items()
            if partner == partner_id and marker.store_id == store_id and marker.business_date == business_date
        ]

    def _claim(self, marker: BatchMarker, received: BatchMarker | None = None) -> BatchMarker | None:
        """The stored marker if the batch_id is known, else None and the marker stored. `received` is the
        marker rebuilt from a receipt (a close or mapping received before): a resend whose marker was lost,
        which gets its marker back."""
        key = (marker.partner_id, marker.batch_id)
        if key in self._batches:
            return self._batches[key]
        self._batches[key] = received or marker
        return received

    # -- batch writes -----------------------------------------------------------------------------

    def save_stores(self, marker: BatchMarker, stores: list[StoreMaster]) -> BatchMarker | None:
        with self._lock:
            existing = self._claim(marker)
            if existing is None:
                for store in stores:
                    key = (marker.partner_id, store.store_id)
                    stored = self._stores.get(key)
                    if master_replaces(
                        Version.of(0, store.last_modified_at),
                        None if stored is None else Version.of(0, stored.last_modified_at),
                    ):
                        self._stores[key] = copy.deepcopy(store)
            return existing

    def save_products(
        self, marker: BatchMarker, products: list[ProductMaster], groups: list[ModifierGroupMaster]
    ) -> BatchMarker | None:
        with self._lock:
            existing = self._claim(marker)
            if existing is None:
                for product in products:
                    key = (marker.partner_id, product.product_id, product.store_id or "")
                    stored = self._products.get(key)
                    if master_replaces(
                        Version.of(product.version, product.last_modified_at),
                        None if stored is None else Version.of(stored.version, stored.last_modified_at),
                    ):
                        self._products[key] = copy.deepcopy(product)
                for group in groups:
                    self._groups[(marker.partner_id, group.group_id)] = copy.deepcopy(group)
            return existing

    def replace_mapping(self, marker: BatchMarker, entries: list[JsonObject]) -> BatchMarker | None:
        with self._lock:
            existing = self._claim(marker, self._mapping_receipts.get((marker.partner_id, marker.batch_id)))
            if existing is None:
                self._mapping_receipts[(marker.partner_id, marker.batch_id)] = BatchMarker(
                    marker.partner_id,
                    marker.batch_id,
                    "mappings",
                    marker.record_count,
                    marker.body_digest,
                    marker.received_at,
                )
                self._mappings[marker.partner_id] = Mapping(marker.batch_id, marker.received_at, copy.deepcopy(entries))
            return existing

    def save_trade_records(
        self, marker: BatchMarker, rows: list[TradeRecordRow], *, looked_up: bool = False
    ) -> SavedTradeRecords:
        del looked_up  # the marker is looked up inside the write's own transaction (lock), which costs nothing
        with self._lock:
            existing = self._batches.get((marker.partner_id, marker.batch_id))
            if existing is not None:
                return SavedTradeRecords(existing)
            records = self._records[marker.partner_id]
            changes = record_changes(
                rows,
                {
                    row.trade_record_id: stored_version_of(records[row.trade_record_id])
                    for row in rows
                    if row.trade_record_id in records
                },
            )
            for row in rows:  # in order: a batch may repeat a trade_record_id
                stored = records.get(row.trade_record_id)
                if trade_record_replaces(
                    Version.of(row.version, row.last_modified_at),
                    None if stored is None else stored_version_of(stored).version,
                ):
                    records[row.trade_record_id] = copy.deepcopy(row)
                    self._record_batches[(marker.partner_id, row.trade_record_id)] = marker.batch_id
            self._batches[(marker.partner_id, marker.batch_id)] = marker.with_changes(changes)
            return SavedTradeRecords(None, changes)

    def save_daily_close(self, marker: BatchMarker, day: ClosedDay) -> BatchMarker | None:
        with self._lock:
            receipt_key = (marker.partner_id, day.store_id, day.business_date, marker.batch_id)
            existing = self._claim(marker, self._close_receipts.get(receipt_key))
            if existing is None:
                self._close_receipts[receipt_key] = BatchMarker(
                    marker.partner_id,
                    marker.batch_id,
                    "daily-close",
                    1,
                    marker.body_digest,
                    marker.received_at,
                    day.store_id,
                    day.business_date,
                )
                key = (marker.partner_id, day.store_id, day.business_date)
                stored = self._days.get(key)
                # A new close keeps the day's revision and the records that moved out: they are about the records.
                self._days[key] = dataclasses.replace(
                    cleared(copy.deepcopy(day)),
                    revision=0 if stored is None else stored.revision,
                    moved_out=[] if stored is None else stored.moved_out,
                )
            return existing
