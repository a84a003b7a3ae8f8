"""The partners' batches written to the storage database: stores, products, the mapping, trade records
and daily closes, each through markers.write_batch (the marker and the rows in one transaction).

Which version of a record wins is core/versions.py's rule. The upserts below state it again as SQL
WHERE clauses, because there it decides row by row inside SQLite (the fast path); tests/contract/test_version_rule.py
feeds the same cases through both and checks that they agree.
"""

from __future__ import annotations

import datetime as dt
import sqlite3

from backends.sqlite.database import SqliteDatabase
from backends.sqlite.markers import close_receipt, find_marker, mapping_receipt, write_batch
from backends.sqlite.payment_index import index_new, index_stored, records_to_compare, unindex_stored
from backends.sqlite.rows import stored_versions, to_json
from core.clock import epoch_micros, to_utc_text
from core.records import (
    BatchMarker,
    ClosedDay,
    ModifierGroupMaster,
    ProductMaster,
    RecordChanges,
    SavedTradeRecords,
    StoreMaster,
    TradeRecordRow,
    record_changes,
)
from core.stored_json import JsonObject

# core.versions.master_replaces with Version(0, last_modified_at): a store has no version number.
UPSERT_STORE = (
    "INSERT INTO stores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
    "currency = excluded.currency, country_code = excluded.country_code, "
    "time_zone = excluded.time_zone, workday_start = excluded.workday_start, "
    "prices_include_tax = excluded.prices_include_tax, "
    "last_modified_us = excluded.last_modified_us, document = excluded.document "
    "WHERE excluded.last_modified_us >= stores.last_modified_us"
)

# core.versions.master_replaces: the higher version, or an equal one with a later or equal last_modified_at.
UPSERT_PRODUCT = (
    "INSERT INTO products VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
    "version = excluded.version, last_modified_us = excluded.last_modified_us, "
    "document = excluded.document WHERE excluded.version > products.version "
    "OR (excluded.version = products.version AND excluded.last_modified_us >= products.last_modified_us)"
)

# core.versions.trade_record_replaces: the higher version, or an equal one with a later last_modified_at.
UPSERT_TRADE_RECORD = (
    "INSERT INTO trade_records (partner_id, trade_record_id, version, last_modified_us, store_id, "
    "business_date, source_type, item_rows, payment_rows, total_minor, tax_minor, tip_minor, "
    "payments, document, payment_ids, product_lines, batch_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT DO UPDATE SET version = excluded.version, "
    "last_modified_us = excluded.last_modified_us, store_id = excluded.store_id, "
    "business_date = excluded.business_date, source_type = excluded.source_type, "
    "item_rows = excluded.item_rows, payment_rows = excluded.payment_rows, "
    "total_minor = excluded.total_minor, tax_minor = excluded.tax_minor, "
    "tip_minor = excluded.tip_minor, payments = excluded.payments, document = excluded.document, "
    "payment_ids = excluded.payment_ids, product_lines = excluded.product_lines, batch_id = excluded.batch_id "
    "WHERE excluded.version > trade_records.version OR (excluded.version = trade_records.version "
    "AND excluded.last_modified_us > trade_records.last_modified_us)"
)

# The last close received wins: it replaces the day's previous close and its result.
UPSERT_CLOSED_DAY = (
    "INSERT INTO closed_days (partner_id, store_id, business_date, close_batch_id, currency, expected, "
    "received_at, due_at, status, checked_at, actual, differences, details) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, '[]', NULL) "
    "ON CONFLICT DO UPDATE SET close_batch_id = excluded.close_batch_id, "
    "currency = excluded.currency, expected = excluded.expected, "
    "received_at = excluded.received_at, due_at = excluded.due_at, status = excluded.status, "
    "checked_at = NULL, actual = NULL, differences = '[]', details = NULL"
)


