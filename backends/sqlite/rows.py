"""Rows of the storage database read back as the ports' data shapes, and values written as JSON text:
the conversions more than one concern of the adapter needs."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from typing import TypeVar

import orjson

from core.clock import from_epoch_micros, from_utc_text, from_utc_text_or_none
from core.records import ClosedDay, Partner, StoreDay, StoredVersion, StoreMaster
from core.versions import Version

T = TypeVar("T")


def to_json(value: object) -> str:
    return orjson.dumps(value).decode()


def partner_of(row: sqlite3.Row) -> Partner:
    return Partner(
        row["partner_id"],
        row["name"],
        bool(row["active"]),
        from_utc_text(row["created_at"]),
        row["rate_limit_per_minute"],
    )


def store_of(row: sqlite3.Row) -> StoreMaster:
    return StoreMaster(
        row["store_id"],
        row["currency"],
        row["country_code"],
        row["time_zone"],
        row["workday_start"],
        bool(row["prices_include_tax"]),
        from_epoch_micros(row["last_modified_us"]),
        orjson.loads(row["document"]),
    )


def closed_day_of(row: sqlite3.Row) -> ClosedDay:
    return ClosedDay(
        row["store_id"],
        dt.date.fromisoformat(row["business_date"]),
        row["close_batch_id"],
        row["currency"],
        orjson.loads(row["expected"]),
        from_utc_text(row["received_at"]),
        from_utc_text(row["due_at"]),
        row["status"],
        from_utc_text_or_none(row["checked_at"]),
        None if row["actual"] is None else orjson.loads(row["actual"]),
        orjson.loads(row["differences"]),
        None if row["details"] is None else orjson.loads(row["details"]),
        row["revision"],
        orjson.loads(row["moved_out"]),
    )


def in_chunks(values: Sequence[T], size: int = 500) -> Iterator[tuple[Sequence[T], str]]:
    """Values in slices that stay under SQLite's bound-parameter limit, with the `?, ?, ...` for each."""
    for start in range(0, len(values), size):
        chunk = values[start : start + size]
        yield chunk, ",".join("?" * len(chunk))


def stored_versions(
    db: sqlite3.Connection, partner_id: str, trade_record_ids: Collection[str]
) -> dict[str, StoredVersion]:
    """The latest stored version and store-day of each of the partner's trade_record_ids that is stored."""
    stored: dict[str, StoredVersion] = {}
    for chunk, marks in in_chunks(sorted(set(trade_record_ids))):
        for record_id, version, modified, store_id, business_date in db.execute(
            "SELECT trade_record_id, version, last_modified_us, store_id, business_date FROM trade_records "
            f"WHERE partner_id = ? AND trade_record_id IN ({marks})",
            (partner_id, *chunk),
        ):
            stored[record_id] = StoredVersion(
                Version(version, modified), StoreDay(store_id, dt.date.fromisoformat(business_date))
            )
    return stored
