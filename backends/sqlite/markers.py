"""Batch markers, and the opening every batch write shares (`write_batch`): a batch_id seen before writes
nothing and answers with its marker; a new batch's rows and its marker commit in one transaction, so a
crash never leaves half a batch, and the marker's primary key makes a concurrent resend lose cleanly."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable
from typing import NamedTuple

import orjson

from backends.sqlite.database import SqliteDatabase
from backends.sqlite.rows import to_json
from core import faults
from core.clock import from_utc_text, to_utc_text
from core.kept_warnings import kept_warnings_json, kept_warnings_of
from core.records import BatchMarker, RecordChanges


class BatchWritten(NamedTuple):
    existing: BatchMarker | None  # the marker already stored: nothing was written
    changes: RecordChanges | None = None  # what the rows changed, for the batches that say (trade records)


def write_batch(
    database: SqliteDatabase,
    marker: BatchMarker,
    write_rows: Callable[[sqlite3.Connection], RecordChanges | None],
    receipt: Callable[[sqlite3.Connection], BatchMarker | None] | None = None,
) -> BatchWritten:
    """One batch write, in one transaction under the write lock. A batch_id already stored answers with
    its marker and writes nothing. `receipt` finds a batch received before whose marker was lost (a close
    or a mapping, rebuilt from its receipt): it gets its marker back and writes nothing either. Otherwise
    `write_rows` writes the rows, and the marker commits with them, carrying the changes it returns."""
    with database.write() as db:
        existing = find_marker(db, marker.partner_id, marker.batch_id)
        if existing is None and receipt is not None:
            existing = receipt(db)
            if existing is not None:
                insert_marker(db, existing)
        if existing is not None:
            return BatchWritten(existing)
        changes = write_rows(db)
        insert_marker(db, marker if changes is None else marker.with_changes(changes))
        faults.point("storage.data_written")  # the marker row is in this transaction too
        return BatchWritten(None, changes)


def find_marker(db: sqlite3.Connection, partner_id: str, batch_id: str) -> BatchMarker | None:
    row = db.execute("SELECT * FROM batches WHERE partner_id = ? AND batch_id = ?", (partner_id, batch_id)).fetchone()
    return None if row is None else marker_of(row)


def marker_of(row: sqlite3.Row) -> BatchMarker:
    """A row of `batches` (every column) as its marker."""
    return BatchMarker(
        row["partner_id"],
        row["batch_id"],
        row["kind"],
        row["record_count"],
        row["body_digest"],
        from_utc_text(row["received_at"]),
        row["store_id"],
        None if row["business_date"] is None else dt.date.fromisoformat(row["business_date"]),
        row["batch_seq"],
        RecordChanges.from_json(None if row["changes"] is None else orjson.loads(row["changes"])),
        warnings_of(row["warnings"]),
        kept_warnings_of(None if row["answer"] is None else orjson.loads(row["answer"])),
        row["meaning_digest"],
    )


def warnings_of(text: str | None) -> dict[str, int]:
    """A marker's warnings by code, as stored (JSON); none for a marker stored before they were kept."""
    return {} if text is None else orjson.loads(text)


def insert_marker(db: sqlite3.Connection, marker: BatchMarker) -> None:
    db.execute(
        "INSERT INTO batches (partner_id, batch_id, kind, record_count, body_digest, received_at, store_id, "
        "business_date, batch_seq, changes, warnings, answer, meaning_digest) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            marker.partner_id,
            marker.batch_id,
            marker.kind,
            marker.record_count,
            marker.body_digest,
            to_utc_text(marker.received_at),
            marker.store_id,
            None if marker.business_date is None else marker.business_date.isoformat(),
            marker.batch_seq,
            None if marker.changes is None else to_json(marker.changes.as_json()),
            to_json(marker.warnings) if marker.warnings else None,
            None if marker.answer is None else to_json(kept_warnings_json(marker.answer)),
            marker.meaning_digest,
        ),
    )


def close_receipt(
    db: sqlite3.Connection, partner_id: str, store_id: str, business_date: dt.date, batch_id: str
) -> BatchMarker | None:
    """The marker of a close the store-day received with this batch_id, rebuilt from its receipt."""
    row = db.execute(
        "SELECT body_digest, received_at FROM close_receipts WHERE partner_id = ? AND store_id = ? "
        "AND business_date = ? AND batch_id = ?",
        (partner_id, store_id, business_date.isoformat(), batch_id),
    ).fetchone()
    if row is None:
        return None
    return BatchMarker(partner_id, batch_id, "daily-close", 1, row[0], from_utc_text(row[1]), store_id, business_date)


def mapping_receipt(db: sqlite3.Connection, partner_id: str, batch_id: str) -> BatchMarker | None:
    """The marker of a mapping the partner uploaded with this batch_id, rebuilt from its receipt."""
    row = db.execute(
        "SELECT record_count, body_digest, received_at FROM mapping_receipts WHERE partner_id = ? AND batch_id = ?",
        (partner_id, batch_id),
    ).fetchone()
    if row is None:
        return None
    return BatchMarker(partner_id, batch_id, "mappings", row[0], row[1], from_utc_text(row[2]))
