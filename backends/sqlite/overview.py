"""HQ's dashboard reads from the storage database (core.ports.Overview): a partner's store-days over a range
of business dates, summed in SQL from the trade record batch markers (index trade_batches_by_date) and read
from the closes (index closed_days_by_date), so a read is bounded by the partner and the range, never by
the partner's history; a store-day's batches; the partner's stores; and when the overdue sweep last ran."""

from __future__ import annotations

import datetime as dt

import orjson

from backends.sqlite.database import SqliteDatabase
from backends.sqlite.markers import marker_of
from backends.sqlite.rows import store_of
from core.clock import from_utc_text, from_utc_text_or_none, to_utc_text
from core.records import BatchMarker, DayStatus, ReceivedDay, StoreMaster

# Both name kind, which the partial index trade_batches_by_date requires, and read nothing beyond it.
RECEIVED_BY_DAY = (
    "SELECT business_date, store_id, COUNT(*), SUM(record_count) FROM batches "
    "WHERE partner_id = ? AND kind = 'trade-records' AND business_date BETWEEN ? AND ? "
    "GROUP BY business_date, store_id ORDER BY business_date, store_id"
)
WARNINGS_BY_DAY = (
    "SELECT b.business_date, b.store_id, w.key, SUM(w.value) FROM batches b, json_each(b.warnings) w "
    "WHERE b.partner_id = ? AND b.kind = 'trade-records' AND b.business_date BETWEEN ? AND ? "
    "AND b.warnings IS NOT NULL GROUP BY 1, 2, 3"
)

# The one sweep there is: the overdue closes' (reconcile.service.sweep).
OVERDUE_SWEEP = "overdue-closes"


class SqliteOverview:
    db: SqliteDatabase

    def received_days(self, partner_id: str, first: dt.date, last: dt.date) -> list[ReceivedDay]:
        span = (partner_id, first.isoformat(), last.isoformat())
        with self.db.snapshot() as db:  # the counts and the warnings from the same state
            days = db.execute(RECEIVED_BY_DAY, span).fetchall()
            warnings: dict[tuple[str, str], dict[str, int]] = {}
            for business_date, store_id, code, count in db.execute(WARNINGS_BY_DAY, span):
                warnings.setdefault((business_date, store_id), {})[code] = count
        return [
            ReceivedDay(store_id, dt.date.fromisoformat(business_date), batches, records, warnings.get(day, {}))
            for business_date, store_id, batches, records in days
            for day in [(business_date, store_id)]
        ]

    def day_statuses(self, partner_id: str, first: dt.date, last: dt.date) -> list[DayStatus]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT store_id, business_date, status, received_at, due_at, checked_at, differences "
                "FROM closed_days WHERE partner_id = ? AND business_date BETWEEN ? AND ? "
                "ORDER BY business_date, store_id",
                (partner_id, first.isoformat(), last.isoformat()),
            ).fetchall()
        return [
            DayStatus(
                row[0],
                dt.date.fromisoformat(row[1]),
                row[2],
                from_utc_text(row[3]),
                from_utc_text(row[4]),
                from_utc_text_or_none(row[5]),
                orjson.loads(row[6]),
            )
            for row in rows
        ]

    def store_day_batches(self, partner_id: str, store_id: str, business_date: dt.date) -> list[BatchMarker]:
        with self.db.read() as db:
            rows = db.execute(
                "SELECT * FROM batches WHERE partner_id = ? AND store_id = ? AND business_date = ? "
                "AND kind = 'trade-records' ORDER BY batch_seq, received_at",
                (partner_id, store_id, business_date.isoformat()),
            ).fetchall()
        return [marker_of(row) for row in rows]

    def stores(self, partner_id: str) -> list[StoreMaster]:
        with self.db.read() as db:
            rows = db.execute("SELECT * FROM stores WHERE partner_id = ? ORDER BY store_id", (partner_id,)).fetchall()
        return [store_of(row) for row in rows]

    def record_sweep(self, at: dt.datetime) -> None:
        with self.db.write() as db:  # text in UTC sorts in time order: an earlier time changes nothing
            db.execute(
                "INSERT INTO sweeps (name, at) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET at = excluded.at WHERE excluded.at > sweeps.at",
                (OVERDUE_SWEEP, to_utc_text(at)),
            )

    def last_sweep(self) -> dt.datetime | None:
        with self.db.read() as db:
            row = db.execute("SELECT at FROM sweeps WHERE name = ?", (OVERDUE_SWEEP,)).fetchone()
        return None if row is None else from_utc_text(row[0])
