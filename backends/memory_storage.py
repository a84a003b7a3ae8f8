"""The Storage port in memory: dicts behind one lock, for use-case tests that need no database.

It passes the same contract suite as the SQLite and Cosmos DB adapters (tests/contract/test_storage_contract.py),
so a use case tested on it behaves as on them. Every call runs under the lock, so a write and its marker
are one atomic step, as in a SQLite transaction; what is stored is copied in and out, so a caller never
changes it through an object it passed or got. It has no fault points (core/faults.py): nothing can fail
between its steps, which is what they simulate. Not for the service itself: nothing survives the process
and nothing is shared between instances.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import threading
from collections import Counter, defaultdict
from collections.abc import Collection
from typing import TYPE_CHECKING

from backends.admin_rules import require_partner
from core.ports import AdminError, Storage
from core.records import (
    ApiKeyInfo,
    BatchMarker,
    ClosedDay,
    KeyOwner,
    Mapping,
    ModifierGroupMaster,
    Partner,
    ProductMaster,
    RecordChanges,
    RecordMove,
    SavedTradeRecords,
    StoreDay,
    StoreDayTotals,
    StoreMaster,
    TradeRecordRow,
    UnknownProduct,
    merge_moved_out,
    result_is_stale,
)
from core.versions import Version, master_replaces, trade_record_replaces


@dataclasses.dataclass
class _Key:
    """An API key as stored (ApiKeyInfo and KeyOwner are built from it)."""

    key_id: str
    partner_id: str
    key_hash: str
    created_at: dt.datetime
    revoked_at: dt.datetime | None = None
    last_used_at: dt.datetime | None = None


def _cleared(day: ClosedDay) -> ClosedDay:
    """The day without a result: what a new close or a reopening leaves."""
    return dataclasses.replace(day, checked_at=None, actual=None, differences=[], details=None)


class MemoryStorage:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._partners: dict[str, Partner] = {}
        self._keys: dict[str, _Key] = {}  # by key_hash
        self._stores_registered: dict[str, dict[str, dt.datetime]] = defaultdict(dict)
        self._directions: dict[str, dict[str, int]] = defaultdict(dict)
        self._request_counts: dict[tuple[str, int], int] = {}
        self._batches: dict[tuple[str, str], BatchMarker] = {}
        self._stores: dict[tuple[str, str], StoreMaster] = {}
        self._products: dict[tuple[str, str, str], ProductMaster] = {}  # store "" = all stores
        self._groups: dict[tuple[str, str], ModifierGroupMaster] = {}
        self._mappings: dict[str, Mapping] = {}
        self._records: dict[str, dict[str, TradeRecordRow]] = defaultdict(dict)  # partner -> trade_record_id
        self._days: dict[tuple[str, str, dt.date], ClosedDay] = {}  # partner's store-day
        # Every close a store-day received and every mapping a partner uploaded, kept whatever becomes of
        # their markers: the marker of a resend is rebuilt from them.
        self._close_receipts: dict[tuple[str, str, dt.date, str], BatchMarker] = {}
        self._mapping_receipts: dict[tuple[str, str], BatchMarker] = {}

    # -- HQ administration ------------------------------------------------------------------------

    def add_partner(self, partner_id: str, name: str, now: dt.datetime) -> Partner:
        with self._lock:
            if partner_id in self._partners:
                raise AdminError(f"partner {partner_id} already exists")
            self._partners[partner_id] = Partner(partner_id, name, True, now)
            return self._partners[partner_id]

    def set_partner_active(self, partner_id: str, active: bool) -> Partner:
        with self._lock:
            partner = require_partner(self.get_partner, partner_id)
            self._partners[partner_id] = dataclasses.replace(partner, active=active)
            return self._partners[partner_id]

    def get_partner(self, partner_id: str) -> Partner | None:
        with self._lock:
            return self._partners.get(partner_id)

    def list_partners(self) -> list[Partner]:
        with self._lock:
            return [self._partners[partner_id] for partner_id in sorted(self._partners)]

    def add_key(self, partner_id: str, key_id: str, key_hash: str, now: dt.datetime) -> ApiKeyInfo:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            if key_hash in self._keys or any(key.key_id == key_id for key in self._keys.values()):
                raise AdminError(f"key {key_id} already exists")
            self._keys[key_hash] = _Key(key_id, partner_id, key_hash, now)
            return ApiKeyInfo(key_id, partner_id, now, None)

    def revoke_key(self, partner_id: str, key_id: str, now: dt.datetime) -> ApiKeyInfo:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            key = next(
                (key for key in self._keys.values() if key.partner_id == partner_id and key.key_id == key_id), None
            )
            if key is None:
                raise AdminError(f"partner {partner_id} has no key {key_id}")
            if key.revoked_at is not None:
                raise AdminError(f"key {key_id} is already revoked")
            key.revoked_at = now
            return ApiKeyInfo(key_id, partner_id, key.created_at, now)

    def list_keys(self, partner_id: str) -> list[ApiKeyInfo]:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            keys = sorted(
                (key for key in self._keys.values() if key.partner_id == partner_id),
                key=lambda key: (key.created_at, key.key_id),
            )
            return [
                ApiKeyInfo(key.key_id, partner_id, key.created_at, key.revoked_at, key.last_used_at) for key in keys
            ]

    def register_stores(self, partner_id: str, store_ids: list[str], now: dt.datetime) -> None:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            registered = self._stores_registered[partner_id]
            known = set(store_ids) & registered.keys()
            if known:
                raise AdminError(f"already registered for {partner_id}: {', '.join(sorted(known))}")
            registered.update(dict.fromkeys(store_ids, now))

    def unregister_stores(self, partner_id: str, store_ids: list[str]) -> None:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            registered = self._stores_registered[partner_id]
            missing = set(store_ids) - registered.keys()
            if missing:
                raise AdminError(f"not registered for {partner_id}: {', '.join(sorted(missing))}")
            for store_id in store_ids:
                registered.pop(store_id, None)

    def registered_stores(self, partner_id: str) -> list[str]:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            return sorted(self._stores_registered[partner_id])

    def set_payment_direction(self, partner_id: str, payment_type: str, direction: int) -> None:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            self._directions[partner_id][payment_type] = direction

    def delete_payment_direction(self, partner_id: str, payment_type: str) -> bool:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            return self._directions[partner_id].pop(payment_type, None) is not None

    # -- request admission ------------------------------------------------------------------------

    def find_key(self, key_hash: str) -> KeyOwner | None:
        with self._lock:
            key = self._keys.get(key_hash)
            if key is None:
                return None
            return KeyOwner(
                self._partners[key.partner_id], key.key_id, key.key_hash, key.revoked_at is not None, key.last_used_at
            )

    def record_key_use(self, key_hash: str, hour: dt.datetime) -> None:
        with self._lock:
            key = self._keys.get(key_hash)
            if key is not None and (key.last_used_at is None or key.last_used_at < hour):
                key.last_used_at = hour

    def unregistered(self, partner_id: str, store_ids: set[str]) -> set[str]:
        with self._lock:
            return set(store_ids) - self._stores_registered.get(partner_id, {}).keys()

    def count_request(self, partner_id: str, window_start: int) -> int:
        with self._lock:
            count = self._request_counts.get((partner_id, window_start), 0) + 1
            self._request_counts[(partner_id, window_start)] = count
            if count == 1:  # first request of a new window: forget the old ones
                for old in [key for key in self._request_counts if key[0] == partner_id and key[1] < window_start]:
                    del self._request_counts[old]
            return count

    def ping(self) -> None:
        """Memory is always reachable."""

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

    def replace_mapping(self, marker: BatchMarker, entries: list[dict]) -> BatchMarker | None:
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

    def save_trade_records(self, marker: BatchMarker, rows: list[TradeRecordRow]) -> SavedTradeRecords:
        with self._lock:
            existing = self._batches.get((marker.partner_id, marker.batch_id))
            if existing is not None:
                return SavedTradeRecords(existing)
            records = self._records[marker.partner_id]
            newer, moves = 0, []
            for row in rows:  # in order: a batch may repeat a trade_record_id
                stored = records.get(row.trade_record_id)
                if not trade_record_replaces(
                    Version.of(row.version, row.last_modified_at),
                    None if stored is None else Version.of(stored.version, stored.last_modified_at),
                ):
                    continue
                newer += 1
                here = StoreDay(row.store_id, row.business_date)
                if stored is not None and StoreDay(stored.store_id, stored.business_date) != here:
                    moves.append(RecordMove(row.trade_record_id, StoreDay(stored.store_id, stored.business_date), here))
                records[row.trade_record_id] = copy.deepcopy(row)
            changes = RecordChanges(newer, tuple(moves))
            self._batches[(marker.partner_id, marker.batch_id)] = dataclasses.replace(marker, changes=changes)
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
                    _cleared(copy.deepcopy(day)),
                    revision=0 if stored is None else stored.revision,
                    moved_out=[] if stored is None else stored.moved_out,
                )
            return existing

    # -- master reads -----------------------------------------------------------------------------

    def get_store(self, partner_id: str, store_id: str) -> StoreMaster | None:
        with self._lock:
            return copy.deepcopy(self._stores.get((partner_id, store_id)))

    def get_product(self, partner_id: str, product_id: str, store_id: str | None) -> ProductMaster | None:
        with self._lock:
            return copy.deepcopy(self._products.get((partner_id, product_id, store_id or "")))

    def get_mapping(self, partner_id: str) -> Mapping:
        with self._lock:
            return copy.deepcopy(self._mappings.get(partner_id, Mapping(None, None, [])))

    def payment_directions(self, partner_id: str) -> dict[str, int]:
        with self._lock:
            return dict(self._directions.get(partner_id, {}))

    # -- trade record reads -----------------------------------------------------------------------

    def _day_records(self, partner_id: str, store_id: str, business_date: dt.date) -> list[TradeRecordRow]:
        return [
            row
            for row in self._records.get(partner_id, {}).values()
            if row.store_id == store_id and row.business_date == business_date
        ]

    def store_day_totals(self, partner_id: str, store_id: str, business_date: dt.date) -> StoreDayTotals:
        with self._lock:
            return StoreDayTotals.of_records(
                (
                    row.source_transaction_type,
                    row.item_rows,
                    row.payment_rows,
                    row.total_minor,
                    row.tax_minor,
                    row.tip_minor,
                    row.payments_minor,
                )
                for row in self._day_records(partner_id, store_id, business_date)
            )

    def store_day_rows(self, partner_id: str, store_id: str, business_date: dt.date) -> list[TradeRecordRow]:
        with self._lock:  # as the port says: the record as received is not read
            return [
                dataclasses.replace(
                    row, payments_minor=dict(row.payments_minor), document_json="", payment_ids=(), product_lines={}
                )
                for row in self._day_records(partner_id, store_id, business_date)
            ]

    def trade_records_by_payment_id(self, partner_id: str, payment_ids: Collection[str]) -> dict[str, set[str]]:
        wanted = set(payment_ids)
        users: dict[str, set[str]] = {}
        with self._lock:
            for row in self._records.get(partner_id, {}).values():
                for payment_id in wanted.intersection(row.payment_ids):
                    users.setdefault(payment_id, set()).add(row.trade_record_id)
        return users

    def unknown_products(self, partner_id: str, store_id: str, business_date: dt.date) -> list[UnknownProduct]:
        lines: Counter[str] = Counter()
        records: Counter[str] = Counter()
        with self._lock:
            for row in self._day_records(partner_id, store_id, business_date):
                for product_id, count in row.product_lines.items():
                    if (partner_id, product_id, "") in self._products or (
                        partner_id,
                        product_id,
                        store_id,
                    ) in self._products:
                        continue
                    lines[product_id] += count
                    records[product_id] += 1
        return [UnknownProduct(product_id, lines[product_id], records[product_id]) for product_id in sorted(lines)]

    # -- closed days and reconciliation results ---------------------------------------------------

    def get_closed_day(self, partner_id: str, store_id: str, business_date: dt.date) -> ClosedDay | None:
        with self._lock:
            return copy.deepcopy(self._days.get((partner_id, store_id, business_date)))

    def close_received(self, partner_id: str, store_id: str, business_date: dt.date, batch_id: str) -> bool:
        with self._lock:
            return (partner_id, store_id, business_date, batch_id) in self._close_receipts

    def closed_days(self, partner_id: str, status: str | None = None) -> list[ClosedDay]:
        with self._lock:
            days = [
                day
                for (partner, _, _), day in self._days.items()
                if partner == partner_id and (not status or day.status == status)
            ]
            return copy.deepcopy(sorted(days, key=lambda day: (day.business_date, day.store_id)))

    def days_due(self, before: dt.datetime) -> list[tuple[str, ClosedDay]]:
        with self._lock:
            return copy.deepcopy(
                [
                    (partner_id, day)
                    for (partner_id, _, _), day in self._days.items()
                    if day.status == "RECEIVED" and day.due_at < before
                ]
            )

    def save_result(self, partner_id: str, day: ClosedDay) -> bool:
        with self._lock:
            key = (partner_id, day.store_id, day.business_date)
            stored = self._days.get(key)
            if stored is None or (stored.close_batch_id, stored.revision) != (day.close_batch_id, day.revision):
                return False
            self._days[key] = dataclasses.replace(
                stored,
                status=day.status,
                checked_at=day.checked_at,
                actual=copy.deepcopy(day.actual),
                differences=list(day.differences),
                details=copy.deepcopy(day.details),
            )
            return True

    def reopen_day(
        self,
        partner_id: str,
        day: StoreDay,
        due_at: dt.datetime,
        moved_out: list[RecordMove],
        checked_before: dt.datetime | None = None,
    ) -> ClosedDay | None:
        with self._lock:
            key = (partner_id, day.store_id, day.business_date)
            closed = self._days.get(key)
            if closed is None:
                return None
            reopen = result_is_stale(closed, checked_before)
            changed = dataclasses.replace(
                closed, revision=closed.revision + 1, moved_out=merge_moved_out(closed.moved_out, day, moved_out)
            )
            if reopen:  # the result is gone, as when a new close arrives: the day is due again
                changed = _cleared(dataclasses.replace(changed, status="RECEIVED", due_at=due_at))
            self._days[key] = changed
            return copy.deepcopy(changed) if reopen else None

    def postpone(self, partner_id: str, store_id: str, business_date: dt.date, due_at: dt.datetime) -> None:
        with self._lock:
            key = (partner_id, store_id, business_date)
            if key in self._days:
                self._days[key] = dataclasses.replace(self._days[key], due_at=due_at)


if TYPE_CHECKING:  # mypy checks the memory storage against the port, as open_storage checks the others

    def _as_storage(storage: MemoryStorage) -> Storage:
        return storage
