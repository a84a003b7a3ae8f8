"""The dashboard's reads of the memory storage (core.ports.Overview): store-days over a range of dates,
a store-day's batches, the partner's stores, the last sweep."""

from __future__ import annotations

import copy
import datetime as dt
from collections import Counter

from backends.memory.state import MemoryState
from core.records import BatchMarker, DayStatus, ReceivedDay, StoreMaster


class MemoryOverview(MemoryState):
    def _trade_batches(self, partner_id: str) -> list[BatchMarker]:
        return [
            marker
            for (partner, _), marker in self._batches.items()
            if partner == partner_id and marker.kind == "trade-records"
        ]

    def received_days(self, partner_id: str, first: dt.date, last: dt.date) -> list[ReceivedDay]:
        batches: Counter[tuple[dt.date, str]] = Counter()
        records: Counter[tuple[dt.date, str]] = Counter()
        warnings: dict[tuple[dt.date, str], Counter[str]] = {}
        with self._lock:
            for marker in self._trade_batches(partner_id):
                assert marker.store_id is not None and marker.business_date is not None
                if not first <= marker.business_date <= last:
                    continue
                day = (marker.business_date, marker.store_id)
                batches[day] += 1
                records[day] += marker.record_count
                warnings.setdefault(day, Counter()).update(marker.warnings)
        return [
            ReceivedDay(store_id, business_date, batches[day], records[day], dict(warnings[day]))
            for day in sorted(batches)
            for business_date, store_id in [day]
        ]

    def day_statuses(self, partner_id: str, first: dt.date, last: dt.date) -> list[DayStatus]:
        with self._lock:
            days = [
                day
                for (partner, _, business_date), day in self._days.items()
                if partner == partner_id and first <= business_date <= last
            ]
            statuses = [
                DayStatus(
                    day.store_id,
                    day.business_date,
                    day.status,
                    day.received_at,
                    day.due_at,
                    day.checked_at,
                    list(day.differences),
                )
                for day in days
            ]
        return sorted(statuses, key=lambda status: (status.business_date, status.store_id))

    def store_day_batches(self, partner_id: str, store_id: str, business_date: dt.date) -> list[BatchMarker]:
        with self._lock:
            markers = [
                marker
                for marker in self._trade_batches(partner_id)
                if marker.store_id == store_id and marker.business_date == business_date
            ]
            return copy.deepcopy(sorted(markers, key=lambda marker: (marker.batch_seq or 0, marker.received_at)))

    def stores(self, partner_id: str) -> list[StoreMaster]:
        with self._lock:
            return copy.deepcopy(
                [store for (partner, _), store in sorted(self._stores.items()) if partner == partner_id]
            )

    def record_sweep(self, at: dt.datetime) -> None:
        with self._lock:
            if self._last_sweep is None or at > self._last_sweep:
                self._last_sweep = at

    def last_sweep(self) -> dt.datetime | None:
        with self._lock:
            return self._last_sweep
