"""The storage database's tables and the migrations a database made by an earlier release gets on open.

`open_database` is the one way in: it creates what is missing (every statement is IF NOT EXISTS) and adds
the columns later releases introduced, taking the write lock only when there is something to add.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from backends.sqlite.database import SqliteDatabase

SCHEMA = """
CREATE TABLE IF NOT EXISTS partners (
    partner_id TEXT PRIMARY KEY, name TEXT NOT NULL, active INTEGER NOT NULL, created_at TEXT NOT NULL,
    rate_limit_per_minute INTEGER);
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY, partner_id TEXT NOT NULL REFERENCES partners(partner_id),
    key_hash TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL, revoked_at TEXT, last_used_at TEXT);
CREATE INDEX IF NOT EXISTS api_keys_by_partner ON api_keys(partner_id);
-- The OAuth 2.0 clients whose bearer tokens speak for a partner (`hq partner client add`): one partner each, per
-- issuer ('' for a client mapped before mappings named their issuer, moved here from partner_clients).
CREATE TABLE IF NOT EXISTS issuer_clients (
    issuer TEXT NOT NULL, client_id TEXT NOT NULL, partner_id TEXT NOT NULL REFERENCES partners(partner_id),
    added_at TEXT NOT NULL, PRIMARY KEY (issuer, client_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS issuer_clients_by_partner ON issuer_clients(partner_id);
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
    store_id TEXT, business_date TEXT, batch_seq INTEGER, changes TEXT, warnings TEXT, answer TEXT,
    meaning_digest TEXT, PRIMARY KEY (partner_id, batch_id)) WITHOUT ROWID;
-- A store-day's batches (batch_seqs), and those with one batch_seq (batches_with_seq, read before each
-- batch of trade records is accepted); it replaces batches_by_day, its prefix, in databases made before it.
CREATE INDEX IF NOT EXISTS batches_by_day_seq ON batches(partner_id, store_id, business_date, batch_seq)
    WHERE store_id IS NOT NULL;
