"""The overview's read model: each store-day's status over a range of business dates, per partner and
across partners, with counters and the trade records received per date.

Read from the storage port's Overview role only (day sums from batch markers, closes without their
totals): never a partner's records. A cell's status is one of STATUSES: a close's stored status, with
RECEIVED split by its due time (OVERDUE once past it), and NOT_RECEIVED for a store-day without a close
(records arrived, or nothing at all for a registered store).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from core.ports import Overview, PartnerAdmin
from core.records import ClosedDay, DayStatus, Partner

STATUSES = ("MATCHED", "MISMATCHED", "RECEIVED", "OVERDUE", "NOT_RECEIVED")
LETTERS = {"MATCHED": "M", "MISMATCHED": "X", "RECEIVED": "R", "OVERDUE": "O", "NOT_RECEIVED": "N"}
DEFAULT_DAYS = 30
MAX_DAYS = 366  # a year of columns at most: every read is bounded by the range


class DashboardStorage(PartnerAdmin, Overview, Protocol):
    """What the overview reads: partners, their registered stores, and the Overview role."""


class BadRequest(ValueError):
    """A query the dashboard cannot read (a bad date, an unknown status): 400."""


class NotFound(LookupError):
    """No such partner, store or page: 404."""


@dataclass(frozen=True)
class DateRange:
    first: dt.date
    last: dt.date

    def dates(self) -> list[dt.date]:
        return [self.first + dt.timedelta(days=n) for n in range((self.last - self.first).days + 1)]


def default_range(today: dt.date, days: int = DEFAULT_DAYS) -> DateRange:
    """The last `days` business dates, ending today."""
    return DateRange(today - dt.timedelta(days=days - 1), today)


def parse_date(text: str, what: str = "date") -> dt.date:
    try:
        if len(text) != 10:
            raise ValueError(text)
        return dt.date.fromisoformat(text)
    except ValueError:
        raise BadRequest(f"{what} {text!r} is not a date in the form YYYY-MM-DD") from None


def parse_range(first: str | None, last: str | None, today: dt.date) -> DateRange:
    """The range a query asks for: `to` defaults to today, `from` to DEFAULT_DAYS dates before `to`."""
    end = parse_date(last, "to") if last else today
    start = parse_date(first, "from") if first else default_range(end).first
    if start > end:
        raise BadRequest(f"from {start} is after to {end}")
    if (end - start).days + 1 > MAX_DAYS:
        raise BadRequest(f"at most {MAX_DAYS} business dates at once")
    return DateRange(start, end)


def parse_status(text: str | None) -> str | None:
    if not text:
        return None
    if text.upper() not in STATUSES:
        raise BadRequest(f"status {text!r} is not one of {', '.join(STATUSES)}")
    return text.upper()


@dataclass(frozen=True, slots=True)
class Cell:
    """One store-day of the grid."""

    store_id: str
    business_date: dt.date
    status: str  # one of STATUSES
    records: int  # trade records received (every batch's record_count)
    due_at: dt.datetime | None = None  # RECEIVED and OVERDUE: when its reconciliation is due
    differences: tuple[str, ...] = ()  # MISMATCHED: the fields that differ


def cell_status(close: DayStatus | ClosedDay | None, now: dt.datetime) -> str:
    """The status a store-day shows, from its close (None: no close)."""
    if close is None:
        return "NOT_RECEIVED"
    if close.status == "RECEIVED":
        return "OVERDUE" if close.due_at < now else "RECEIVED"
    return close.status


def store_days(storage: DashboardStorage, partner_id: str, dates: DateRange, now: dt.datetime) -> dict[str, list[Cell]]:
    """Every store's cells over the range, by store_id (sorted): the registered stores, and any other
    store that sent batches or closes in the range (unregistered since)."""
    received = {
        (day.store_id, day.business_date): day.records for day in storage.received_days(partner_id, *_ends(dates))
    }
    closes = {(day.store_id, day.business_date): day for day in storage.day_statuses(partner_id, *_ends(dates))}
    store_ids = set(storage.registered_stores(partner_id))
    store_ids.update(store for store, _ in received)
    store_ids.update(store for store, _ in closes)
    every_date = dates.dates()
    grid = {}
    for store_id in sorted(store_ids):
        row = []
        for date in every_date:
            close = closes.get((store_id, date))
            status = cell_status(close, now)
            row.append(
                Cell(
                    store_id,
                    date,
                    status,
                    received.get((store_id, date), 0),
                    close.due_at if close is not None and status in ("RECEIVED", "OVERDUE") else None,
                    tuple(close.differences) if close is not None and status == "MISMATCHED" else (),
                )
            )
        grid[store_id] = row
    return grid


def _ends(dates: DateRange) -> tuple[dt.date, dt.date]:
    return dates.first, dates.last


def count(cells) -> dict[str, int]:
    counted = Counter(cell.status for cell in cells)
    return {status: counted[status] for status in STATUSES}


@dataclass(frozen=True)
class PartnerCounters:
    partner: Partner
    stores: int
    counters: dict[str, int]


def across_partners(storage: DashboardStorage, dates: DateRange, now: dt.datetime) -> list[PartnerCounters]:
    """Each partner (by partner_id) with its stores and its store-days counted per status over the range."""
    rows = []
    for partner in sorted(storage.list_partners(), key=lambda p: p.partner_id):
        grid = store_days(storage, partner.partner_id, dates, now)
        rows.append(PartnerCounters(partner, len(grid), count(cell for row in grid.values() for cell in row)))
    return rows


@dataclass(frozen=True)
class Grid:
    """The overview of one partner. `rows` are the stores the store filter keeps; with a status filter,
    only stores that have a cell of that status, and a cell of another status is None (not shown).
    Counters count the range and the store filter, not the status filter: they say what it can pick."""

    partner: Partner
    dates: DateRange
    status: str | None
    store: str
    rows: list[tuple[str, list[Cell | None]]]
    counters: dict[str, int]
    records_per_date: list[tuple[dt.date, int]] = field(default_factory=list)


def partner_grid(
    storage: DashboardStorage,
    partner_id: str,
    dates: DateRange,
    now: dt.datetime,
    status: str | None = None,
    store: str = "",
) -> Grid:
    partner = storage.get_partner(partner_id)
    if partner is None:
        raise NotFound(f"unknown partner {partner_id}")
    wanted = store.casefold()
    grid = {
        store_id: row
        for store_id, row in store_days(storage, partner_id, dates, now).items()
        if wanted in store_id.casefold()
    }
    shown: list[Cell] = [cell for row in grid.values() for cell in row]
    records: Counter[dt.date] = Counter()
    for cell in shown:
        records[cell.business_date] += cell.records
    rows: list[tuple[str, list[Cell | None]]] = []
    for store_id, row in grid.items():
        if status is None:
            rows.append((store_id, list(row)))
        elif any(cell.status == status for cell in row):
            rows.append((store_id, [cell if cell.status == status else None for cell in row]))
    return Grid(partner, dates, status, store, rows, count(shown), [(date, records[date]) for date in dates.dates()])
