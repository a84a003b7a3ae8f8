"""What the use cases read from the storage database: master data, the mapping in effect, a store-day's
trade records (as sums or narrow rows), its batches, and the closed days with their results."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Collection
from typing import Any

import orjson

from backends.sqlite.database import SqliteDatabase
from backends.sqlite.rows import closed_day_of, in_chunks, store_of, stored_versions
from core.clock import from_epoch_micros, from_utc_text, to_utc_text
from core.records import (
    ClosedDay,
    Mapping,
    ProductMaster,
    SourceTypeTotals,
    StoreDayTotals,
    StoredVersion,
    StoreMaster,
    TradeRecordRow,
    UnknownProduct,
)

# The product_ids of a store-day's item lines that the product master holds neither for the store nor for
# all stores (store_key ''); each record lists a product_id once, with its number of lines.
DAY_UNKNOWN_PRODUCTS = (
    "SELECT l.key, SUM(l.value), COUNT(*) FROM trade_records t, json_each(t.product_lines) l "
    "WHERE t.partner_id = ? AND t.store_id = ? AND t.business_date = ? AND NOT EXISTS ("
    "    SELECT 1 FROM products p WHERE p.partner_id = t.partner_id AND p.product_id = l.key "
    "    AND p.store_key IN ('', t.store_id)) "
    "GROUP BY l.key ORDER BY l.key"
)

# A store-day's sums, read from the index trade_records_day_by_type alone.
DAY_BY_SOURCE_TYPE = (
    "SELECT source_type, COUNT(*), SUM(item_rows), SUM(payment_rows), SUM(total_minor), SUM(tax_minor), "
    "SUM(tip_minor) FROM trade_records WHERE partner_id = ? AND store_id = ? AND business_date = ? "
    "GROUP BY source_type"
)
DAY_BY_PAYMENT_TYPE = (
    "SELECT p.key, SUM(p.value) FROM trade_records t, json_each(t.payments) p "
    "WHERE t.partner_id = ? AND t.store_id = ? AND t.business_date = ? GROUP BY p.key"
)


class SqliteReads:
    db: SqliteDatabase

    def get_store(self, partner_id: str, store_id: str) -> StoreMaster | None:
        with self.db.read() as db:
            row = db.execute(
                "SELECT * FROM stores WHERE partner_id = ? AND store_id = ?", (partner_id, store_id)
            ).fetchone()
        return None if row is None else store_of(row)

    def get_product(self, partner_id: str, product_id: str, store_id: str | None) -> ProductMaster | None:
        with self.db.read() as db:
            row = db.execute(
                "SELECT * FROM products WHERE partner_id = ? AND product_id = ? AND store_key = ?",
                (partner_id, product_id, store_id or ""),
            ).fetchone()
        if row is None:
            return None
        return ProductMaster(
            row["product_id"],
            row["store_key"] or None,
            row["version"],
            from_epoch_micros(row["last_modified_us"]),
            orjson.loads(row["document"]),
        )

    def get_mapping(self, partner_id: str) -> Mapping:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM mappings WHERE partner_id = ?", (partner_id,)).fetchone()
        if row is None:
            return Mapping(None, None, [])
        return Mapping(row["batch_id"], from_utc_text(row["updated_at"]), orjson.loads(row["entries"]))

    def get_closed_day(self, partner_id: str, store_id: str, business_date: dt.date) -> ClosedDay | None:
        with self.db.read() as db:
            row = db.execute(
                "SELECT * FROM closed_days WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                (partner_id, store_id, business_date.isoformat()),
            ).fetchone()
        return None if row is None else closed_day_of(row)

    def store_day_totals(self, partner_id: str, store_id: str, business_date: dt.date) -> StoreDayTotals:
        day = (partner_id, store_id, business_date.isoformat())
        with self.db.snapshot() as db:  # both sums from the same state of the day
            try:
                groups = db.execute(DAY_BY_SOURCE_TYPE, day).fetchall()
                payments = db.execute(DAY_BY_PAYMENT_TYPE, day).fetchall()
            except sqlite3.OperationalError as error:
                if "integer overflow" not in str(error):
                    raise
                # SQLite sums in 64 bits; sums beyond them (amounts near 2**53 times thousands) in Python.
                rows = db.execute(
                    "SELECT source_type, item_rows, payment_rows, total_minor, tax_minor, tip_minor, payments "
                    "FROM trade_records WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                    day,
                )
                return StoreDayTotals.of_records((*row[:6], orjson.loads(row[6])) for row in rows)
        return StoreDayTotals(
            {row[0]: SourceTypeTotals(*row[1:]) for row in groups}, {row[0]: row[1] for row in payments}
        )

    def store_day_rows(self, partner_id: str, store_id: str, business_date: dt.date) -> list[TradeRecordRow]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT trade_record_id, version, last_modified_us, source_type, item_rows, payment_rows, "
                "total_minor, tax_minor, tip_minor, payments FROM trade_records "
                "WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                (partner_id, store_id, business_date.isoformat()),
            ).fetchall()
        return [
            TradeRecordRow(
                r[0],
                r[1],
                from_epoch_micros(r[2]),
                store_id,
                business_date,
                r[3],
                r[4],
                r[5],
                r[6],
                r[7],
                r[8],
                orjson.loads(r[9]),
            )
            for r in rows
        ]

    def batch_seqs(self, partner_id: str, store_id: str, business_date: dt.date) -> list[int]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT batch_seq FROM batches WHERE partner_id = ? AND store_id = ? AND business_date = ? "
                "AND kind = 'trade-records' ORDER BY batch_seq",
                (partner_id, store_id, business_date.isoformat()),
            )
            return [row[0] for row in rows]

    def batches_with_seq(
        self, partner_id: str, store_id: str, business_date: dt.date, batch_seq: int, limit: int
    ) -> list[str]:
        # Only trade record batches have a batch_seq. Naming kind as well would make SQLite's planner
        # prefer the primary key (partner_id alone: every batch of the partner) to this covering index.
        with self.db.read() as db:
            rows = db.execute(
                "SELECT batch_id FROM batches WHERE partner_id = ? AND store_id = ? AND business_date = ? "
                "AND batch_seq = ? LIMIT ?",
                (partner_id, store_id, business_date.isoformat(), batch_seq, limit),
            )
            return [row[0] for row in rows]

    def trade_records_by_payment_id(self, partner_id: str, payment_ids: Collection[str]) -> dict[str, set[str]]:
        ids = sorted(set(payment_ids))
        users: dict[str, set[str]] = {}
        with self.db.snapshot() as db:
            for chunk, marks in in_chunks(ids):
                for payment_id, trade_record_id in db.execute(
                    "SELECT payment_id, trade_record_id FROM trade_record_payments "
                    f"WHERE partner_id = ? AND payment_id IN ({marks})",
                    (partner_id, *chunk),
                ):
                    users.setdefault(payment_id, set()).add(trade_record_id)
        return users

    def trade_record_versions(self, partner_id: str, trade_record_ids: Collection[str]) -> dict[str, StoredVersion]:
        with self.db.snapshot() as db:
            return stored_versions(db, partner_id, trade_record_ids)

    def unknown_products(self, partner_id: str, store_id: str, business_date: dt.date) -> list[UnknownProduct]:
        with self.db.read() as db:
            rows = db.execute(DAY_UNKNOWN_PRODUCTS, (partner_id, store_id, business_date.isoformat())).fetchall()
        return [UnknownProduct(row[0], row[1], row[2]) for row in rows]

    def closed_days(self, partner_id: str, status: str | None = None) -> list[ClosedDay]:
        query = "SELECT * FROM closed_days WHERE partner_id = ?"
        args: tuple[Any, ...] = (partner_id,)
        if status:
            query += " AND status = ?"
            args += (status,)
        with self.db.read() as db:
            rows = db.execute(query + " ORDER BY business_date, store_id", args).fetchall()
        return [closed_day_of(row) for row in rows]

    def days_due(self, before: dt.datetime) -> list[tuple[str, ClosedDay]]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT * FROM closed_days WHERE status = 'RECEIVED' AND due_at < ?", (to_utc_text(before),)
            ).fetchall()
        return [(row["partner_id"], closed_day_of(row)) for row in rows]
