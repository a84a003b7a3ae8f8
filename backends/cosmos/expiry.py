"""The `ttl` of the items a store-day holds in `trade-records` (records, their index entries, batch entries)
and of its trade record batches' markers: when retention is on, they expire EXPIRY_GRACE_DAYS after the
day is retired (core/retention.py; decision 0086). Containers have defaultTtl -1,
so only items that carry a ttl expire; Cosmos DB counts it from an item's last write, so each write of an
item sets it anew."""

from __future__ import annotations

import datetime as dt

from core.clock import utc_now
from core.retention import expiry_seconds
from core.stored_json import JsonObject


class DayExpiry:
    def __init__(self, retention_days: int = 0) -> None:
        self.retention_days = retention_days

    def ttl(self, business_date: dt.date) -> int | None:
        """Seconds from now until the store-day's items expire; None when retention is off."""
        if not self.retention_days:
            return None
        return expiry_seconds(business_date, utc_now(), self.retention_days)

    def ttl_of_day(self, business_date: str) -> int | None:
        """`ttl` of an ISO date, read only when retention is on (a tombstone a moved record leaves)."""
        return self.ttl(dt.date.fromisoformat(business_date)) if self.retention_days else None


def with_ttl(item: JsonObject, ttl: int | None) -> JsonObject:
    """The item, with `ttl` when there is one (an item without it never expires)."""
    if ttl is not None:
        item["ttl"] = ttl
    return item
