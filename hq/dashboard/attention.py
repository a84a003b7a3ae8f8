"""The store-days that need HQ's attention now, across partners (decision 0078): the front page's list.

A store-day needs attention when its reconciliation is overdue, when it is MISMATCHED, or when no daily
close came for it although the store is live: from the store's first data (a batch or a close, in the range
or in the year before it) to yesterday. Days before a store's first data are not "not received" (the store
was not live), nor is today (its close comes after the day). MISMATCHED and OVERDUE days come first, newest
first; then a store's run of consecutive NOT_RECEIVED days as one row (since when, how many), so that a
mismatch is never listed behind a closed store's empty days (decision 0098). Each with its cause in words.
"""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from hq.dashboard.overview import Cell, DashboardStorage, DateRange, store_days

ATTENTION_STATUSES = ("OVERDUE", "MISMATCHED", "NOT_RECEIVED")
MAX_SHOWN = 200  # the list says how many more there are
LOOK_BACK = dt.timedelta(days=366)  # how far before the range a store's first data is looked for


class Attention(NamedTuple):
    partner_id: str
    store_id: str
    business_date: dt.date  # a run of NOT_RECEIVED days: its last
    status: str  # one of ATTENTION_STATUSES
    cause: str
    since: dt.date | None = None  # a run of NOT_RECEIVED days: its first
    days: int = 1  # the store-days the row stands for


def attention_counters(items: list[Attention]) -> dict[str, int]:
    """The store-days the list holds, per status (a folded row counts each of its days)."""
    counted = dict.fromkeys(ATTENTION_STATUSES, 0)
    for item in items:
        counted[item.status] += item.days
    return counted


def needs_attention(storage: DashboardStorage, dates: DateRange, now: dt.datetime) -> list[Attention]:
    """Every store-day of the range that needs attention: MISMATCHED and OVERDUE first, then the runs of
    NOT_RECEIVED days, each part newest first (then by partner and store)."""
    found: list[Attention] = []
    for partner in storage.list_partners():
        partner_id = partner.partner_id
        live_before = _stores_with_data(storage, partner_id, dates.first - LOOK_BACK, dates.first - dt.timedelta(1))
        for store_id, row in store_days(storage, partner_id, dates, now).items():
            live = store_id in live_before
            run: list[tuple[dt.date, Cell]] = []  # the store's NOT_RECEIVED days in a row, so far
            for date, cell in zip(dates.dates(), row, strict=True):
                live = live or cell.records > 0 or cell.status != "NOT_RECEIVED"
                if cell.status == "NOT_RECEIVED" and live and date < now.date():
                    run.append((date, cell))
                    continue
                found += _folded(partner_id, store_id, run)
                run = []
                if cell.status in ("OVERDUE", "MISMATCHED"):
                    found.append(Attention(partner_id, store_id, date, cell.status, cause_of(cell)))
            found += _folded(partner_id, store_id, run)
    return sorted(
        found,
        key=lambda item: (
            item.status == "NOT_RECEIVED",
            -item.business_date.toordinal(),
            item.partner_id,
            item.store_id,
        ),
    )


def _folded(partner_id: str, store_id: str, run: list[tuple[dt.date, Cell]]) -> list[Attention]:
    """A store's consecutive NOT_RECEIVED days as one row (none for an empty run)."""
    if not run:
        return []
    if len(run) == 1:
        date, cell = run[0]
        return [Attention(partner_id, store_id, date, "NOT_RECEIVED", cause_of(cell))]
    records = sum(cell.records for _, cell in run)
    since, last = run[0][0], run[-1][0]
    cause = f"no daily close for {len(run)} days, {since} to {last}" + (
        f"; {records} trade records received" if records else ": nothing received"
    )
    return [Attention(partner_id, store_id, last, "NOT_RECEIVED", cause, since, len(run))]


def _stores_with_data(storage: DashboardStorage, partner_id: str, first: dt.date, last: dt.date) -> set[str]:
    stores = {day.store_id for day in storage.received_days(partner_id, first, last)}
    return stores | {close.store_id for close in storage.day_statuses(partner_id, first, last)}


def cause_of(cell: Cell) -> str:
    """Why a store-day needs attention, in an operator's words."""
    if cell.status == "MISMATCHED":
        return "the POS's totals and HQ's differ: " + ", ".join(cell.differences)
    if cell.status == "OVERDUE":
        return "daily close received, reconciliation overdue (see Operations: queue and worker)"
    if cell.records:
        return f"no daily close; {cell.records} trade records received"
    return "nothing received: no trade records, no daily close"
