"""What saving a trade record tells the use case, read from the record index entry that holds its version
(record_writes.py writes it): whether the row was newer than what was stored, and the store-day it moved from."""

from __future__ import annotations

import datetime as dt
import functools

from core.records import RecordMove, StoreDay, TradeRecordRow
from core.stored_json import JsonObject

Saved = tuple[int, RecordMove | None]  # (1, its move or None) when the row was newer than what was stored


def entry_day(entry: JsonObject) -> list[str]:
    """The store-day of an entry's version: [store_id, business_date]."""
    return [entry["store_id"], entry["business_date"]]


def saved(written: JsonObject, batch_id: str, row: TradeRecordRow) -> Saved:
    """What the row changed, told by the entry that holds its version: the entry names the batch that wrote
    it and the store-day of the version it replaced, so a retry reports what its first attempt did."""
    if written.get("batch_id") != batch_id:
        return 0, None  # the same version, written by another batch: a resend under a new batch_id
    previous = moved_from(written)
    if previous is None:
        return 1, None
    return 1, RecordMove(row.trade_record_id, _day_left(*previous), _day_of_row(row.store_id, row.business_date))


def moved_from(entry: JsonObject) -> list[str] | None:
    """The store-day the entry's version replaced one of, where that was another day; None: new, or the same day."""
    previous = entry.get("previous")
    return None if previous is None or previous == entry_day(entry) else previous


# A batch's moves leave and reach a few store-days: each made once (frozen, so shared; decision 0130).
@functools.lru_cache(maxsize=1024)
def _day_left(store_id: str, business_date: str) -> StoreDay:
    return StoreDay(store_id, dt.date.fromisoformat(business_date))


@functools.lru_cache(maxsize=1024)
def _day_of_row(store_id: str, business_date: dt.date) -> StoreDay:
    return StoreDay(store_id, business_date)
