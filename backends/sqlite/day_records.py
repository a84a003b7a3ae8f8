"""A store-day's latest records a page at a time (core.day_records.DayRecordReads): keyset pages in the
order of the index trade_records_day_by_type (source_type, then trade_record_id), so a page reads its own
entries of the index and its rows' documents only, however big the day (decision 0096)."""

from __future__ import annotations

import datetime as dt

import orjson

from backends.sqlite.database import SqliteDatabase
from core.day_records import DayRecord, DayRecordsPage, keyset_after, keyset_cursor

_COLUMNS = (
    "SELECT source_type, trade_record_id, version, "
    "CASE WHEN json_valid(document) THEN json_extract(document, '$.status') END, item_rows, payment_rows, "
    "total_minor, tax_minor, tip_minor, payments, batch_id FROM trade_records "
    "WHERE partner_id = ? AND store_id = ? AND business_date = ?"
)


class SqliteDayRecords:
    db: SqliteDatabase

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
        sql = _COLUMNS
        params: list[object] = [partner_id, store_id, business_date.isoformat()]  # type: list[object]
        if source_type is not None:
            sql += " AND source_type = ?"
            params.append(source_type)
        if cursor is not None:
            sql += " AND (source_type, trade_record_id) > (?, ?)"
            params += keyset_after(cursor)
        sql += " ORDER BY source_type, trade_record_id LIMIT ?"
        params.append(limit + 1)  # one more: whether a next page exists
        with self.db.read() as db:
            rows = db.execute(sql, params).fetchall()
        page = rows[:limit]
        records = [
            DayRecord(
                row[1],
                row[2],
                row[0],
                row[3] if isinstance(row[3], str) else None,
                row[4],
                row[5],
                row[6],
                row[7],
                row[8],
                orjson.loads(row[9]),
                row[10] or None,
            )
            for row in page
        ]
        return DayRecordsPage(records, keyset_cursor(page[-1][0], page[-1][1]) if len(rows) > limit else None)
