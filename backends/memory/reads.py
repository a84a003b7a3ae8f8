"""Master data and trade record reads of the memory storage (copies: a caller never changes what is
stored)."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
from collections import Counter
from collections.abc import Collection

from backends.memory.state import MemoryState, stored_version_of
from core.records import (
    Mapping,
    ProductMaster,
    StoreDayTotals,
    StoredVersion,
    StoreMaster,
    TradeRecordRow,
    UnknownProduct,
)


class MemoryReads(MemoryState):
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

    def trade_record_versions(self, partner_id: str, trade_record_ids: Collection[str]) -> dict[str, StoredVersion]:
        with self._lock:
            records = self._records.get(partner_id, {})
            stored = [records[record_id] for record_id in set(trade_record_ids) if record_id in records]
        return {row.trade_record_id: stored_version_of(row) for row in stored}

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
