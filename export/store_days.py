"""Export reconciled store-days: a partner's over a range of business dates (`hq export`), or any given
store-days (the timer, export/checkpoint.py). One store-day at a time, whatever the period: memory holds one
day's records, and a day's files are written whole, each replacing the file of an earlier export.

A day is exported only with a result (MATCHED or MISMATCHED), and only if that result still stands once its
records are read (same close, same revision, same check): a day whose records changed meanwhile is left for
the export after its next result."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from core.ports import ExportDestination, ExportReads, MasterReads, Overview, Reconciliations
from core.records import ClosedDay, StoreDay
from export.layout import file_path
from export.pool import soon
from export.tables import Resolution, parquet_bytes, store_day_tables
from reference.codes import payment_directions_in_effect

CHECKED = ("MATCHED", "MISMATCHED")


class ExportStorage(ExportReads, Overview, Reconciliations, MasterReads, Protocol):
    """What the export reads of storage: the checked days, their closes, records, mapping and directions."""


@dataclass
class Exported:
    """What an export wrote: store-days, files, rows (of every dataset) and bytes; and the days left out
    because their records or result changed while they were read."""

    days: int = 0
    files: int = 0
    rows: int = 0
    bytes: int = 0
    changed: list[StoreDay] = field(default_factory=list)

    def add(self, other: Exported) -> None:
        self.days += other.days
        self.files += other.files
        self.rows += other.rows
        self.bytes += other.bytes
        self.changed += other.changed


# Called after each store-day: the day, and what the export wrote so far.
Progress = Callable[[StoreDay, Exported], None]

# A period is read this many business dates at a time: its list of days is bounded too, whatever the period.
DATES_PER_READ = 7


def resolution_of(storage: MasterReads, partner_id: str) -> Resolution:
    """The partner's codes as reconciliation resolves them: its mapping and payment directions in effect."""
    return Resolution(
        storage.get_mapping(partner_id).standard_code_of(),
        payment_directions_in_effect(storage.payment_directions(partner_id)),
    )


def _same_result(before: ClosedDay, after: ClosedDay | None) -> bool:
    return after is not None and (after.close_batch_id, after.revision, after.checked_at) == (
        before.close_batch_id,
        before.revision,
        before.checked_at,
    )


def export_store_day(
    storage: ExportStorage,
    destination: ExportDestination,
    partner_id: str,
    day: StoreDay,
    resolution: Resolution,
) -> Exported:
    """Write the store-day's four files, if it has a result that stands while its records are read."""
    exported = Exported()
    close = storage.get_closed_day(partner_id, day.store_id, day.business_date)
    if close is None or close.status not in CHECKED:
        return exported
    records = storage.store_day_documents(partner_id, day.store_id, day.business_date)
    tables = store_day_tables(close, records, resolution)
    if not _same_result(close, storage.get_closed_day(partner_id, day.store_id, day.business_date)):
        exported.changed.append(day)
        return exported
    # A big day's four files encoded side by side on the export's threads (decision 0117), then written in turn.
    encoding = [soon(parquet_bytes, table, table.num_rows) for table in tables.values()]
    for (dataset, table), data in zip(tables.items(), (future.result() for future in encoding), strict=True):
        destination.write(file_path(dataset, partner_id, day.store_id, day.business_date), data)
        exported.files += 1
        exported.rows += table.num_rows
        exported.bytes += len(data)
    exported.days = 1
    return exported


def export_days(
    storage: ExportStorage,
    destination: ExportDestination,
    days: list[tuple[str, StoreDay]],
    progress: Progress | None = None,
) -> Exported:
    """Export each (partner_id, store-day) of `days` in turn, resolving each partner's codes once."""
    exported = Exported()
    resolutions: dict[str, Resolution] = {}
    for partner_id, day in days:
        if partner_id not in resolutions:
            resolutions[partner_id] = resolution_of(storage, partner_id)
        exported.add(export_store_day(storage, destination, partner_id, day, resolutions[partner_id]))
        if progress is not None:
            progress(day, exported)
    return exported


def export_period(
    storage: ExportStorage,
    destination: ExportDestination,
    partner_id: str,
    first: dt.date,
    last: dt.date,
    progress: Progress | None = None,
) -> Exported:
    """Export the partner's store-days from `first` to `last` (inclusive) that have a result, by business
    date then store_id. The partner's codes are resolved once, so every day of the run reads them alike."""
    exported = Exported()
    resolution = resolution_of(storage, partner_id)
    start = first
    while start <= last:
        end = min(start + dt.timedelta(days=DATES_PER_READ - 1), last)
        for status in storage.day_statuses(partner_id, start, end):
            if status.status in CHECKED:
                day = StoreDay(status.store_id, status.business_date)
                exported.add(export_store_day(storage, destination, partner_id, day, resolution))
                if progress is not None:
                    progress(day, exported)
        start = end + dt.timedelta(days=1)
    return exported
