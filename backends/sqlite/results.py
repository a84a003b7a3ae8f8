"""Reconciliation results in the storage database: a result is saved only while the close it checked is
still the day's latest (same close, same revision); a closed day whose records changed afterwards is
reopened (due again, its result dropped); a day's due time is postponed."""

from __future__ import annotations

import dataclasses
import datetime as dt

from backends.sqlite.database import SqliteDatabase
from backends.sqlite.rows import closed_day_of, to_json
from core.clock import to_utc_text, to_utc_text_or_none
from core.records import ClosedDay, RecordMove, StoreDay, merge_moved_out, result_is_stale


def _reopened(day: ClosedDay, due_at: dt.datetime) -> ClosedDay:
    return dataclasses.replace(
        day,
        status="RECEIVED",
        due_at=due_at,
        checked_at=None,
        actual=None,
        differences=[],
        details=None,
        revision=day.revision + 1,
    )


class SqliteResults:
    db: SqliteDatabase

    def save_result(self, partner_id: str, day: ClosedDay, replacing: ClosedDay | None = None) -> bool:
        result_read = "" if replacing is None else " AND checked_at IS ?"
        with self.db.write() as db:
            cursor = db.execute(
                "UPDATE closed_days SET status = ?, checked_at = ?, actual = ?, differences = ?, details = ? "
                "WHERE partner_id = ? AND store_id = ? AND business_date = ? AND close_batch_id = ? AND revision = ?"
                + result_read,
                (
                    day.status,
                    to_utc_text_or_none(day.checked_at),
                    None if day.actual is None else to_json(day.actual),
                    to_json(day.differences),
                    None if day.details is None else to_json(day.details),
                    partner_id,
                    day.store_id,
                    day.business_date.isoformat(),
                    day.close_batch_id,
                    day.revision,
                    *(() if replacing is None else (to_utc_text_or_none(replacing.checked_at),)),
                ),
            )
            return cursor.rowcount == 1

    def reopen_day(
        self,
        partner_id: str,
        day: StoreDay,
        due_at: dt.datetime,
        moved_out: list[RecordMove],
        checked_before: dt.datetime | None = None,
    ) -> ClosedDay | None:
        key = (partner_id, day.store_id, day.business_date.isoformat())
        with self.db.read() as db:  # the usual case, a day not closed yet, takes no write lock
            if (
                db.execute(
                    "SELECT 1 FROM closed_days WHERE partner_id = ? AND store_id = ? AND business_date = ?", key
                ).fetchone()
                is None
            ):
                return None
        with self.db.write() as db:
            row = db.execute(
                "SELECT * FROM closed_days WHERE partner_id = ? AND store_id = ? AND business_date = ?", key
            ).fetchone()
            if row is None:
                return None
            closed = closed_day_of(row)
            reopen = result_is_stale(closed, checked_before)
            db.execute(
                "UPDATE closed_days SET revision = revision + 1, moved_out = ? "
                "WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                (to_json(merge_moved_out(closed.moved_out, day, moved_out)), *key),
            )
            if reopen:  # the result is gone, as when a new close arrives: the day is due again
                db.execute(
                    "UPDATE closed_days SET status = 'RECEIVED', due_at = ?, checked_at = NULL, actual = NULL, "
                    "differences = '[]', details = NULL WHERE partner_id = ? AND store_id = ? "
                    "AND business_date = ?",
                    (to_utc_text(due_at), *key),
                )
        return _reopened(closed, due_at) if reopen else None

    def postpone(self, partner_id: str, store_id: str, business_date: dt.date, due_at: dt.datetime) -> None:
        with self.db.write() as db:
            db.execute(
                "UPDATE closed_days SET due_at = ? WHERE partner_id = ? AND store_id = ? AND business_date = ?",
                (to_utc_text(due_at), partner_id, store_id, business_date.isoformat()),
            )
