"""The floors: the least work that does the same job, measured beside the service on the same data.

- accept: orjson.loads of the body, then one SQLite transaction (WAL, the pragmas of
  backends/sqlite/database.py) inserting every record as JSON text, one row each under a primary key,
  plus the batch marker row.
- resend: orjson.loads (a batch_id can only be found by parsing the JSON), the body's SHA-256, and
  one primary-key lookup of the marker.
- reconciliation: one SQL aggregate over the integer minor-unit columns of the same rows, the
  payment total as a SUM over json_each of the payments column (see RECONCILE_FLOOR_SQL).
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import orjson

from backends.sqlite.database import CACHE_KIB

BUSY_TIMEOUT_MS = 30_000
FLOOR_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    partner_id TEXT NOT NULL, trade_record_id TEXT NOT NULL, document TEXT NOT NULL,
    PRIMARY KEY (partner_id, trade_record_id));
CREATE TABLE IF NOT EXISTS batches (
    partner_id TEXT NOT NULL, batch_id TEXT NOT NULL, body_digest TEXT NOT NULL,
    PRIMARY KEY (partner_id, batch_id)) WITHOUT ROWID;
"""


def connect(path: Path, schema: str | None = FLOOR_SCHEMA) -> sqlite3.Connection:
    """A connection as backends/sqlite/database.py opens them: autocommit, WAL, synchronous NORMAL, the same
    page cache (a minimal server would tune it too; the service's is larger than SQLite's default)."""
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    if schema:
        connection.executescript(schema)
    return connection


def accept(connection: sqlite3.Connection, body: bytes, partner_id: str = "bench") -> int:
    """Parse, then store every record as JSON text and the marker in one transaction; the record count."""
    document = orjson.loads(body)
    rows = [
        (partner_id, record["trade_record_id"], orjson.dumps(record).decode()) for record in document["trade_records"]
    ]
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany("INSERT INTO records VALUES (?, ?, ?)", rows)
        connection.execute(
            "INSERT INTO batches VALUES (?, ?, ?)", (partner_id, document["batch_id"], hashlib.sha256(body).hexdigest())
        )
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return len(rows)


def resend(connection: sqlite3.Connection, body: bytes, partner_id: str = "bench") -> bool:
    """A known batch_id answered from its marker: parse, digest, one lookup. True when known."""
    batch_id = orjson.loads(body)["batch_id"]
    digest = hashlib.sha256(body).hexdigest()
    row = connection.execute(
        "SELECT body_digest FROM batches WHERE partner_id = ? AND batch_id = ?", (partner_id, batch_id)
    ).fetchone()
    return row is not None and row[0] == digest


def reconcile_sql(revenue_source_codes: list[str], directions: dict[str, int]) -> str:
    """One statement over the store-day's rows of the service's own trade_records table.

    Counts and tax/tip are SUMs of integer columns; net sales a SUM with a CASE on the source code
    (the codes the mapping makes revenue, bound as parameters); the payment total a correlated
    SUM over json_each(payments) (payment_type -> amount in minor units) times the direction of
    the payment type (an unknown type counts 0, as the service leaves it out).
    """
    cases = " ".join(f"WHEN '{code}' THEN {direction}" for code, direction in sorted(directions.items()))
    marks = ", ".join("?" * len(revenue_source_codes)) or "NULL"
    return (
        "SELECT COUNT(*), SUM(item_rows), SUM(payment_rows), "
        f"SUM(CASE WHEN source_type IN ({marks}) THEN total_minor - tax_minor - tip_minor ELSE 0 END), "
        "SUM(tax_minor), SUM(tip_minor), "
        f"SUM((SELECT SUM(p.value * CASE p.key {cases} ELSE 0 END) FROM json_each(t.payments) p)) "
        "FROM trade_records t WHERE partner_id = ? AND store_id = ? AND business_date = ?"
    )


def reconcile_int_sql(revenue_source_codes: list[str]) -> str:
    """The same without the payment total: integer columns only (shows what json_each costs)."""
    marks = ", ".join("?" * len(revenue_source_codes)) or "NULL"
    return (
        "SELECT COUNT(*), SUM(item_rows), SUM(payment_rows), "
        f"SUM(CASE WHEN source_type IN ({marks}) THEN total_minor - tax_minor - tip_minor ELSE 0 END), "
        "SUM(tax_minor), SUM(tip_minor) "
        "FROM trade_records t WHERE partner_id = ? AND store_id = ? AND business_date = ?"
    )
