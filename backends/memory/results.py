"""Closed days and reconciliation results of the memory storage: the conditional save, reopening and
postponing a day."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt

from backends.memory.state import MemoryState, cleared
from core.records import ClosedDay, RecordMove, StoreDay, merge_moved_out, result_is_stale


class MemoryResults(MemoryState):
    # -- closed days and reconciliation results ---------------------------------------------------

    def get_closed_day(self, partner_id: str, store_id: str, business_date: dt.date) -> ClosedDay | None:
        with self._lock:
            return copy.deepcopy(self._days.get((partner_id, store_id, business_date)))

    def close_received(self, partner_id: str, store_id: str, business_date: dt.date, batch_id: str) -> bool:
        with self._lock:
            return (partner_id, store_id, business_date, batch_id) in self._close_receipts

    def closed_days(self, partner_id: str, status: str | None = None) -> list[ClosedDay]:
        with self._lock:
            days = [
                day
                for (partner, _, _), day in self._days.items()
                if partner == partner_id and (not status or day.status == status)
            ]
            return copy.deepcopy(sorted(days, key=lambda day: (day.business_date, day.store_id)))

    def days_due(self, before: dt.datetime) -> list[tuple[str, ClosedDay]]:
        with self._lock:
            return copy.deepcopy(
                [
                    (partner_id, day)
                    for (partner_id, _, _), day in self._days.items()
                    if day.status == "RECEIVED" and day.due_at < before
                ]
            )

    def save_result(self, partner_id: str, day: ClosedDay, replacing: ClosedDay | None = None) -> bool:
        with self._lock:
            key = (partner_id, day.store_id, day.business_date)
            stored = self._days.get(key)
            if stored is None or (stored.close_batch_id, stored.revision) != (day.close_batch_id, day.revision):
                return False
            if replacing is not None and stored.checked_at != replacing.checked_at:
                return False  # another run of the same close saved its result meanwhile
            self._days[key] = dataclasses.replace(
                stored,
                status=day.status,
                checked_at=day.checked_at,
                actual=copy.deepcopy(day.actual),
                differences=list(day.differences),
                details=copy.deepcopy(day.details),
            )
            return True

    def reopen_day(
        self,
        partner_id: str,
        day: StoreDay,
        due_at: dt.datetime,
        moved_out: list[RecordMove],
        checked_before: dt.datetime | None = None,
    ) -> ClosedDay | None:
        with self._lock:
            key = (partner_id, day.store_id, day.business_date)
            closed = self._days.get(key)
            if closed is None:
                return None
            reopen = result_is_stale(closed, checked_before)
            changed = dataclasses.replace(
                closed, revision=closed.revision + 1, moved_out=merge_moved_out(closed.moved_out, day, moved_out)
            )
            if reopen:  # the result is gone, as when a new close arrives: the day is due again
                changed = cleared(dataclasses.replace(changed, status="RECEIVED", due_at=due_at))
            self._days[key] = changed
            return copy.deepcopy(changed) if reopen else None

    def postpone(self, partner_id: str, store_id: str, business_date: dt.date, due_at: dt.datetime) -> None:
        with self._lock:
            key = (partner_id, store_id, business_date)
            if key in self._days:
                self._days[key] = dataclasses.replace(self._days[key], due_at=due_at)
