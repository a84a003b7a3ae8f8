"""The embedded storage adapter: SQLite (WAL) under POS_DATA_DIR.

A batch and its marker commit in one transaction, so a crash never leaves half a batch; the
marker's primary key makes a concurrent resend of the same batch_id lose cleanly.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sqlite3
from pathlib import Path

import orjson

from backends.sqlite_db import SqliteDatabase
from core import faults
from core.clock import epoch_micros, from_epoch_micros, from_utc_text, to_utc_text
from core.ports import AdminError
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
    SourceTypeTotals,
    StoreDay,
    StoreDayTotals,
    StoreMaster,
    TradeRecordRow,
    UnknownProduct,
    merge_moved_out,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS partners (
    partner_id TEXT PRIMARY KEY, name TEXT NOT NULL, active INTEGER NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY, partner_id TEXT NOT NULL REFERENCES partners(partner_id),
    key_hash TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL, revoked_at TEXT, last_used_at TEXT);
CREATE INDEX IF NOT EXISTS api_keys_by_partner ON api_keys(partner_id);
CREATE TABLE IF NOT EXISTS registered_stores (
    partner_id TEXT NOT NULL, store_id TEXT NOT NULL, registered_at TEXT NOT NULL,
    PRIMARY KEY (partner_id, store_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS payment_directions (
    partner_id TEXT NOT NULL, payment_type TEXT NOT NULL, direction INTEGER NOT NULL,
    PRIMARY KEY (partner_id, payment_type)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS request_counts (
    partner_id TEXT NOT NULL, window_start INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (partner_id, window_start)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS batches (
    partner_id TEXT NOT NULL, batch_id TEXT NOT NULL, kind TEXT NOT NULL, record_count INTEGER NOT NULL,
    body_digest TEXT NOT NULL, received_at TEXT NOT NULL,
    store_id TEXT, business_date TEXT, batch_seq INTEGER, changes TEXT,
    PRIMARY KEY (partner_id, batch_id)) WITHOUT ROWID;
-- A store-day's batches (batch_seqs), and those with one batch_seq (batches_with_seq, read before each
-- batch of trade records is accepted); it replaces batches_by_day, its prefix, in databases made before it.
CREATE INDEX IF NOT EXISTS batches_by_day_seq ON batches(partner_id, store_id, business_date, batch_seq)
    WHERE store_id IS NOT NULL;
DROP INDEX IF EXISTS batches_by_day;
CREATE TABLE IF NOT EXISTS stores (
    partner_id TEXT NOT NULL, store_id TEXT NOT NULL, currency TEXT NOT NULL, country_code TEXT NOT NULL,
    time_zone TEXT NOT NULL, workday_start TEXT NOT NULL, prices_include_tax INTEGER NOT NULL,
    last_modified_us INTEGER NOT NULL, document TEXT NOT NULL,
    PRIMARY KEY (partner_id, store_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS products (
    partner_id TEXT NOT NULL, product_id TEXT NOT NULL, store_key TEXT NOT NULL, version INTEGER NOT NULL,
    last_modified_us INTEGER NOT NULL, document TEXT NOT NULL,
    PRIMARY KEY (partner_id, product_id, store_key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS modifier_groups (
    partner_id TEXT NOT NULL, group_id TEXT NOT NULL, document TEXT NOT NULL,
    PRIMARY KEY (partner_id, group_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mappings (
    partner_id TEXT PRIMARY KEY, batch_id TEXT NOT NULL, updated_at TEXT NOT NULL, entries TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trade_records (
    partner_id TEXT NOT NULL, trade_record_id TEXT NOT NULL, version INTEGER NOT NULL,
    last_modified_us INTEGER NOT NULL, store_id TEXT NOT NULL, business_date TEXT NOT NULL,
    source_type TEXT NOT NULL, item_rows INTEGER NOT NULL, payment_rows INTEGER NOT NULL,
    total_minor INTEGER NOT NULL, tax_minor INTEGER NOT NULL, tip_minor INTEGER NOT NULL,
    payments TEXT NOT NULL, document TEXT NOT NULL,
    payment_ids TEXT NOT NULL DEFAULT '[]', product_lines TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (partner_id, trade_record_id));
-- Reconciliation sums a store-day from this index alone (it covers every column it reads); it replaces
-- trade_records_by_day (partner, store, date), its prefix, in databases made before it.
CREATE INDEX IF NOT EXISTS trade_records_day_totals ON trade_records(partner_id, store_id, business_date,
    source_type, item_rows, payment_rows, total_minor, tax_minor, tip_minor, payments);
DROP INDEX IF EXISTS trade_records_by_day;
-- Which trade records use a payment_id (payment_id is unique within the partner, spec 2): the payment_ids
-- of each record's latest version, kept in step with trade_records.payment_ids by the two triggers, so
-- that whichever version wins the upsert is the one indexed.
CREATE TABLE IF NOT EXISTS trade_record_payments (
    partner_id TEXT NOT NULL, payment_id TEXT NOT NULL, trade_record_id TEXT NOT NULL,
    PRIMARY KEY (partner_id, payment_id, trade_record_id)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS trade_record_payments_on_insert AFTER INSERT ON trade_records BEGIN
    INSERT OR IGNORE INTO trade_record_payments
        SELECT new.partner_id, value, new.trade_record_id FROM json_each(new.payment_ids);
END;
CREATE TRIGGER IF NOT EXISTS trade_record_payments_on_update AFTER UPDATE OF payment_ids ON trade_records BEGIN
    DELETE FROM trade_record_payments WHERE partner_id = old.partner_id AND trade_record_id = old.trade_record_id
        AND payment_id IN (SELECT value FROM json_each(old.payment_ids));
    INSERT OR IGNORE INTO trade_record_payments
        SELECT new.partner_id, value, new.trade_record_id FROM json_each(new.payment_ids);
END;
CREATE TABLE IF NOT EXISTS closed_days (
    partner_id TEXT NOT NULL, store_id TEXT NOT NULL, business_date TEXT NOT NULL,
    close_batch_id TEXT NOT NULL, currency TEXT NOT NULL, expected TEXT NOT NULL,
    received_at TEXT NOT NULL, due_at TEXT NOT NULL, status TEXT NOT NULL,
    checked_at TEXT, actual TEXT, differences TEXT NOT NULL, details TEXT,
    revision INTEGER NOT NULL DEFAULT 0, moved_out TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (partner_id, store_id, business_date)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS closed_days_due ON closed_days(status, due_at);
-- Every close a store-day received and every mapping a partner uploaded, kept for good whatever becomes
-- of their batch markers: an earlier one resent is known as a resend and never replaces a later one.
CREATE TABLE IF NOT EXISTS close_receipts (
    partner_id TEXT NOT NULL, store_id TEXT NOT NULL, business_date TEXT NOT NULL, batch_id TEXT NOT NULL,
    body_digest TEXT NOT NULL, received_at TEXT NOT NULL,
    PRIMARY KEY (partner_id, store_id, business_date, batch_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mapping_receipts (
    partner_id TEXT NOT NULL, batch_id TEXT NOT NULL, record_count INTEGER NOT NULL, body_digest TEXT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (partner_id, batch_id)) WITHOUT ROWID;
"""

