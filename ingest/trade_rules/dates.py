"""The time rules of a trade record: its business date from opened_at and the store's workday, and
closed_at while it is OPEN (ingest/trade_rules/__init__.py says how rules work)."""

from __future__ import annotations

import datetime as dt
import functools
import zoneinfo

from ingest.trade_rules.common import (
    BUSINESS_DATE_MISMATCH,
    CLOSED_AT_WHILE_OPEN,
    NEGATIVE_TYPES,
)
from ingest.wire.requests import TradeRecord
from ingest.wire.responses import BatchWarning

# --- business date --------------------------------------------------------------------------------


def business_date(
    path: str, record: TradeRecord, standard_type: str | None, store_time_zone: str | None, workday_start: str | None
) -> list[BatchWarning]:
    """BUSINESS_DATE_MISMATCH: business_date is the local date of opened_at, minus a day before workday_start.

    Skipped when the store master is unknown, and for records that may keep the business date of an
    earlier transaction (original_trade_record_id set, or a RETURN or REFUND).
    """
    if store_time_zone is None or workday_start is None:
        return []
    if record.original_trade_record_id is not None or standard_type in NEGATIVE_TYPES:
        return []
    local = record.opened_at.astimezone(_zone(store_time_zone))
    expected = derived_business_date(local, workday_start)
    if expected == record.business_date:
        return []
    before = "before" if local.time() < _clock(workday_start) else "at or after"
    return [
        BatchWarning(
            BUSINESS_DATE_MISMATCH,
            path,
            f"opened_at is {local:%Y-%m-%d %H:%M} in the store's time zone {store_time_zone}, {before} "
            f"workday_start {workday_start}, so the business date is {expected.isoformat()}; "
            f"business_date is {record.business_date.isoformat()}",
            field="business_date",
        )
    ]


def derived_business_date(local: dt.datetime, workday_start: str) -> dt.date:
    """The business date of a store-local time: its date, or the day before when before workday_start."""
    if local.time() < _clock(workday_start):  # time(): the wall clock, without the zone
        return local.date() - dt.timedelta(days=1)
    return local.date()


# The store's zone from a cache of its own: ZoneInfo's constructor looks its own cache up with more steps.
_zone = functools.lru_cache(maxsize=64)(zoneinfo.ZoneInfo)


@functools.cache
def _clock(hh_mm: str) -> dt.time:
    hours, minutes = hh_mm.split(":")
    return dt.time(int(hours), int(minutes))


# --- status -----------------------------------------------------------------------------------------


def closed_while_open(path: str, record: TradeRecord) -> list[BatchWarning]:
    """CLOSED_AT_WHILE_OPEN: closed_at is null while a transaction is OPEN (spec 2, TradeRecord)."""
    if record.status != "OPEN" or record.closed_at is None:
        return []
    return [
        BatchWarning(
            CLOSED_AT_WHILE_OPEN,
            path,
            "closed_at is set but status is OPEN; closed_at stays null while a transaction is OPEN. "
            "Send closed_at once the transaction closes, with the status it closed with",
            field="closed_at",
        )
    ]
