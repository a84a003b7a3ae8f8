"""A store-day's latest records a page at a time, in memory: the order and cursor of the SQLite adapter
(source_type, then trade_record_id)."""

from __future__ import annotations

import datetime as dt

import orjson

from backends.memory.state import MemoryState
from core.day_records import DayRecord, DayRecordsPage, keyset_after, keyset_cursor


class MemoryDayRecords(MemoryState):
    def day_records(
        self,
        partner_id: str,
        store_id: str,
        business_date: dt.date,
        *,
        limit: int,
        cursor: str | None = None,
        source_type: str | None = None,
    ) -> DayRecordsPage:
        after = keyset_after(cursor) if cursor is not None else None
        with self._lock:
            rows = sorted(
                (
                    row
                    for row in self._records.get(partner_id, {}).values()
                    if row.store_id == store_id
                    and row.business_date == business_date
                    and (source_type is None or row.source_transaction_type == source_type)
                    and (after is None or (row.source_transaction_type, row.trade_record_id) > after)
                ),
                key=lambda row: (row.source_transaction_type, row.trade_record_id),
            )
            page = rows[:limit]
            records = [
                DayRecord(
                    row.trade_record_id,
                    row.version,
                    row.source_transaction_type,
                    _status(row.document_json),
                    row.item_rows,
                    row.payment_rows,
                    row.total_minor,
                    row.tax_minor,
                    row.tip_minor,
                    dict(row.payments_minor),
                    self._record_batches.get((partner_id, row.trade_record_id)),
                )
                for row in page
            ]
        last = page[-1] if len(rows) > limit else None
        return DayRecordsPage(
            records,
            None if last is None else keyset_cursor(last.source_transaction_type, last.trade_record_id),
        )


def _status(document_json: str) -> str | None:
    try:
        document = orjson.loads(document_json) if document_json else None
    except orjson.JSONDecodeError:
        return None  # as SQLite's json_valid: a document that is not JSON has no status
    status = document.get("status") if isinstance(document, dict) else None
    return status if isinstance(status, str) else None
