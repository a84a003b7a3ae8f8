"""What the Parquet export reads of the memory storage (core.ports.ExportReads): copies, as every read."""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Iterator

from backends.memory.state import MemoryState
from core.records import StoreDay, TradeRecordRow


class MemoryExportReads(MemoryState):
    def days_checked(self, after: dt.datetime | None, through: dt.datetime) -> list[tuple[str, StoreDay]]:
        with self._lock:
            days = [
                (partner_id, StoreDay(store_id, business_date))
                for (partner_id, store_id, business_date), day in self._days.items()
                if day.checked_at is not None
                and (after is None or day.checked_at > after)
                and day.checked_at <= through
            ]
        return sorted(days, key=lambda entry: (entry[0], entry[1].business_date, entry[1].store_id))

    def store_day_documents(self, partner_id: str, store_id: str, business_date: dt.date) -> Iterator[TradeRecordRow]:
        with self._lock:  # the day as it is now: a copy, so that the caller reads it outside the lock
            rows = copy.deepcopy(
                [
                    row
                    for row in self._records.get(partner_id, {}).values()
                    if row.store_id == store_id and row.business_date == business_date
                ]
            )
        yield from rows
