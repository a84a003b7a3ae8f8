"""The hot store's retention of store-days (TRADE_RECORD_RETENTION_DAYS): which business dates it still
holds, and when Cosmos DB lets a store-day's items expire. Pure date arithmetic, in UTC, shared by the
ingest check, reconciliation, the retire use case and the Cosmos DB adapter (decision 0086)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol

# The fewest days a retention may keep: the export timer must have run on a store-day (and late
# versions and resends after a store's outage must have arrived) before it leaves the hot store.
MIN_RETENTION_DAYS = 7

# Cosmos DB lets a retired store-day's items expire this many days after it is retired: the export timer
# gets two more runs at a day that it could not yet read (decision 0086).
EXPIRY_GRACE_DAYS = 2

_DAY_SECONDS = 86_400
_EPOCH_DAY = dt.date(1970, 1, 1).toordinal()


class Retention(Protocol):
    """How many days past its business date the hot store keeps a store-day's records (0: for good). A
    property of the storage it is opened with: the use cases ask it which days it still holds."""

    retention_days: int


def first_kept_date(today: dt.date, retention_days: int) -> dt.date | None:
    """The oldest business date still held (a store-day of `today` minus N days is kept); None: every one."""
    if retention_days <= 0:
        return None
    return today - dt.timedelta(days=retention_days)


def is_retired(business_date: dt.date, today: dt.date, retention_days: int) -> bool:
    """Whether the store-day is past the retention: older than today (UTC) minus N days."""
    first = first_kept_date(today, retention_days)
    return first is not None and business_date < first


def expiry_seconds(business_date: dt.date, now: dt.datetime, retention_days: int) -> int | None:
    """Cosmos DB's `ttl` of an item written now for the store-day: the seconds until midnight UTC that
    starts the EXPIRY_GRACE_DAYS-th day after the day is retired, at least 1; None when retention is off.
    Reckoned from the moment of writing, as Cosmos DB counts ttl from an item's last write."""
    if retention_days <= 0:
        return None
    expires_day = business_date.toordinal() + retention_days + 1 + EXPIRY_GRACE_DAYS - _EPOCH_DAY
    return max(1, expires_day * _DAY_SECONDS - int(now.timestamp()))


@dataclass(frozen=True)
class HeldDay:
    """A store-day that still holds trade records or trade record batches, with its close's status and
    when its result was checked (both None: never closed)."""

    partner_id: str
    store_id: str
    business_date: dt.date
    status: str | None
    checked_at: dt.datetime | None
