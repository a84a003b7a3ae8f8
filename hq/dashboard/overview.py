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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

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


class Cell(NamedTuple):
    """One store-day of the grid (its store and date are its row's and column's). A tuple: the grid
    holds tens of thousands, and the cells of store-days that received nothing are one shared value."""

    status: str  # one of STATUSES
    records: int = 0  # trade records received (every batch's record_count)
    differences: tuple[str, ...] = ()  # MISMATCHED: the fields that differ


NOTHING_RECEIVED = Cell("NOT_RECEIVED")


def cell_status(close: DayStatus | ClosedDay | None, now: dt.datetime) -> str:
    """The status a store-day shows, from its close (None: no close)."""
    if close is None:
        return "NOT_RECEIVED"
    if close.status == "RECEIVED":
        return "OVERDUE" if close.due_at < now else "RECEIVED"
    return close.status


def _cell(close: DayStatus | None, records: int, now: dt.datetime) -> Cell:
    if close is None:
        return Cell("NOT_RECEIVED", records) if records else NOTHING_RECEIVED
    status = cell_status(close, now)
    if status == "MISMATCHED":
        return Cell(status, records, tuple(close.differences))
    return Cell(status, records)


def store_days(storage: DashboardStorage, partner_id: str, dates: DateRange, now: dt.datetime) -> dict[str, list[Cell]]:
    """Every store's cells over the range (one per date), by store_id sorted: the registered stores, and
    any other store that sent batches or closes in the range (unregistered since)."""
    column = {date: index for index, date in enumerate(dates.dates())}
    width = len(column)
    received: dict[str, list[int]] = {}
    for day in storage.received_days(partner_id, dates.first, dates.last):
        received.setdefault(day.store_id, [0] * width)[column[day.business_date]] = day.records
    closes: dict[str, list[DayStatus | None]] = {}
    for close in storage.day_statuses(partner_id, dates.first, dates.last):
        closes.setdefault(close.store_id, [None] * width)[column[close.business_date]] = close
    store_ids = set(storage.registered_stores(partner_id)) | set(received) | set(closes)
    nothing, no_close = [0] * width, [None] * width
    return {
        store_id: [
            _cell(close, records, now)
            for close, records in zip(closes.get(store_id, no_close), received.get(store_id, nothing), strict=True)
        ]
        for store_id in sorted(store_ids)
    }


def count(cells: Iterable[Cell]) -> dict[str, int]:
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
    The counters and the records per date count what the filters show (decision 0078: an operator who picks
    MISMATCHED sees how many, and their records)."""

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
    width = len(dates.dates())
    rows: list[tuple[str, list[Cell | None]]] = []
    for store_id, row in grid.items():
        if status is None:
            rows.append((store_id, list(row)))
        elif any(cell.status == status for cell in row):
            rows.append((store_id, [cell if cell.status == status else None for cell in row]))
    # the counters and the chart count what the filters show (decision 0078)
    records = [
        sum(cell.records for cell in column if cell is not None)
        for column in zip(*(row for _, row in rows), strict=True)
    ] or [0] * width
    counters = count(cell for _, row in rows for cell in row if cell is not None)
    return Grid(partner, dates, status, store, rows, counters, list(zip(dates.dates(), records, strict=True)))