DROP INDEX IF EXISTS batches_by_day;
CREATE TABLE IF NOT EXISTS sweeps (name TEXT PRIMARY KEY, at TEXT NOT NULL) WITHOUT ROWID;
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
-- Reconciliation sums a store-day from this index alone (it covers every column it reads, and its GROUP BY
-- source_type follows the index's order). trade_record_id right after source_type puts a batch's entries
-- at the end of each source_type's run when ids grow (ticket numbers), instead of all over the day's range:
-- at a store-day's 21st batch the store's CPU fell by about a quarter (decision 0061).
-- It replaces trade_records_day_totals (the same columns without trade_record_id) and
-- trade_records_by_day (partner, store, date) in databases made before it.
CREATE INDEX IF NOT EXISTS trade_records_day_by_type ON trade_records(partner_id, store_id, business_date,
    source_type, trade_record_id, item_rows, payment_rows, total_minor, tax_minor, tip_minor, payments);
DROP INDEX IF EXISTS trade_records_day_totals;
DROP INDEX IF EXISTS trade_records_by_day;
-- Which trade records use a payment_id (payment_id is unique within the partner, spec 2): the payment_ids
-- of each record's latest version, kept in step by save_trade_records (backends/sqlite/payment_index.py).
-- Two triggers on trade_records kept it before (a json_each per row written); databases made then lose them.
CREATE TABLE IF NOT EXISTS trade_record_payments (
    partner_id TEXT NOT NULL, payment_id TEXT NOT NULL, trade_record_id TEXT NOT NULL,
    PRIMARY KEY (partner_id, payment_id, trade_record_id)) WITHOUT ROWID;
DROP TRIGGER IF EXISTS trade_record_payments_on_insert;
DROP TRIGGER IF EXISTS trade_record_payments_on_update;
CREATE TABLE IF NOT EXISTS closed_days (
    partner_id TEXT NOT NULL, store_id TEXT NOT NULL, business_date TEXT NOT NULL,
    close_batch_id TEXT NOT NULL, currency TEXT NOT NULL, expected TEXT NOT NULL,
    received_at TEXT NOT NULL, due_at TEXT NOT NULL, status TEXT NOT NULL,
    checked_at TEXT, actual TEXT, differences TEXT NOT NULL, details TEXT,
    revision INTEGER NOT NULL DEFAULT 0, moved_out TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (partner_id, store_id, business_date)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS closed_days_due ON closed_days(status, due_at);
-- HQ's dashboard reads a partner's closes over a range of business dates (Overview.day_statuses).
CREATE INDEX IF NOT EXISTS closed_days_by_date ON closed_days(partner_id, business_date);
-- The export's timer reads the closes checked since its checkpoint, across partners (ExportReads.days_checked).
CREATE INDEX IF NOT EXISTS closed_days_checked ON closed_days(checked_at) WHERE checked_at IS NOT NULL;
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
# stored record's document (the record as received), and the payment_ids indexed in trade_record_payments.
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
    "WHERE json_valid(document)"
)
INDEX_RECORD_PAYMENT_IDS = (
    "INSERT OR IGNORE INTO trade_record_payments "
    "SELECT t.partner_id, p.value, t.trade_record_id FROM trade_records t, json_each(t.payment_ids) p"
)


# Columns added after a release, as (table, column, declaration): a database made before gets them on open.
ADDED_COLUMNS = [
    ("partners", "rate_limit_per_minute", "INTEGER"),
    ("api_keys", "last_used_at", "TEXT"),
    ("batches", "changes", "TEXT"),
    ("batches", "warnings", "TEXT"),
    ("batches", "answer", "TEXT"),
    ("batches", "meaning_digest", "TEXT"),
    ("closed_days", "revision", "INTEGER NOT NULL DEFAULT 0"),
    ("closed_days", "moved_out", "TEXT NOT NULL DEFAULT '[]'"),
    ("trade_records", "batch_id", "TEXT"),  # the batch that brought the version stored (decision 0096)
]

# Indexes over added columns, made once the columns are there. HQ's dashboard sums a partner's trade record
# batches over a range of business dates (Overview.received_days) from this index alone: it covers every
# column the sums read (kind too: SQLite does not count a partial index's condition as a column it holds),
# and holds only trade record batches (the queries name kind to use it).
INDEXES_OVER_ADDED_COLUMNS = [
    "CREATE INDEX IF NOT EXISTS trade_batches_by_date ON batches(partner_id, business_date, store_id, "
    "record_count, warnings, kind) WHERE kind = 'trade-records'",
]


def open_database(data_dir: Path) -> SqliteDatabase:
    """The storage database under data_dir, with today's schema."""
    db = SqliteDatabase(data_dir / "pos.sqlite3", SCHEMA)
    _add_missing_columns(db)
    _add_record_codes(db)
    _move_clients_to_issuers(db)
    with db.read() as connection:  # IF NOT EXISTS: nothing is written once they exist
        for statement in INDEXES_OVER_ADDED_COLUMNS:
            connection.execute(statement)
    return db


def _has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    return column in {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}


def _add_missing_columns(database: SqliteDatabase) -> None:
    with database.read() as db:
        missing = [added for added in ADDED_COLUMNS if not _has_column(db, *added[:2])]
    if not missing:
        return  # the usual case: no write lock taken on open
    with database.write() as db:  # checked again under the lock: another process may have added it
        for table, column, declaration in missing:
            if not _has_column(db, table, column):
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


def _move_clients_to_issuers(database: SqliteDatabase) -> None:
    """A database made before mappings named their issuer: its clients move to issuer_clients, each for any
    issuer (''), as they were (decision 0103); then partner_clients is dropped."""
    query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'partner_clients'"
    with database.read() as db:
        if db.execute(query).fetchone() is None:
            return  # the usual case: no write lock taken on open
    with database.write() as db:
        if db.execute(query).fetchone() is not None:  # again, under the lock
            db.execute(
                "INSERT OR IGNORE INTO issuer_clients SELECT '', client_id, partner_id, added_at FROM partner_clients"
            )
            db.execute("DROP TABLE partner_clients")


def _add_record_codes(database: SqliteDatabase) -> None:
    """Give a database made before them the columns payment_ids and product_lines, filled (once)."""

    def missing(db: sqlite3.Connection) -> list[str]:
        present = {row["name"] for row in db.execute("PRAGMA table_info(trade_records)")}
        return [name for name in RECORD_CODE_COLUMNS if name not in present]

    with database.read() as db:
        if not missing(db):
            return
    with database.write() as db:
        columns = missing(db)  # again, under the lock: another process may have done it meanwhile
        for name in columns:
            db.execute(RECORD_CODE_COLUMNS[name])
        if columns:
            db.execute(FILL_RECORD_CODES)
            db.execute(INDEX_RECORD_PAYMENT_IDS)
