"""The store-day page's transactions (decision 0098): the day's latest records as HQ counted them, a page at
a time, by reconciliation's rule (reconcile.counted_records), filtered by source type and by "counted
differently": a record HQ counts otherwise than it may look (counting_notes: an unmapped type, a VOIDED
record of a revenue type, a payment_type without a direction), where a partner's close often differs.

Each read is bounded: a page reads at most PAGE records, and the "counted differently" filter reads at most
SCAN_PAGES pages of MAX_DAY_RECORDS_PAGE before it answers with what it found and where to go on."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol

from core.day_records import MAX_DAY_RECORDS_PAGE, DayRecordReads
from core.ports import MasterReads, Reconciliations
from hq.dashboard.overview import BadRequest
from reconcile.counted_records import CountedRecord, count, counting_rules, day_currency

PAGE = 50
SCAN_PAGES = 20
DIFFERENTLY = "differently"


class TransactionsStorage(DayRecordReads, MasterReads, Reconciliations, Protocol):
    """What the section reads: the day's records, the mapping, directions and store, the close's codes."""


@dataclass(frozen=True)
class DayTransactions:
    records: list[CountedRecord]
    currency: str | None
    types: list[str]  # the source codes a filter may pick: the mapping's and the day's result's
    source_type: str | None
    differently: bool
    after: str | None  # the cursor this page starts after (None: the first page)
    next_after: str | None  # the cursor of the next page (None: this is the last)


def day_transactions(
    storage: TransactionsStorage, partner_id: str, store_id: str, business_date: dt.date, query: dict[str, str]
) -> DayTransactions:
    source_type = query.get("type") or None
    differently = query.get("counted") == DIFFERENTLY
    after = query.get("after") or None
    currency = day_currency(storage, partner_id, store_id)
    rules = counting_rules(storage, partner_id, currency)
    found: list[CountedRecord] = []
    cursor = after
    size = MAX_DAY_RECORDS_PAGE if differently else PAGE
    for _ in range(SCAN_PAGES if differently else 1):
        try:
            page = storage.day_records(
                partner_id, store_id, business_date, limit=size, cursor=cursor, source_type=source_type
            )
        except ValueError:
            raise BadRequest("after= is not a position in this store-day's transactions") from None
        counted = [count(record, rules) for record in page.records]
        found += [record for record in counted if record["counting_notes"]] if differently else counted
        cursor = page.cursor
        if cursor is None or len(found) >= PAGE:
            break
    close = storage.get_closed_day(partner_id, store_id, business_date)
    seen = [] if close is None or close.details is None else close.details.get("source_codes", [])
    types = sorted(set(rules.standard_of) | set(seen))
    return DayTransactions(found, currency, types, source_type, differently, after, cursor)