class SqliteBatchWrites:
    db: SqliteDatabase

    def find_batch(self, partner_id: str, batch_id: str) -> BatchMarker | None:
        with self.db.read() as db:
            return find_marker(db, partner_id, batch_id)

    def save_stores(self, marker: BatchMarker, stores: list[StoreMaster]) -> BatchMarker | None:
        def write_rows(db: sqlite3.Connection) -> None:
            db.executemany(
                UPSERT_STORE,
                [
                    (
                        marker.partner_id,
                        s.store_id,
                        s.currency,
                        s.country_code,
                        s.time_zone,
                        s.workday_start,
                        int(s.prices_include_tax),
                        epoch_micros(s.last_modified_at),
                        to_json(s.document),
                    )
                    for s in stores
                ],
            )

        return write_batch(self.db, marker, write_rows).existing

    def save_products(
        self, marker: BatchMarker, products: list[ProductMaster], groups: list[ModifierGroupMaster]
    ) -> BatchMarker | None:
        def write_rows(db: sqlite3.Connection) -> None:
            db.executemany(
                UPSERT_PRODUCT,
                [
                    (
                        marker.partner_id,
                        p.product_id,
                        p.store_id or "",
                        p.version,
                        epoch_micros(p.last_modified_at),
                        to_json(p.document),
                    )
                    for p in products
                ],
            )
            db.executemany(
                "INSERT INTO modifier_groups VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET document = excluded.document",
                [(marker.partner_id, g.group_id, to_json(g.document)) for g in groups],
            )

        return write_batch(self.db, marker, write_rows).existing

    def replace_mapping(self, marker: BatchMarker, entries: list[JsonObject]) -> BatchMarker | None:
        def write_rows(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO mapping_receipts VALUES (?, ?, ?, ?, ?)",
                (
                    marker.partner_id,
                    marker.batch_id,
                    marker.record_count,
                    marker.body_digest,
                    to_utc_text(marker.received_at),
                ),
            )
            db.execute(
                "INSERT INTO mappings VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                "batch_id = excluded.batch_id, updated_at = excluded.updated_at, entries = excluded.entries",
                (marker.partner_id, marker.batch_id, to_utc_text(marker.received_at), to_json(entries)),
            )

        return write_batch(
            self.db, marker, write_rows, lambda db: mapping_receipt(db, marker.partner_id, marker.batch_id)
        ).existing

    def save_trade_records(
        self, marker: BatchMarker, rows: list[TradeRecordRow], *, looked_up: bool = False
    ) -> SavedTradeRecords:
        del looked_up  # the marker is looked up inside the write's own transaction (lock), which costs nothing

        def write_rows(db: sqlite3.Connection) -> RecordChanges:
            # Which rows win and which store-days they leave, read under the write lock before the upsert
            stored = stored_versions(db, marker.partner_id, [row.trade_record_id for row in rows])
            changes = record_changes(rows, stored)
            compared = records_to_compare(rows, stored)  # the upsert decides which version of these wins
            unindex_stored(db, marker.partner_id, compared)
            db.executemany(
                UPSERT_TRADE_RECORD,
                [
                    (
                        marker.partner_id,
                        r.trade_record_id,
                        r.version,
                        epoch_micros(r.last_modified_at),
                        r.store_id,
                        r.business_date.isoformat(),
                        r.source_transaction_type,
                        r.item_rows,
                        r.payment_rows,
                        r.total_minor,
                        r.tax_minor,
                        r.tip_minor,
                        to_json(r.payments_minor),
                        r.document_json,
                        to_json(r.payment_ids),
                        to_json(r.product_lines),
                        marker.batch_id,
                    )
                    for r in rows
                ],
            )
            index_new(db, marker.partner_id, rows, compared)
            index_stored(db, marker.partner_id, compared)
            return changes  # the marker keeps what the records changed

        written = write_batch(self.db, marker, write_rows)
        if written.existing is not None:
            return SavedTradeRecords(written.existing)
        assert written.changes is not None  # write_rows returned them
        return SavedTradeRecords(None, written.changes)

    def save_daily_close(self, marker: BatchMarker, day: ClosedDay) -> BatchMarker | None:
        def write_rows(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO close_receipts VALUES (?, ?, ?, ?, ?, ?)",
                (
                    marker.partner_id,
                    day.store_id,
                    day.business_date.isoformat(),
                    marker.batch_id,
                    marker.body_digest,
                    to_utc_text(marker.received_at),
                ),
            )
            db.execute(
                UPSERT_CLOSED_DAY,
                (
                    marker.partner_id,
                    day.store_id,
                    day.business_date.isoformat(),
                    day.close_batch_id,
                    day.currency,
                    to_json(day.expected),
                    to_utc_text(day.received_at),
                    to_utc_text(day.due_at),
                    day.status,
                ),
            )

        return write_batch(
            self.db,
            marker,
            write_rows,
            lambda db: close_receipt(db, marker.partner_id, day.store_id, day.business_date, marker.batch_id),
        ).existing

    def close_received(self, partner_id: str, store_id: str, business_date: dt.date, batch_id: str) -> bool:
        with self.db.read() as db:
            return close_receipt(db, partner_id, store_id, business_date, batch_id) is not None
