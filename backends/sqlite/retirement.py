"""Store-days leaving the storage database once past the retention (decision 0086):
their trade records with their payment-id entries, then their trade record batches, each step one short
transaction, so that the partners' writes never wait long for the write lock. Closes, their receipts and
results stay."""

from __future__ import annotations

import datetime as dt

from backends.sqlite.database import SqliteDatabase
from backends.sqlite.payment_index import unindex_stored
from backends.sqlite.rows import in_chunks
from core.clock import from_utc_text_or_none
from core.retention import HeldDay

# The store-days that still hold something: every day with records has a batch of its own date (a record
# is accepted only in a batch of its business_date), and batches leave last.
HELD_DAYS = (
    "SELECT DISTINCT b.partner_id, b.store_id, b.business_date, c.status, c.checked_at FROM batches b "
    "LEFT JOIN closed_days c ON (c.partner_id, c.store_id, c.business_date) = (b.partner_id, b.store_id, "
    "b.business_date) WHERE b.kind = 'trade-records' AND b.business_date < ? "
    "ORDER BY b.business_date, b.partner_id, b.store_id"
)
DAY_RECORDS = (
    "SELECT trade_record_id FROM trade_records WHERE partner_id = ? AND store_id = ? AND business_date = ? LIMIT ?"
)
DELETE_DAY_BATCHES = (
    "DELETE FROM batches WHERE (partner_id, batch_id) IN (SELECT partner_id, batch_id FROM batches "
    "WHERE partner_id = ? AND store_id = ? AND business_date = ? AND kind = 'trade-records' LIMIT ?)"
)


class SqliteRetirement:
    db: SqliteDatabase
    retention_days: int

    def held_days_before(self, before: dt.date) -> list[HeldDay]:
        with self.db.read() as db:
            return [
                HeldDay(
                    row["partner_id"],
                    row["store_id"],
                    dt.date.fromisoformat(row["business_date"]),
                    row["status"],
                    from_utc_text_or_none(row["checked_at"]),
                )
                for row in db.execute(HELD_DAYS, (before.isoformat(),))
            ]

    def retire_rows(self, partner_id: str, store_id: str, business_date: dt.date, max_rows: int) -> int:
        day = (partner_id, store_id, business_date.isoformat())
        with self.db.write() as db:
            ids = [row[0] for row in db.execute(DAY_RECORDS, (*day, max_rows))]
            if not ids:
                return db.execute(DELETE_DAY_BATCHES, (*day, max_rows)).rowcount
            unindex_stored(db, partner_id, set(ids))  # the payment_ids their stored versions hold
            for chunk, marks in in_chunks(ids):
                db.execute(
                    f"DELETE FROM trade_records WHERE partner_id = ? AND trade_record_id IN ({marks})",
                    (partner_id, *chunk),
                )
            return len(ids)