# Databases made before trade_records had payment_ids and product_lines get them on open, filled from each
# stored record's document (the record as received); the update trigger then indexes the payment_ids.
RECORD_CODE_COLUMNS = {
    "payment_ids": "ALTER TABLE trade_records ADD COLUMN payment_ids TEXT NOT NULL DEFAULT '[]'",
    "product_lines": "ALTER TABLE trade_records ADD COLUMN product_lines TEXT NOT NULL DEFAULT '{}'",
}
FILL_RECORD_CODES = (
    "UPDATE trade_records SET "
    "payment_ids = (SELECT json_group_array(json_extract(p.value, '$.payment_id')) "
    "    FROM json_each(trade_records.document, '$.payments') p), "
    "product_lines = (SELECT json_group_object(product_id, lines) FROM ("
    "    SELECT json_extract(i.value, '$.product_id') AS product_id, COUNT(*) AS lines "
    "    FROM json_each(trade_records.document, '$.items') i GROUP BY 1)) "
    "WHERE json_valid(document)")

# The product_ids of a store-day's item lines that the product master holds neither for the store nor for
# all stores (store_key ''); each record lists a product_id once, with its number of lines.
DAY_UNKNOWN_PRODUCTS = (
    "SELECT l.key, SUM(l.value), COUNT(*) FROM trade_records t, json_each(t.product_lines) l "
    "WHERE t.partner_id = ? AND t.store_id = ? AND t.business_date = ? AND NOT EXISTS ("
    "    SELECT 1 FROM products p WHERE p.partner_id = t.partner_id AND p.product_id = l.key "
    "    AND p.store_key IN ('', t.store_id)) "
    "GROUP BY l.key ORDER BY l.key")

# A store-day's sums, read from the index trade_records_day_totals alone.
DAY_BY_SOURCE_TYPE = (
    "SELECT source_type, COUNT(*), SUM(item_rows), SUM(payment_rows), SUM(total_minor), SUM(tax_minor), "
    "SUM(tip_minor) FROM trade_records WHERE partner_id = ? AND store_id = ? AND business_date = ? "
    "GROUP BY source_type")
DAY_BY_PAYMENT_TYPE = (
    "SELECT p.key, SUM(p.value) FROM trade_records t, json_each(t.payments) p "
    "WHERE t.partner_id = ? AND t.store_id = ? AND t.business_date = ? GROUP BY p.key")


