"""What the Parquet export reads of the memory storage (core.ports.ExportReads): copies, as every read."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from backends.memory.state import MemoryState
from core.clock import epoch_micros
from core.documents_page import DocumentsPage
from core.records import StoreDay


class MemoryExportReads(MemoryState):
    def days_checked(
        self, after: dt.datetime | None, through: dt.datetime, limit: int | None = None
    ) -> list[tuple[str, StoreDay]]:
        with self._lock:
            days = [
                (partner_id, StoreDay(store_id, business_date))
                for (partner_id, store_id, business_date), day in self._days.items()
                if day.checked_at is not None
                and (after is None or day.checked_at > after)
                and day.checked_at <= through
            ]
        return sorted(days, key=lambda entry: (entry[0], entry[1].business_date, entry[1].store_id))[:limit]

    def store_day_documents(self, partner_id: str, store_id: str, business_date: dt.date) -> Iterator[DocumentsPage]:
        with self._lock:  # the day as it is now: its values copied under the lock, as every read copies
            rows = [
                row
                for row in self._records.get(partner_id, {}).values()
                if row.store_id == store_id and row.business_date == business_date
            ]
            page = DocumentsPage(
                [row.trade_record_id for row in rows],
                [row.version for row in rows],
                [epoch_micros(row.last_modified_at) for row in rows],
                [row.source_transaction_type for row in rows],
                [row.item_rows for row in rows],
                [row.payment_rows for row in rows],
                [row.total_minor for row in rows],
                [row.tax_minor for row in rows],
                [row.tip_minor for row in rows],
                [row.document_json.encode() for row in rows],
            )
        if rows:
            yield page
