"""A store-day's latest trade records one by one, as HQ counts them (GET /pos/v1/trade-records, HQ's
dashboard): the shapes and the read port role. Read a page at a time, never a whole day (decision 0096)."""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass
from typing import Protocol

# The most records one read returns: a page of the trade-records read, of the dashboard's list.
MAX_DAY_RECORDS_PAGE = 500


@dataclass(frozen=True)
class DayRecord:
    """A store-day's latest version of one trade record: its narrow stored fields (amounts in minor units,
    payments summed per payment_type as sent), its status as sent and the batch that brought this version
    (None for a record stored before its batch was kept with it)."""

    trade_record_id: str
    version: int
    source_type: str
    status: str | None
    item_rows: int
    payment_rows: int
    total_minor: int
    tax_minor: int
    tip_minor: int
    payments_minor: dict[str, int]
    batch_id: str | None

    def sums(self) -> tuple[str, int, int, int, int, int, dict[str, int]]:
        """The record as StoreDayTotals.of_records takes it: reconciliation's sums of this record alone."""
        return (
            self.source_type,
            self.item_rows,
            self.payment_rows,
            self.total_minor,
            self.tax_minor,
            self.tip_minor,
            self.payments_minor,
        )


@dataclass(frozen=True)
class DayRecordsPage:
    """A page of a store-day's records; `cursor` continues after it (the adapter's own text), None at
    the end."""

    records: list[DayRecord]
    cursor: str | None


class DayRecordReads(Protocol):
    """A store-day's latest records, a page at a time (bounded by `limit`, at most MAX_DAY_RECORDS_PAGE)."""

    def day_records(
        self,
        partner_id: str,
        store_id: str,
        business_date: dt.date,
        *,
        limit: int,
        cursor: str | None = None,
        source_type: str | None = None,
    ) -> DayRecordsPage:
        """The next at most `limit` records of the store-day (only those of `source_type`, given one),
        after `cursor` (a page's cursor from this same read; None: from the start), each record once over
        the pages, in an order of the adapter's. ValueError for a cursor the adapter cannot read."""
        ...


def keyset_cursor(source_type: str, trade_record_id: str) -> str:
    """The cursor after a record, for adapters that page in (source_type, trade_record_id) order."""
    return json.dumps([source_type, trade_record_id], ensure_ascii=False)


def keyset_after(cursor: str) -> tuple[str, str]:
    """The (source_type, trade_record_id) a keyset_cursor names; ValueError for any other text."""
    try:
        source_type, trade_record_id = json.loads(cursor)
    except (TypeError, ValueError):
        raise ValueError("not a cursor of this read") from None
    if not isinstance(source_type, str) or not isinstance(trade_record_id, str):
        raise ValueError("not a cursor of this read")
    return source_type, trade_record_id


@dataclass(frozen=True)
class DayRecordsQuery:
    """A checked request for a page of a store-day's counted records (GET /trade-records, HQ's pages):
    `cursor` is the adapter's, from the continuation the previous page answered."""

    store_id: str
    business_date: dt.date
    limit: int
    cursor: str | None = None
    source_type: str | None = None


CONTINUATION_PROBLEM = "must be the continuation a page of this store-day answered"


def continuation_of(query: DayRecordsQuery, cursor: str) -> str:
    """The opaque continuation of a page: the adapter's cursor, bound to the store-day and type it pages."""
    text = json.dumps([query.store_id, query.business_date.isoformat(), query.source_type, cursor])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def cursor_of(continuation: str, store_id: str, business_date: dt.date, source_type: str | None) -> str:
    """The adapter's cursor in a continuation given for this same store-day and type; ValueError otherwise."""
    try:
        text = base64.urlsafe_b64decode(continuation + "=" * (-len(continuation) % 4)).decode()
        named_store, named_date, named_type, cursor = json.loads(text)
    except (ValueError, TypeError, UnicodeDecodeError):
        raise ValueError("not a continuation of this read") from None
    if [named_store, named_date, named_type] != [store_id, business_date.isoformat(), source_type]:
        raise ValueError("a continuation of another store-day or type")
    if not isinstance(cursor, str):
        raise ValueError("not a continuation of this read")
    return cursor