def _reopened(day: ClosedDay, due_at: dt.datetime) -> ClosedDay:
    return dataclasses.replace(day, status="RECEIVED", due_at=due_at, checked_at=None, actual=None, differences=[],
                               details=None, revision=day.revision + 1)


def _opt_text(moment: dt.datetime | None) -> str | None:
    return None if moment is None else to_utc_text(moment)


def _opt_time(text: str | None) -> dt.datetime | None:
    return None if text is None else from_utc_text(text)


def _has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    return column in {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}


def _json(value) -> str:
    return orjson.dumps(value).decode()


# Columns added after a release, as (table, column, declaration): a database made before gets them on open.
ADDED_COLUMNS = [("api_keys", "last_used_at", "TEXT"), ("batches", "changes", "TEXT"),
                 ("closed_days", "revision", "INTEGER NOT NULL DEFAULT 0"),
                 ("closed_days", "moved_out", "TEXT NOT NULL DEFAULT '[]'")]


class SqliteStorage:
    def __init__(self, data_dir: Path) -> None:
        self.db = SqliteDatabase(data_dir / "pos.sqlite3", SCHEMA)
        self._add_missing_columns()
        self._add_record_codes()

    def _add_missing_columns(self) -> None:
        with self.db.read() as db:
            missing = [added for added in ADDED_COLUMNS if not _has_column(db, *added[:2])]
        if not missing:
            return  # the usual case: no write lock taken on open
        with self.db.write() as db:  # checked again under the lock: another process may have added it
            for table, column, declaration in missing:
                if not _has_column(db, table, column):
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    def _add_record_codes(self) -> None:
        """Give a database made before them the columns payment_ids and product_lines, filled (once)."""
        def missing(db) -> list[str]:
            present = {row["name"] for row in db.execute("PRAGMA table_info(trade_records)")}
            return [name for name in RECORD_CODE_COLUMNS if name not in present]

        with self.db.read() as db:
            if not missing(db):
                return
        with self.db.write() as db:
            columns = missing(db)  # again, under the lock: another process may have done it meanwhile
            for name in columns:
                db.execute(RECORD_CODE_COLUMNS[name])
            if columns:
                db.execute(FILL_RECORD_CODES)

    # -- HQ administration ------------------------------------------------------------------------

    def add_partner(self, partner_id: str, name: str, now: dt.datetime) -> Partner:
        with self.db.write() as db:
            try:
                db.execute("INSERT INTO partners VALUES (?, ?, 1, ?)", (partner_id, name, to_utc_text(now)))
            except sqlite3.IntegrityError:
                raise AdminError(f"partner {partner_id} already exists") from None
        return Partner(partner_id, name, True, now)

    def set_partner_active(self, partner_id: str, active: bool) -> Partner:
        with self.db.write() as db:
            db.execute("UPDATE partners SET active = ? WHERE partner_id = ?", (int(active), partner_id))
        return self._require_partner(partner_id)

    def get_partner(self, partner_id: str) -> Partner | None:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM partners WHERE partner_id = ?", (partner_id,)).fetchone()
        return None if row is None else self._partner(row)

    def list_partners(self) -> list[Partner]:
        with self.db.read() as db:
            return [self._partner(row) for row in db.execute("SELECT * FROM partners ORDER BY partner_id")]

    @staticmethod
    def _partner(row) -> Partner:
        return Partner(row["partner_id"], row["name"], bool(row["active"]), from_utc_text(row["created_at"]))

    def _require_partner(self, partner_id: str) -> Partner:
        partner = self.get_partner(partner_id)
        if partner is None:
            raise AdminError(f"unknown partner {partner_id}")
        return partner

    def add_key(self, partner_id: str, key_id: str, key_hash: str, now: dt.datetime) -> ApiKeyInfo:
        self._require_partner(partner_id)
        with self.db.write() as db:
            db.execute("INSERT INTO api_keys (key_id, partner_id, key_hash, created_at) VALUES (?, ?, ?, ?)",
                       (key_id, partner_id, key_hash, to_utc_text(now)))
        return ApiKeyInfo(key_id, partner_id, now, None)

    def revoke_key(self, partner_id: str, key_id: str, now: dt.datetime) -> ApiKeyInfo:
        self._require_partner(partner_id)
        with self.db.write() as db:
            row = db.execute("SELECT * FROM api_keys WHERE partner_id = ? AND key_id = ?", (partner_id, key_id)).fetchone()
            if row is None:
                raise AdminError(f"partner {partner_id} has no key {key_id}")
            if row["revoked_at"] is not None:
                raise AdminError(f"key {key_id} is already revoked")
            db.execute("UPDATE api_keys SET revoked_at = ? WHERE key_id = ?", (to_utc_text(now), key_id))
        return ApiKeyInfo(key_id, partner_id, from_utc_text(row["created_at"]), now)

    def list_keys(self, partner_id: str) -> list[ApiKeyInfo]:
        self._require_partner(partner_id)
        with self.db.read() as db:
            rows = db.execute("SELECT key_id, partner_id, created_at, revoked_at, last_used_at FROM api_keys "
                              "WHERE partner_id = ? ORDER BY created_at, key_id", (partner_id,)).fetchall()
        return [ApiKeyInfo(r["key_id"], r["partner_id"], from_utc_text(r["created_at"]), _opt_time(r["revoked_at"]),
                           _opt_time(r["last_used_at"])) for r in rows]

    def register_stores(self, partner_id: str, store_ids: list[str], now: dt.datetime) -> None:
        self._require_partner(partner_id)
        with self.db.write() as db:
            known = self._registered_among(db, partner_id, store_ids)
            if known:
                raise AdminError(f"already registered for {partner_id}: {', '.join(sorted(known))}")
            db.executemany("INSERT INTO registered_stores VALUES (?, ?, ?)",
                           [(partner_id, store_id, to_utc_text(now)) for store_id in store_ids])

    def unregister_stores(self, partner_id: str, store_ids: list[str]) -> None:
        self._require_partner(partner_id)
        with self.db.write() as db:
            missing = set(store_ids) - self._registered_among(db, partner_id, store_ids)
            if missing:
                raise AdminError(f"not registered for {partner_id}: {', '.join(sorted(missing))}")
            db.executemany("DELETE FROM registered_stores WHERE partner_id = ? AND store_id = ?",
                           [(partner_id, store_id) for store_id in store_ids])

    def registered_stores(self, partner_id: str) -> list[str]:
        self._require_partner(partner_id)
        with self.db.read() as db:
            rows = db.execute("SELECT store_id FROM registered_stores WHERE partner_id = ? ORDER BY store_id",
                              (partner_id,)).fetchall()
        return [row[0] for row in rows]

    @staticmethod
    def _registered_among(db, partner_id: str, store_ids) -> set[str]:
        ids = list(set(store_ids))
        found: set[str] = set()
        for start in range(0, len(ids), 500):  # stay under SQLite's bound-parameter limit
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(row[0] for row in db.execute(
                f"SELECT store_id FROM registered_stores WHERE partner_id = ? AND store_id IN ({marks})",
                (partner_id, *chunk)))
        return found

    def set_payment_direction(self, partner_id: str, payment_type: str, direction: int) -> None:
        self._require_partner(partner_id)
        with self.db.write() as db:
            db.execute("INSERT INTO payment_directions VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET direction = excluded.direction",
                       (partner_id, payment_type, direction))

    def payment_directions(self, partner_id: str) -> dict[str, int]:
        with self.db.read() as db:
            rows = db.execute("SELECT payment_type, direction FROM payment_directions WHERE partner_id = ?",
                              (partner_id,)).fetchall()
        return {row[0]: row[1] for row in rows}

    def delete_payment_direction(self, partner_id: str, payment_type: str) -> bool:
        self._require_partner(partner_id)
        with self.db.write() as db:
            cursor = db.execute("DELETE FROM payment_directions WHERE partner_id = ? AND payment_type = ?",
                                (partner_id, payment_type))
            return cursor.rowcount == 1

    # -- request admission ------------------------------------------------------------------------

    def find_key(self, key_hash: str) -> KeyOwner | None:
        with self.db.read() as db:
            row = db.execute(
                "SELECT k.key_id, k.key_hash, k.revoked_at, k.last_used_at, p.* FROM api_keys k "
                "JOIN partners p ON p.partner_id = k.partner_id WHERE k.key_hash = ?", (key_hash,)).fetchone()
        if row is None:
            return None
        return KeyOwner(self._partner(row), row["key_id"], row["key_hash"], row["revoked_at"] is not None,
                        _opt_time(row["last_used_at"]))

    def record_key_use(self, key_hash: str, hour: dt.datetime) -> None:
        with self.db.write() as db:
            db.execute("UPDATE api_keys SET last_used_at = ? WHERE key_hash = ? "
                       "AND (last_used_at IS NULL OR last_used_at < ?)", (to_utc_text(hour), key_hash, to_utc_text(hour)))

    def unregistered(self, partner_id: str, store_ids: set[str]) -> set[str]:
        with self.db.read() as db:
            return set(store_ids) - self._registered_among(db, partner_id, store_ids)

    def count_request(self, partner_id: str, window_start: int) -> int:
        with self.db.write() as db:
            count = db.execute(
                "INSERT INTO request_counts VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1 "
                "RETURNING count", (partner_id, window_start)).fetchone()[0]
            if count == 1:  # first request of a new window: forget the old ones
                db.execute("DELETE FROM request_counts WHERE partner_id = ? AND window_start < ?",
                           (partner_id, window_start))
        return count

    def ping(self) -> None:
        with self.db.read() as db:
            db.execute("SELECT 1").fetchone()

    # -- batches ----------------------------------------------------------------------------------

    def find_batch(self, partner_id: str, batch_id: str) -> BatchMarker | None:
        with self.db.read() as db:
            return self._find_batch(db, partner_id, batch_id)

    @staticmethod
    def _find_batch(db, partner_id: str, batch_id: str) -> BatchMarker | None:
        row = db.execute("SELECT * FROM batches WHERE partner_id = ? AND batch_id = ?", (partner_id, batch_id)).fetchone()
        if row is None:
            return None
        return BatchMarker(
            row["partner_id"], row["batch_id"], row["kind"], row["record_count"], row["body_digest"],
            from_utc_text(row["received_at"]), row["store_id"],
            None if row["business_date"] is None else dt.date.fromisoformat(row["business_date"]),
            row["batch_seq"], RecordChanges.from_json(None if row["changes"] is None else orjson.loads(row["changes"])))

    def _claim(self, db, marker: BatchMarker, received: BatchMarker | None = None) -> BatchMarker | None:
        """Inside the batch's transaction: the stored marker if the batch_id is known, else None.
        `received` is the marker rebuilt from a receipt (a close or mapping received before): a resend
        whose marker was lost, which gets its marker back."""
        existing = self._find_batch(db, marker.partner_id, marker.batch_id)
        if existing is not None:
            return existing
        self._insert_marker(db, received or marker)
        return received

    @staticmethod
    def _insert_marker(db, marker: BatchMarker) -> None:
        db.execute(
            "INSERT INTO batches (partner_id, batch_id, kind, record_count, body_digest, received_at, store_id, "
            "business_date, batch_seq, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (marker.partner_id, marker.batch_id, marker.kind, marker.record_count, marker.body_digest,
             to_utc_text(marker.received_at), marker.store_id,
             None if marker.business_date is None else marker.business_date.isoformat(), marker.batch_seq,
             None if marker.changes is None else _json(marker.changes.as_json())))

    @staticmethod
    def _close_receipt(db, partner_id: str, store_id: str, business_date: dt.date,
                       batch_id: str) -> BatchMarker | None:
        """The marker of a close the store-day received with this batch_id, rebuilt from its receipt."""
        row = db.execute("SELECT body_digest, received_at FROM close_receipts WHERE partner_id = ? AND store_id = ? "
                         "AND business_date = ? AND batch_id = ?",
                         (partner_id, store_id, business_date.isoformat(), batch_id)).fetchone()
        if row is None:
            return None
        return BatchMarker(partner_id, batch_id, "daily-close", 1, row[0], from_utc_text(row[1]), store_id,
                           business_date)

    @staticmethod
    def _mapping_receipt(db, partner_id: str, batch_id: str) -> BatchMarker | None:
        """The marker of a mapping the partner uploaded with this batch_id, rebuilt from its receipt."""
        row = db.execute("SELECT record_count, body_digest, received_at FROM mapping_receipts "
                         "WHERE partner_id = ? AND batch_id = ?", (partner_id, batch_id)).fetchone()
        if row is None:
            return None
        return BatchMarker(partner_id, batch_id, "mappings", row[0], row[1], from_utc_text(row[2]))

    def save_stores(self, marker: BatchMarker, stores: list[StoreMaster]) -> BatchMarker | None:
        with self.db.write() as db:
            existing = self._claim(db, marker)
            if existing is None:
                db.executemany(
                    "INSERT INTO stores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                    "currency = excluded.currency, country_code = excluded.country_code, "
                    "time_zone = excluded.time_zone, workday_start = excluded.workday_start, "
                    "prices_include_tax = excluded.prices_include_tax, "
                    "last_modified_us = excluded.last_modified_us, document = excluded.document "
                    "WHERE excluded.last_modified_us >= stores.last_modified_us",
                    [(marker.partner_id, s.store_id, s.currency, s.country_code, s.time_zone, s.workday_start,
                      int(s.prices_include_tax), epoch_micros(s.last_modified_at), _json(s.document)) for s in stores])
                faults.point("storage.data_written")  # the marker row is in this transaction too
            return existing

    def save_products(self, marker: BatchMarker, products: list[ProductMaster],
                      groups: list[ModifierGroupMaster]) -> BatchMarker | None:
        with self.db.write() as db:
            existing = self._claim(db, marker)
            if existing is None:
                db.executemany(
                    "INSERT INTO products VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                    "version = excluded.version, last_modified_us = excluded.last_modified_us, "
                    "document = excluded.document WHERE excluded.version > products.version "
                    "OR (excluded.version = products.version AND excluded.last_modified_us >= products.last_modified_us)",
                    [(marker.partner_id, p.product_id, p.store_id or "", p.version, epoch_micros(p.last_modified_at),
                      _json(p.document)) for p in products])
                db.executemany(
                    "INSERT INTO modifier_groups VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET document = excluded.document",
                    [(marker.partner_id, g.group_id, _json(g.document)) for g in groups])
                faults.point("storage.data_written")  # the marker row is in this transaction too
            return existing

    def replace_mapping(self, marker: BatchMarker, entries: list[dict]) -> BatchMarker | None:
        with self.db.write() as db:
            existing = self._claim(db, marker, self._mapping_receipt(db, marker.partner_id, marker.batch_id))
            if existing is None:
                db.execute("INSERT INTO mapping_receipts VALUES (?, ?, ?, ?, ?)",
                           (marker.partner_id, marker.batch_id, marker.record_count, marker.body_digest,
                            to_utc_text(marker.received_at)))
                db.execute(
                    "INSERT INTO mappings VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                    "batch_id = excluded.batch_id, updated_at = excluded.updated_at, entries = excluded.entries",
                    (marker.partner_id, marker.batch_id, to_utc_text(marker.received_at), _json(entries)))
                faults.point("storage.data_written")  # the marker row is in this transaction too
            return existing

    def save_trade_records(self, marker: BatchMarker, rows: list[TradeRecordRow]) -> SavedTradeRecords:
        with self.db.write() as db:
            existing = self._find_batch(db, marker.partner_id, marker.batch_id)
            if existing is not None:
                return SavedTradeRecords(existing)
            changes = self._record_changes(db, marker.partner_id, rows)
            # the records, then the marker with what they changed, in this one transaction
            db.executemany(
                "INSERT INTO trade_records (partner_id, trade_record_id, version, last_modified_us, store_id, "
                "business_date, source_type, item_rows, payment_rows, total_minor, tax_minor, tip_minor, "
                "payments, document, payment_ids, product_lines) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT DO UPDATE SET version = excluded.version, "
                "last_modified_us = excluded.last_modified_us, store_id = excluded.store_id, "
                "business_date = excluded.business_date, source_type = excluded.source_type, "
                "item_rows = excluded.item_rows, payment_rows = excluded.payment_rows, "
                "total_minor = excluded.total_minor, tax_minor = excluded.tax_minor, "
                "tip_minor = excluded.tip_minor, payments = excluded.payments, document = excluded.document, "
                "payment_ids = excluded.payment_ids, product_lines = excluded.product_lines "
                "WHERE excluded.version > trade_records.version OR (excluded.version = trade_records.version "
                "AND excluded.last_modified_us > trade_records.last_modified_us)",
                [(marker.partner_id, r.trade_record_id, r.version, epoch_micros(r.last_modified_at), r.store_id,
                  r.business_date.isoformat(), r.source_transaction_type, r.item_rows, r.payment_rows,
                  r.total_minor, r.tax_minor, r.tip_minor, _json(r.payments_minor), r.document_json,
                  _json(r.payment_ids), _json(r.product_lines))
                 for r in rows])
            self._insert_marker(db, dataclasses.replace(marker, changes=changes))
            faults.point("storage.data_written")  # the marker row is in this transaction too
            return SavedTradeRecords(None, changes)

    @staticmethod
    def _record_changes(db, partner_id: str, rows: list[TradeRecordRow]) -> RecordChanges:
        """Which rows the upsert's version rule lets win, and the store-days they leave, read under the
        write lock before the upsert (rows of one batch may repeat a trade_record_id: taken in order)."""
        ids = sorted({row.trade_record_id for row in rows})
        stored: dict[str, tuple[int, int, StoreDay]] = {}
        for start in range(0, len(ids), 500):  # stay under SQLite's bound-parameter limit
            chunk = ids[start:start + 500]
            for record_id, version, modified, store_id, business_date in db.execute(
                    "SELECT trade_record_id, version, last_modified_us, store_id, business_date FROM trade_records "
                    f"WHERE partner_id = ? AND trade_record_id IN ({','.join('?' * len(chunk))})", (partner_id, *chunk)):
                stored[record_id] = (version, modified, StoreDay(store_id, dt.date.fromisoformat(business_date)))
        newer, moves = 0, []
        for row in rows:
            mine = (row.version, epoch_micros(row.last_modified_at))
            here = StoreDay(row.store_id, row.business_date)
            before = stored.get(row.trade_record_id)
            if before is not None and mine <= before[:2]:
                continue
            newer += 1
            if before is not None and before[2] != here:
                moves.append(RecordMove(row.trade_record_id, before[2], here))
            stored[row.trade_record_id] = (*mine, here)
        return RecordChanges(newer, tuple(moves))

    def save_daily_close(self, marker: BatchMarker, day: ClosedDay) -> BatchMarker | None:
        with self.db.write() as db:
            received = self._close_receipt(db, marker.partner_id, day.store_id, day.business_date, marker.batch_id)
            existing = self._claim(db, marker, received)
            if existing is None:
                db.execute("INSERT INTO close_receipts VALUES (?, ?, ?, ?, ?, ?)",
                           (marker.partner_id, day.store_id, day.business_date.isoformat(), marker.batch_id,
                            marker.body_digest, to_utc_text(marker.received_at)))
                db.execute(
                    "INSERT INTO closed_days (partner_id, store_id, business_date, close_batch_id, currency, expected, "
                    "received_at, due_at, status, checked_at, actual, differences, details) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, '[]', NULL) "
                    "ON CONFLICT DO UPDATE SET close_batch_id = excluded.close_batch_id, "
                    "currency = excluded.currency, expected = excluded.expected, "
                    "received_at = excluded.received_at, due_at = excluded.due_at, status = excluded.status, "
                    "checked_at = NULL, actual = NULL, differences = '[]', details = NULL",
                    (marker.partner_id, day.store_id, day.business_date.isoformat(), day.close_batch_id, day.currency,
                     _json(day.expected), to_utc_text(day.received_at), to_utc_text(day.due_at), day.status))
                faults.point("storage.data_written")  # the marker row is in this transaction too
            return existing

    def close_received(self, partner_id: str, store_id: str, business_date: dt.date, batch_id: str) -> bool:
        with self.db.read() as db:
            return self._close_receipt(db, partner_id, store_id, business_date, batch_id) is not None

    # -- reads ------------------------------------------------------------------------------------

    def get_store(self, partner_id: str, store_id: str) -> StoreMaster | None:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM stores WHERE partner_id = ? AND store_id = ?", (partner_id, store_id)).fetchone()
        if row is None:
            return None
        return StoreMaster(row["store_id"], row["currency"], row["country_code"], row["time_zone"],
                           row["workday_start"], bool(row["prices_include_tax"]),
                           from_epoch_micros(row["last_modified_us"]),
                           orjson.loads(row["document"]))

    def get_product(self, partner_id: str, product_id: str, store_id: str | None) -> ProductMaster | None:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM products WHERE partner_id = ? AND product_id = ? AND store_key = ?",
                             (partner_id, product_id, store_id or "")).fetchone()
        if row is None:
            return None
        return ProductMaster(row["product_id"], row["store_key"] or None, row["version"],
                             from_epoch_micros(row["last_modified_us"]),
                             orjson.loads(row["document"]))

    def get_mapping(self, partner_id: str) -> Mapping:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM mappings WHERE partner_id = ?", (partner_id,)).fetchone()
        if row is None:
            return Mapping(None, None, [])
        return Mapping(row["batch_id"], from_utc_text(row["updated_at"]), orjson.loads(row["entries"]))

    def get_closed_day(self, partner_id: str, store_id: str, business_date: dt.date) -> ClosedDay | None:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM closed_days WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                             (partner_id, store_id, business_date.isoformat())).fetchone()
        return None if row is None else self._closed_day(row)

    @staticmethod
    def _closed_day(row) -> ClosedDay:
        return ClosedDay(
            row["store_id"], dt.date.fromisoformat(row["business_date"]), row["close_batch_id"], row["currency"],
            orjson.loads(row["expected"]), from_utc_text(row["received_at"]), from_utc_text(row["due_at"]),
            row["status"], _opt_time(row["checked_at"]),
            None if row["actual"] is None else orjson.loads(row["actual"]),
            orjson.loads(row["differences"]), None if row["details"] is None else orjson.loads(row["details"]),
            row["revision"], orjson.loads(row["moved_out"]))

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
                    "FROM trade_records WHERE partner_id = ? AND store_id = ? AND business_date = ?", day)
                return StoreDayTotals.of_records((*row[:6], orjson.loads(row[6])) for row in rows)
        return StoreDayTotals({row[0]: SourceTypeTotals(*row[1:]) for row in groups},
                              {row[0]: row[1] for row in payments})

    def store_day_rows(self, partner_id: str, store_id: str, business_date: dt.date) -> list[TradeRecordRow]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT trade_record_id, version, last_modified_us, source_type, item_rows, payment_rows, "
                "total_minor, tax_minor, tip_minor, payments FROM trade_records "
                "WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                (partner_id, store_id, business_date.isoformat())).fetchall()
        return [TradeRecordRow(r[0], r[1], from_epoch_micros(r[2]), store_id,
                               business_date, r[3], r[4], r[5], r[6], r[7], r[8], orjson.loads(r[9]))
                for r in rows]

    def batch_seqs(self, partner_id: str, store_id: str, business_date: dt.date) -> list[int]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT batch_seq FROM batches WHERE partner_id = ? AND store_id = ? AND business_date = ? "
                "AND kind = 'trade-records' ORDER BY batch_seq", (partner_id, store_id, business_date.isoformat()))
            return [row[0] for row in rows]

    def batches_with_seq(self, partner_id: str, store_id: str, business_date: dt.date, batch_seq: int,
                         limit: int) -> list[str]:
        # Only trade record batches have a batch_seq. Naming kind as well would make SQLite's planner
        # prefer the primary key (partner_id alone: every batch of the partner) to this covering index.
        with self.db.read() as db:
            rows = db.execute(
                "SELECT batch_id FROM batches WHERE partner_id = ? AND store_id = ? AND business_date = ? "
                "AND batch_seq = ? LIMIT ?",
                (partner_id, store_id, business_date.isoformat(), batch_seq, limit))
            return [row[0] for row in rows]

    def trade_records_by_payment_id(self, partner_id: str, payment_ids) -> dict[str, set[str]]:
        ids = sorted(set(payment_ids))
        users: dict[str, set[str]] = {}
        with self.db.snapshot() as db:
            for start in range(0, len(ids), 500):  # stay under SQLite's bound-parameter limit
                chunk = ids[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for payment_id, trade_record_id in db.execute(
                        "SELECT payment_id, trade_record_id FROM trade_record_payments "
                        f"WHERE partner_id = ? AND payment_id IN ({marks})", (partner_id, *chunk)):
                    users.setdefault(payment_id, set()).add(trade_record_id)
        return users

    def unknown_products(self, partner_id: str, store_id: str, business_date: dt.date) -> list[UnknownProduct]:
        with self.db.read() as db:
            rows = db.execute(DAY_UNKNOWN_PRODUCTS, (partner_id, store_id, business_date.isoformat())).fetchall()
        return [UnknownProduct(row[0], row[1], row[2]) for row in rows]

    def closed_days(self, partner_id: str, status: str | None = None) -> list[ClosedDay]:
        query = "SELECT * FROM closed_days WHERE partner_id = ?"
        args: tuple = (partner_id,)
        if status:
            query += " AND status = ?"
            args += (status,)
        with self.db.read() as db:
            rows = db.execute(query + " ORDER BY business_date, store_id", args).fetchall()
        return [self._closed_day(row) for row in rows]

    def days_due(self, before: dt.datetime) -> list[tuple[str, ClosedDay]]:
        with self.db.read() as db:
            rows = db.execute("SELECT * FROM closed_days WHERE status = 'RECEIVED' AND due_at < ?",
                              (to_utc_text(before),)).fetchall()
        return [(row["partner_id"], self._closed_day(row)) for row in rows]

    # -- reconciliation results -------------------------------------------------------------------

    def save_result(self, partner_id: str, day: ClosedDay) -> bool:
        with self.db.write() as db:
            cursor = db.execute(
                "UPDATE closed_days SET status = ?, checked_at = ?, actual = ?, differences = ?, details = ? "
                "WHERE partner_id = ? AND store_id = ? AND business_date = ? AND close_batch_id = ? AND revision = ?",
                (day.status, _opt_text(day.checked_at), None if day.actual is None else _json(day.actual),
                 _json(day.differences), None if day.details is None else _json(day.details),
                 partner_id, day.store_id, day.business_date.isoformat(), day.close_batch_id, day.revision))
            return cursor.rowcount == 1

    def reopen_day(self, partner_id: str, day: StoreDay, due_at: dt.datetime, moved_out: list[RecordMove],
                   checked_before: dt.datetime | None = None) -> ClosedDay | None:
        key = (partner_id, day.store_id, day.business_date.isoformat())
        with self.db.read() as db:  # the usual case, a day not closed yet, takes no write lock
            if db.execute("SELECT 1 FROM closed_days WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                          key).fetchone() is None:
                return None
        with self.db.write() as db:
            row = db.execute("SELECT * FROM closed_days WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                             key).fetchone()
            if row is None:
                return None
            closed = self._closed_day(row)
            reopen = closed.status != "RECEIVED" and (checked_before is None or closed.checked_at < checked_before)
            db.execute("UPDATE closed_days SET revision = revision + 1, moved_out = ? "
                       "WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                       (_json(merge_moved_out(closed.moved_out, day, moved_out)), *key))
            if reopen:  # the result is gone, as when a new close arrives: the day is due again
                db.execute("UPDATE closed_days SET status = 'RECEIVED', due_at = ?, checked_at = NULL, actual = NULL, "
                           "differences = '[]', details = NULL WHERE partner_id = ? AND store_id = ? "
                           "AND business_date = ?", (to_utc_text(due_at), *key))
        return _reopened(closed, due_at) if reopen else None

    def postpone(self, partner_id: str, store_id: str, business_date: dt.date, due_at: dt.datetime) -> None:
        with self.db.write() as db:
            db.execute("UPDATE closed_days SET due_at = ? WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                       (to_utc_text(due_at), partner_id, store_id, business_date.isoformat()))
