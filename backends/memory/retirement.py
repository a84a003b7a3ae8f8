"""Store-days leaving the memory storage once past the retention, in the steps SQLite takes
(backends/sqlite/retirement.py): records first, at most max_rows a step, then the day's trade record batches."""

from __future__ import annotations

import datetime as dt

from backends.memory.state import MemoryState
from core.retention import HeldDay


class MemoryRetirement(MemoryState):
    def held_days_before(self, before: dt.date) -> list[HeldDay]:
        with self._lock:
            days = {
                (marker.business_date, partner_id, marker.store_id)
                for (partner_id, _), marker in self._batches.items()
                if marker.kind == "trade-records"
                and marker.store_id is not None
                and marker.business_date is not None
                and marker.business_date < before
            }
            held = []
            for business_date, partner_id, store_id in sorted(days):
                close = self._days.get((partner_id, store_id, business_date))
                held.append(
                    HeldDay(
                        partner_id,
                        store_id,
                        business_date,
                        None if close is None else close.status,
                        None if close is None else close.checked_at,
                    )
                )
            return held

    def retire_rows(self, partner_id: str, store_id: str, business_date: dt.date, max_rows: int) -> int:
        with self._lock:
            records = self._records[partner_id]
            ids = [
                record_id
                for record_id, row in records.items()
                if (row.store_id, row.business_date) == (store_id, business_date)
            ][:max_rows]
            for record_id in ids:
                del records[record_id]
            if ids:
                return len(ids)
            batches = [
                key
                for key, marker in self._batches.items()
                if key[0] == partner_id
                and marker.kind == "trade-records"
                and (marker.store_id, marker.business_date) == (store_id, business_date)
            ][:max_rows]
            for key in batches:
                del self._batches[key]
            return len(batches)
